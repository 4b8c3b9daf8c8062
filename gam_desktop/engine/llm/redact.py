"""Secrets kept out of what an LLM replies: a server (or a proxy, or a model coaxed by a
prompt injection) that echoes the API key it was sent must not put it in a reply passed
on to another app, nor in a conversation, fact or memory committed to git.

`Redactor.text` replaces each secret in a whole text. A stream is redacted as it comes with
`partial` and `pieces`: a secret may be split across two chunks, so a stream holds back a
chunk whose end could be the start of a secret until the next says whether it is, and then
redacts the chunks together (`pieces`), the label where the secret started.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gam_desktop.engine.llm.settings import LLMSettings

LABEL = "[redacted]"
# Shorter "keys" ("none", "x", "ollama") are placeholders a local server ignores; replacing
# them would mangle ordinary words of every answer.
MIN_SECRET = 8
_TEXT_FIELDS = ("content", "reasoning_content", "refusal")


class Redactor:
    """Replaces each of `secrets` (those long enough to be one) with LABEL."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        kept = {s for s in secrets if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(kept, key=len, reverse=True)  # the longest first where two overlap
        either = "|".join(re.escape(s) for s in self.secrets)
        self._pattern = re.compile(either) if self.secrets else None
        self._bytes = re.compile(either.encode()) if self.secrets else None

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
        for one already whole there)."""
        longest = 0
        for secret in self.secrets:
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
