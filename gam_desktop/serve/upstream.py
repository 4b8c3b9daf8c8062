"""Forwarding a chat completion to the configured LLM and passing its reply back unchanged.

The request goes out as the client wrote it (its options, tools, streaming) with two
changes: the messages carry the memory's passages and the model name is mapped. The reply
comes back as the LLM sent it (a stream line by line), secrets aside, so this speaks HTTP
itself (httpx2, which the openai SDK uses) rather than through `LLMClient`, whose job is to
parse, retry and validate replies for the engine. The endpoint and key are the engine's
`LLMSettings`.

The upstream key is sent upstream and nowhere else: a reply or an error passed back to the
client has it (and gam-serve's own token) removed wherever the upstream echoed it: in every
string of the JSON (keys too), whatever its field; a stream through a sliding window
(`_RedactedStream`) over every string of its events, as a server may stream any field in
pieces (`delta.reasoning`, the legacy `delta.function_call`, fields not invented yet), its
lines ended by CR, LF or CRLF as SSE allows. Nothing here logs a header.

What is read from the upstream is bounded: a line of a stream (MAX_LINE: a server that
never ended its line had the relay copy and split what it held at every chunk, quadratic,
the event loop busy for minutes, and gigabytes held), a reply's text kept to be saved and a
whole non-streaming reply (MAX_REPLY).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from gam_desktop.engine.api import LLMSettings, Redactor, redact_json
from gam_desktop.serve.errors import ServeError, error_body

log = logging.getLogger(__name__)
MAX_LINE = 8 * 2**20  # bytes of one line of a stream: an event is a few kilobytes
MAX_REPLY = 64 * 2**20  # bytes of a reply read whole, characters of a stream's text kept


class _LineTooLong(Exception):
    """The upstream sent a line of a stream past MAX_LINE."""


@dataclass
class Forwarded:
    """A non-streaming upstream reply: its JSON and the assistant's text in it."""

    body: dict[str, Any]
    text: str = ""


class Upstream:
    """The configured LLM, reached through one connection pool."""

    def __init__(
        self,
        settings: LLMSettings,
        model_map: dict[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        self.settings = settings
        # what no reply may carry: the key sent upstream, and `secrets` (gam-serve's token)
        self.redactor = Redactor.for_settings(settings, *secrets)
        self.model_map = model_map if model_map is not None else {"gam": settings.model}
        self._client = httpx2.AsyncClient(
            base_url=settings.base_url.rstrip("/") + "/",
            timeout=httpx2.Timeout(settings.timeout, connect=10.0),
            headers={"Authorization": f"Bearer {settings.key_value()}"},
        )

    async def close(self) -> None:
        await self._client.aclose()

    def model_for(self, requested: str | None) -> str:
        """The upstream model for the name a client asked for: mapped when configured, the
        configured model when none was given, else the client's name as it is."""
        if not requested:
            return self.settings.model
        return self.model_map.get(requested, requested)

    async def complete(self, request: dict[str, Any]) -> Forwarded:
        """A non-streaming completion: the upstream's JSON, or a ServeError."""
        sent = self._client.build_request("POST", "chat/completions", json=request)
        try:
            response = await self._client.send(sent, stream=True)
            try:
                data = await _read_within(response, MAX_REPLY)
            finally:
                await response.aclose()
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None
        if data is None:
            raise ServeError(
                502, f"The LLM answered with more than {_mb(MAX_REPLY)}; it was not read."
            )
        if response.status_code >= 400:
            raise self._refused(response.status_code, data.decode("utf-8", "replace"))
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python goes
            raise ServeError(502, "The LLM answered with something that is not JSON.") from None
        if not isinstance(body, dict):
            raise ServeError(502, "The LLM answered with something that is not a completion.")
        body = redact_json(body, self.redactor)
        return Forwarded(body, _message_text(body))

    async def stream(
        self, request: dict[str, Any], on_done: Callable[[str], None]
    ) -> AsyncIterator[bytes]:
        """A streaming completion: the upstream's lines as they come. `on_done` hears the
        whole text once the upstream has finished, before the client sees the end (so the
        turn is queued by the time the client has its answer). Errors before the first
        byte are ServeErrors."""
        sent = self._client.build_request("POST", "chat/completions", json=request)
        try:
            response = await self._client.send(sent, stream=True)
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None
        if response.status_code >= 400:
            body = (await response.aread()).decode("utf-8", "replace")
            await response.aclose()
            raise self._refused(response.status_code, body)
        return self._relay(response, on_done)

    async def _relay(
        self, response: httpx2.Response, on_done: Callable[[str], None]
    ) -> AsyncIterator[bytes]:
        # The answer is whole once the upstream says why it ended (a finish_reason) or
        # sends [DONE]; the turn is queued then, before that chunk reaches the client, and
        # not when the connection closes: a server that drops it after finishing (or never
        # sends [DONE]) has still answered. One that closes before either cut the reply
        # short, and a truncated answer is not saved as if it were whole.
        # Whole lines go to the client, secrets out (a partial line waits for its end).
        text, stream, answered = _Text(), _Lines(), False
        redacted = _RedactedStream(self.redactor)
        try:
            async for chunk in response.aiter_raw():
                lines = stream.feed(chunk)
                text.add(lines)
                if not answered and any(_ends_reply(line) for line in lines):
                    answered = True
                    self._done(text, on_done)
                if ready := b"".join(redacted.line(line) for line in lines):
                    yield ready
            last = stream.last()
            text.add(last)
            if not answered and any(_ends_reply(line) for line in last):
                self._done(text, on_done)
            yield b"".join(redacted.line(line) for line in last) + redacted.release()
        except (httpx2.HTTPError, _LineTooLong) as exc:
            if not answered:  # cut off mid-reply: the client sees an error event
                message = (
                    f"The LLM sent a line of more than {_mb(MAX_LINE)}; the reply was cut."
                    if isinstance(exc, _LineTooLong)
                    else f"The LLM stopped answering mid-reply: {type(exc).__name__}."
                )
                error = f"data: {json.dumps(error_body(502, message))}\n\n".encode()
                yield redacted.release() + error
        finally:
            await response.aclose()

    def _done(self, text: _Text, on_done: Callable[[str], None]) -> None:
        """The reply is whole: `on_done` hears its text, unless it was too long to keep."""
        said = text.value()
        if said is not None:
            on_done(self.redactor.text(said))

    def _refused(self, status: int, text: str) -> ServeError:
        """An upstream error passed on with its status and, when it is OpenAI's shape, its
        own message; the key removed wherever the upstream echoed it."""
        text = self.redactor.text(text)
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and error.get("message"):
            message, code = str(error["message"]), error.get("code")
        elif isinstance(error, str):
            message, code = error, None
        else:
            message, code = f"The LLM refused the request (HTTP {status}).", None
        if status in (401, 403):  # gam-serve's key, not the client's token: not the client's 401
            return ServeError(
                502,
                f"The LLM refused gam-serve's API key (HTTP {status}): {message}",
                "upstream_auth",
            )
        status = status if 400 <= status < 600 else 502
        return ServeError(status, f"The LLM: {message}", str(code) if code is not None else None)

    def _unreachable(self, exc: httpx2.HTTPError) -> ServeError:
        if isinstance(exc, httpx2.TimeoutException):
            return ServeError(504, f"The LLM at {self.settings.base_url} did not answer in time.")
        return ServeError(
            502, f"Cannot reach the LLM at {self.settings.base_url}: {type(exc).__name__}."
        )


def _mb(size: int) -> str:
    return f"{size / 2**20:.3g} MB"


class _Lines:
    """A stream's whole lines as its chunks come. The line under way is kept in pieces and
    joined once it ends (joined at every chunk, a line that never ended cost quadratic
    time), never past MAX_LINE."""

    def __init__(self) -> None:
        self.partial: list[bytes] = []
        self.held = 0  # bytes in `partial`

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` ends (without their ends); _LineTooLong past the limit."""
        if not chunk:
            return []
        ends_crlf = bool(self.partial) and self.partial[-1].endswith(b"\r")
        if _LINE_END.search(chunk) is None and not ends_crlf:
            self._hold(chunk)  # no line ends in it (nor a CRLF whose CR came before)
            return []
        lines, rest = _lines(b"".join(self.partial) + chunk)
        self.partial, self.held = [], 0
        self._hold(rest)
        return lines

    def _hold(self, data: bytes) -> None:
        self.partial.append(data)
        self.held += len(data)
        if self.held > MAX_LINE:
            raise _LineTooLong

    def last(self) -> list[bytes]:
        """The line left when the stream ended without ending it, if any."""
        pending = b"".join(self.partial)
        return _lines(pending + b"\n")[0] if pending else []


class _Text:
    """The text a stream's lines add, kept to be saved unless it passes MAX_REPLY
    characters (then it is passed on to the client, not saved)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.kept = True

    def add(self, lines: list[bytes]) -> None:
        if not self.kept:
            return
        added = "".join(_delta_text(line) for line in lines)
        self.parts.append(added)
        self.size += len(added)
        if self.size > MAX_REPLY:
            self.kept, self.parts = False, []
            log.warning("a streamed reply passed %d characters: passed on, not saved", MAX_REPLY)

    def value(self) -> str | None:
        return "".join(self.parts) if self.kept else None


async def _read_within(response: httpx2.Response, limit: int) -> bytes | None:
    """The reply's body (decoded, as `response.json()` reads it), or None once it passes
    `limit` bytes: a server (or a compressed reply) can send more than fits in memory."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _message_text(body: dict[str, Any]) -> str:
    try:
        content = body["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""
    return content if isinstance(content, str) else ""


def _ends_reply(line: bytes) -> bool:
    """Whether an SSE line ends the reply: [DONE], or a chunk saying why the reply ended
    ("stop", "length", …)."""
    if _is_done(line):
        return True
    line = line.strip()
    if not line.startswith(b"data:") or b"finish_reason" not in line:
        return False
    try:
        return bool(json.loads(line[5:])["choices"][0].get("finish_reason"))
    except (ValueError, RecursionError, KeyError, IndexError, TypeError, AttributeError):
        return False


def _delta_text(line: bytes) -> str:
    """The text an SSE line adds: `data: {"choices": [{"delta": {"content": "…"}}]}`."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return ""
    data = line[5:].strip()
    if data == b"[DONE]":
        return ""
    try:
        content = json.loads(data)["choices"][0]["delta"].get("content")
    except (ValueError, RecursionError, KeyError, IndexError, TypeError, AttributeError):
        return ""
    return content if isinstance(content, str) else ""


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _lines(data: bytes) -> tuple[list[bytes], bytes]:
    """The whole lines of `data`, without their ends (CRLF, LF or a CR alone: SSE's three),
    and what follows the last one. A CR at the very end waits with it: it may be the first
    half of a CRLF whose LF has not come yet."""
    end = len(data) - 1 if data.endswith(b"\r") else len(data)
    *lines, rest = _LINE_END.split(data[:end])
    return lines, rest + data[end:]


_Path = tuple[Any, ...]  # where a string is in the stream's events (see _strings)


@dataclass(eq=False)
class _Line:
    """A line of the stream (without its end), held back until it is safe to pass on."""

    raw: bytes
    event: dict[str, Any] | None  # its JSON data, if it has some
    number: int = 0  # its place in the stream
    changed: bool = False  # a secret was taken out of it: it is written anew

    def out(self, redactor: Redactor) -> bytes:
        raw = self.raw
        if self.changed and self.event is not None:
            raw = b"data: " + json.dumps(self.event, ensure_ascii=False).encode()
        return redactor.data(raw) + b"\n"


@dataclass(eq=False)
class _Piece:
    line: _Line
    holder: Any  # the dict or list holding the string
    key: Any  # its key or index there

    @property
    def text(self) -> str:
        return str(self.holder[self.key])


class _RedactedStream:
    """An SSE stream's lines with the secrets out. Every string of an event may be one piece
    of a text the stream sends in pieces (its content, its reasoning, a tool call's
    arguments, whatever a server names them), the pieces of one text being the strings at
    the same place in successive events (`_strings`): a secret may be split across two of
    them. A line goes out once no secret can start in it any more: while a text ends with
    what could be the start of a secret, the line holding that start and those after it
    wait; the pieces of each text are redacted together, each secret replaced where it
    started. A line a secret was not taken from goes out as the upstream sent it."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.held: list[_Line] = []
        self.pieces: dict[_Path, list[_Piece]] = {}
        self.finished: set[Any] = set()  # choices that said why they ended
        self._numbers = itertools.count()

    def line(self, raw: bytes) -> bytes:
        """What can go to the client now (whole lines): `raw` (a line without its end) and
        those held before it, or nothing yet."""
        if _is_done(raw):  # the end: nothing more can complete a secret
            return self.release() + _Line(raw, None).out(self.redactor)
        held = _Line(raw, _event(raw), next(self._numbers))
        self.held.append(held)
        if held.event is not None:
            self._collect(held)
        return self._ready()

    def release(self) -> bytes:
        """Every line held, secrets out."""
        for pieces in self.pieces.values():
            self._redact(pieces)
        return self._send(len(self.held))

    def _ready(self) -> bytes:
        """The held lines no secret can start in any more, secrets out."""
        first = self.held[0].number if self.held else 0
        keep = len(self.held)  # the first line that must wait, as an index into `held`
        for path, pieces in self.pieces.items():
            self._redact(pieces)
            if path[:2] in self.finished:
                continue
            start = self._partial_start(pieces)
            if start is not None:
                keep = min(keep, start.line.number - first)
        return self._send(keep)

    def _send(self, count: int) -> bytes:
        """The first `count` held lines, written; the pieces in them forgotten."""
        out = b"".join(line.out(self.redactor) for line in self.held[:count])
        self.held = self.held[count:]
        if not self.held:
            self.pieces = {}
            return out
        first = self.held[0].number
        for path in list(self.pieces):
            kept = [p for p in self.pieces[path] if p.line.number >= first]
            if kept:
                self.pieces[path] = kept
            else:
                del self.pieces[path]
        return out

    def _redact(self, pieces: list[_Piece]) -> None:
        texts = [piece.text for piece in pieces]
        for piece, before, after in zip(pieces, texts, self.redactor.pieces(texts), strict=True):
            if after != before:
                piece.holder[piece.key], piece.line.changed = after, True

    def _partial_start(self, pieces: list[_Piece]) -> _Piece | None:
        """The piece where a secret could begin that the text's next pieces may complete
        (its pieces are redacted already), or None."""
        left = self.redactor.partial("".join(piece.text for piece in pieces))
        for piece in reversed(pieces if left else []):
            left -= len(piece.text)
            if left <= 0:
                return piece
        return None

    def _collect(self, line: _Line) -> None:
        event = line.event or {}
        for path, holder, key in _strings(event):
            self.pieces.setdefault(path, []).append(_Piece(line, holder, key))
        choices = event.get("choices")
        for n, choice in enumerate(choices if isinstance(choices, list) else []):
            if isinstance(choice, dict) and choice.get("finish_reason"):
                self.finished.add(("choices", _place(choice, n)))


def _strings(event: dict[str, Any]) -> Iterator[tuple[_Path, Any, Any]]:
    """Every string in `event` (an object's keys aside), in the order written: (its place,
    the dict or list holding it, its key there). The place names an item of a list by its
    `index` when it has one (a choice, a streamed tool call: the same one in every event
    whatever else the event holds), else by its position. A loop, not recursion."""
    stack: list[tuple[_Path, Any]] = [((), event)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            places = [(key, key, item) for key, item in node.items()]
        else:
            places = [(n, _place(item, n), item) for n, item in enumerate(node)]
        nested = []
        for key, place, item in places:
            if isinstance(item, str):
                yield (*path, place), node, key
            elif isinstance(item, dict | list):
                nested.append(((*path, place), item))
        stack.extend(reversed(nested))


def _place(item: Any, position: int) -> Any:
    """An item of a list by its `index` when it has one, else by its position."""
    index = item.get("index") if isinstance(item, dict) else None
    return ("index", index) if isinstance(index, int) else position


def _is_done(raw: bytes) -> bool:
    line = raw.strip()
    return line.startswith(b"data:") and line[5:].strip() == b"[DONE]"


def _event(raw: bytes) -> dict[str, Any] | None:
    """An SSE line's JSON data, if it has some."""
    line = raw.strip()
    if not line.startswith(b"data:"):
        return None
    try:
        event = json.loads(line[5:])
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None
