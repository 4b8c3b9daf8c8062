"""Forwarding a chat completion to the configured LLM and passing its reply back unchanged.

The request goes out as the client wrote it (its options, tools, streaming) with two
changes: the messages carry the memory's passages and the model name is mapped. The reply
comes back as the LLM sent it (a stream line by line), secrets aside, so this speaks HTTP
itself (httpx2, which the openai SDK uses) rather than through `LLMClient`, whose job is to
parse, retry and validate replies for the engine. The endpoint and key are the engine's
`LLMSettings`.

The upstream key is sent upstream and nowhere else: a reply or an error passed back to the
client has it (and gam-serve's own token) removed wherever the upstream echoed it, a stream
through a sliding window (`_RedactedStream`), and nothing here logs a header.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.redact import Redactor
from gam_desktop.serve.errors import ServeError, error_body


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
        try:
            response = await self._client.post("chat/completions", json=request)
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None
        if response.status_code >= 400:
            raise self._refused(response.status_code, response.text)
        try:
            body = response.json()
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python goes
            raise ServeError(502, "The LLM answered with something that is not JSON.") from None
        if not isinstance(body, dict):
            raise ServeError(502, "The LLM answered with something that is not a completion.")
        _redact_strings(body, self.redactor)
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
        text, pending, answered = "", b"", False
        redacted = _RedactedStream(self.redactor)
        try:
            async for chunk in response.aiter_raw():
                *lines, pending = (pending + chunk).split(b"\n")
                text += "".join(_delta_text(line) for line in lines)
                if not answered and any(_ends_reply(line) for line in lines):
                    answered = True
                    on_done(self.redactor.text(text))
                if ready := b"".join(redacted.line(line) for line in lines):
                    yield ready
            if not answered and _ends_reply(pending):
                on_done(self.redactor.text(text + _delta_text(pending)))
            last = redacted.line(pending) if pending else b""
            yield last + redacted.release()
        except httpx2.HTTPError as exc:
            if not answered:  # cut off mid-reply: the client sees an error event
                message = f"The LLM stopped answering mid-reply: {type(exc).__name__}."
                error = f"data: {json.dumps(error_body(502, message))}\n\n".encode()
                yield redacted.release() + error
        finally:
            await response.aclose()

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


def _redact_strings(value: Any, redactor: Redactor) -> None:
    """Every string in a JSON value redacted, in place. A loop, not recursion: an
    upstream's JSON may be nested as deep as its parser allowed."""
    stack = [value]
    while stack:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(pairs):
            if isinstance(item, str):
                node[key] = redactor.text(item)
            elif isinstance(item, dict | list):
                stack.append(item)


_Key = tuple[int, str, int]  # a streamed text: its choice, its field, its tool call


@dataclass
class _Line:
    """A line of the stream, held back until it is safe to pass on."""

    raw: bytes
    event: dict[str, Any] | None  # its JSON data, if it has some
    changed: bool = False  # a secret was taken out of it: it is written anew

    def out(self, redactor: Redactor) -> bytes:
        raw = self.raw
        if self.changed and self.event is not None:
            ending = b"\r" if raw.endswith(b"\r") else b""
            raw = b"data: " + json.dumps(self.event, ensure_ascii=False).encode() + ending
        return redactor.data(raw) + b"\n"


class _RedactedStream:
    """An SSE stream's lines with the secrets out. The texts that stream in pieces (a
    choice's content, its tool calls' arguments) may carry a secret split across two
    events: while one of them ends with what could be the start of a secret, the lines are
    held back; once none does (or the stream ends) they go out, each secret replaced where
    it started. A line a secret was not taken from goes out as the upstream sent it."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.held: list[_Line] = []
        self.pieces: dict[_Key, list[tuple[_Line, dict[str, Any], str]]] = {}
        self.finished: set[int] = set()  # choices that said why they ended

    def line(self, raw: bytes) -> bytes:
        """What can go to the client now (whole lines): `raw` and those held before it,
        or nothing yet."""
        if _is_done(raw):  # the end: nothing more can complete a secret
            return self.release() + _Line(raw, None).out(self.redactor)
        held = _Line(raw, _event(raw))
        self.held.append(held)
        if held.event is not None:
            self._collect(held)
        return b"" if self._waiting() else self.release()

    def release(self) -> bytes:
        """Every line held, secrets out."""
        for pieces in self.pieces.values():
            texts = [holder[name] for _, holder, name in pieces]
            for (line, holder, name), before, after in zip(
                pieces, texts, self.redactor.pieces(texts), strict=True
            ):
                if after != before:
                    holder[name], line.changed = after, True
        out = b"".join(line.out(self.redactor) for line in self.held)
        self.held, self.pieces = [], {}
        return out

    def _collect(self, line: _Line) -> None:
        choices = line.event.get("choices") if line.event is not None else None
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", 0)
            index = index if isinstance(index, int) else 0
            for key, holder, name in _streamed(choice, index):
                self.pieces.setdefault(key, []).append((line, holder, name))
            if choice.get("finish_reason"):
                self.finished.add(index)

    def _waiting(self) -> bool:
        """Whether a streamed text of a choice still going ends with the start of a secret."""
        for key, pieces in self.pieces.items():
            if key[0] in self.finished:
                continue
            text = self.redactor.text("".join(holder[name] for _, holder, name in pieces))
            if self.redactor.partial(text):
                return True
        return False


_STREAMED_TEXTS = ("content", "reasoning_content", "refusal")


def _streamed(choice: dict[str, Any], index: int) -> Iterator[tuple[_Key, dict[str, Any], str]]:
    """The streamed texts of a chunk's choice (`index`): (which text it is, the dict holding
    it, its key there)."""
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return
    for name in _STREAMED_TEXTS:
        if isinstance(delta.get(name), str):
            yield (index, name, 0), delta, name
    calls = delta.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            number = call.get("index", 0)
            yield (
                (index, "tool_calls", number if isinstance(number, int) else 0),
                function,
                "arguments",
            )


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
