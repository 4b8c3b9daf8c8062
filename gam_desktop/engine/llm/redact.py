"""Secrets kept out of what an LLM replies: a server (or a proxy, or a model coaxed by a
prompt injection) that echoes the API key it was sent must not put it in a reply passed
on to another app, nor in a conversation, fact or memory committed to git.

`Redactor.text` replaces each secret in a whole text; one of SPACED_MIN characters or more
also with whitespace between its characters ("sk-ADV44-S ECRET-…", a key a reply broke
over two lines), which only that key's characters in that order can be. A stream is
redacted as it comes with `partial` and `pieces`: a secret may be split across two chunks,
so a stream holds back a chunk whose end could be the start of a secret until the next
says whether it is, and then redacts the chunks together (`pieces`), the label where the
secret started.

An error built from a server's reply quotes it, and a server may quote the key there too
(an "Incorrect API key provided: Bearer sk-…" reply): `redact_error` takes the secrets out
of an exception and everything it wraps before anyone words, logs or prints it. Every
secret a Redactor is made with is also remembered for the process (`known`): the log files
and a command's traceback of a bug redact them as a last line of defence
(`RedactingFormatter`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from typing import Any

from gam_desktop.engine.llm.settings import LLMSettings

LABEL = "[redacted]"
# Shorter "keys" ("none", "x", "ollama") are placeholders a local server ignores; replacing
# them would mangle ordinary words of every answer.
MIN_SECRET = 8
# A secret this long is found with whitespace between its characters as well: a random
# key's characters in order are no phrase of anyone's (a shorter one might be).
SPACED_MIN = 16
_TEXT_FIELDS = ("content", "reasoning_content", "refusal")
_SPACE = re.compile(r"\s")


def _spaced(secret: str) -> bool:
    return len(secret) >= SPACED_MIN


def _pattern_of(secret: str) -> str:
    """The regular expression that finds `secret` (with whitespace between its characters
    when it is long enough: `SPACED_MIN`)."""
    if not _spaced(secret):
        return re.escape(secret)
    return r"\s*".join(re.escape(char) for char in secret)


def _bytes_pattern_of(secret: str) -> bytes:
    raw = secret.encode()
    if not _spaced(secret):
        return re.escape(raw)
    return rb"\s*".join(re.escape(raw[n : n + 1]) for n in range(len(raw)))


class Redactor:
    """Replaces each of `secrets` (those long enough to be one) with LABEL."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        kept = {s for s in secrets if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(kept, key=len, reverse=True)  # the longest first where two overlap
        _remember(self.secrets)
        either = "|".join(_pattern_of(s) for s in self.secrets)
        self._pattern = re.compile(either) if self.secrets else None
        either_bytes = b"|".join(_bytes_pattern_of(s) for s in self.secrets)
        self._bytes = re.compile(either_bytes) if self.secrets else None

    @classmethod
    def for_settings(cls, settings: LLMSettings, *others: str | None) -> Redactor:
        """The key `settings` sends (when one is set: not the placeholder a local server
        gets) and `others`."""
        key = settings.api_key.get_secret_value() if settings.api_key is not None else None
        return cls([key, *others])

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        return self._pattern.sub(LABEL, text) if self._pattern else text

    def data(self, data: bytes) -> bytes:
        return self._bytes.sub(LABEL.encode(), data) if self._bytes else data

    def partial(self, text: str) -> int:
        """How many characters at the end of `text` could be the start of a secret (none
        for one already whole there); whitespace in it, and after it, counts for a secret
        found with whitespace between its characters."""
        longest = 0
        for secret in self.secrets:
            if _spaced(secret):
                longest = max(longest, _spaced_start(text, secret))
                continue
            for size in range(min(len(secret) - 1, len(text)), longest, -1):
                if secret.startswith(text[-size:]):
                    longest = size
                    break
        return longest

    def pieces(self, texts: list[str]) -> list[str]:
        """`texts`, one text cut in pieces, with each secret replaced: LABEL in the piece
        where the secret starts, the rest of it taken out of the pieces after."""
        whole = "".join(texts)
        found = {m.start(): m.end() for m in self._pattern.finditer(whole)} if self._pattern else {}
        if not found:
            return list(texts)
        owner = [n for n, text in enumerate(texts) for _ in text]  # each character's piece
        out: list[list[str]] = [[] for _ in texts]
        at = 0
        while at < len(whole):
            if at in found:
                out[owner[at]].append(LABEL)
                at = found[at]
            else:
                out[owner[at]].append(whole[at])
                at += 1
        return ["".join(chars) for chars in out]


def _spaced_start(text: str, secret: str) -> int:
    """How many characters at the end of `text` are the start of `secret` with whitespace
    between (and after) its characters: fewer of its characters than it has, the first
    not whitespace; 0 for none."""
    at, seen = len(text), 0  # the window: back to where the last len(secret)-1 non-spaces begin
    while at > 0 and (seen < len(secret) - 1 or _SPACE.match(text[at - 1])):
        at -= 1
        seen += not _SPACE.match(text[at])
    for start in range(at, len(text)):
        if text[start] != secret[0]:
            continue
        tail = _SPACE.sub("", text[start:])
        if len(tail) < len(secret) and secret.startswith(tail):
            return len(text) - start
    return 0


def redact_reply(response: Any, redactor: Redactor) -> Any:
    """An SDK chat completion with the secrets out of each choice's texts and tool calls'
    arguments (changed in place, then returned)."""
    if not redactor:
        return response
    for choice in getattr(response, "choices", None) or []:
        message = getattr(choice, "message", None)
        if message is None:
            continue
        for name in _TEXT_FIELDS:
            value = getattr(message, name, None)
            if isinstance(value, str):
                setattr(message, name, redactor.text(value))
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            arguments = getattr(function, "arguments", None)
            if function is not None and isinstance(arguments, str):
                function.arguments = redactor.text(arguments)
    return response


def redact_error(exc: BaseException, redactor: Redactor) -> BaseException:
    """`exc` and every exception it wraps with the secrets out of their words (`args`, the
    SDK's `message` and `body`), in place, so that whatever quotes, logs or prints them (a
    traceback included) holds none; returns `exc`."""
    if not redactor:
        return exc
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and not any(current is e for e in seen):
        seen.append(current)
        try:
            current.args = tuple(redact_json(arg, redactor) for arg in current.args)
            for name in ("message", "body"):
                value = getattr(current, name, None)
                if isinstance(value, str | dict | list):
                    setattr(current, name, redact_json(value, redactor))
        except (AttributeError, TypeError):  # an exception that will not be changed
            pass
        current = current.__cause__ or current.__context__
    return exc


def redact_json(value: Any, redactor: Redactor) -> Any:
    """`value` with the secrets out of every string in it, keys of objects too (a copy;
    JSON-like containers walked with a stack, not recursion: a body may nest deeply)."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, bytes):
        return redactor.data(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]  # (container, key) of a value to copy
    while stack:
        holder, at = stack.pop()
        item = holder[at]
        if isinstance(item, str):
            holder[at] = redactor.text(item)
        elif isinstance(item, dict):
            copy = {redactor.text(k) if isinstance(k, str) else k: v for k, v in item.items()}
            holder[at] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, list):
            holder[at] = list(item)
            stack.extend((holder[at], n) for n in range(len(item)))
    return root[0]


# -- the secrets this process knows, for its logs -------------------------------------

_known_lock = threading.Lock()
_known: set[str] = set()
_known_pattern: re.Pattern[str] | None = None


def _remember(secrets: Iterable[str]) -> None:
    global _known_pattern
    with _known_lock:
        new = set(secrets) - _known
        if not new:
            return
        _known.update(new)
        ordered = sorted(_known, key=len, reverse=True)
        _known_pattern = re.compile("|".join(_pattern_of(s) for s in ordered))


def known(text: str) -> str:
    """`text` without any secret a Redactor of this process was made with."""
    pattern = _known_pattern
    return pattern.sub(LABEL, text) if pattern is not None else text


class RedactingFormatter(logging.Formatter):
    """A log line, its traceback included, without the secrets this process knows."""

    def format(self, record: logging.LogRecord) -> str:
        return known(super().format(record))
