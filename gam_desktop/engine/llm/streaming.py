"""A streamed reply, read with a limit on silence rather than on the whole call.

A call that waits in the server's queue and then writes slowly is still being worked on;
giving up on it after a fixed total (and asking again) pays the server for it twice. So
replies are streamed and a call is given up only when the server falls silent: no first
token within the limit the limiter gives (it grows with the calls queued ahead), or no
token for `silence` seconds after that. Only a token is progress: SSE comments (a proxy's
keep-alives, which the SDK never yields) and chunks without one move no deadline. A call
given up on is closed at once (the socket shut down under the reading thread), so the
server stops working on it. The two silences are told apart (`NoFirstToken`): a reply that
never began may only have waited behind someone else's work, and the client asks again
with more patience (llm/concurrency.py), within a ceiling for the whole call (client.py).
A cancel does not close the calls in flight: their replies are kept when they arrive
(ingest/resume.py), so the same add run again pays for none of them.

A reply is read no further than its `max_tokens` could make it: a server that streams
whitespace (or empty deltas) for ever moves the silence deadline with every chunk, and was
read for ever, past `max_tokens`. Past `reply_budget` characters, or after `EMPTY_CHUNKS`
chunks in a row without a character, the stream is closed and the reply is `Overlong` (a
broken reply: asked again, then said). A reply that is one body, not a stream (a call not
streamed, or a server that ignored `stream`), is bounded the same way, in the same words
(`whole_reply`), and must be whole within the first token's limit: its bytes are no tokens
(a JSON body may hold whitespace anywhere, and one trickled in a byte at a time keeps every
read within its timeout).

The deltas are put back together into the chat completion a non-streamed call returns:
its content, its tool calls (their arguments arrive in pieces, by index), the finish
reason and the usage that `stream_options={"include_usage": True}` adds as a last chunk.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


class Silent(Exception):
    """The server sent nothing for too long: no first token, or no next one."""


class NoFirstToken(Silent):
    """The reply never began: no first token (no reply at all, when not streamed) within
    the limit. A server busy with calls we cannot see (another program's) says so too."""

    patience = 0  # the attempt's steps of patience (llm/concurrency.py), set by the client


class BrokenReply(Exception):
    """The reply was no chat completion: an error event mid-stream, or a body that is not
    one (a server that ignored `stream` and answered with something else)."""


class Overlong(BrokenReply):
    """The reply went on past what its `max_tokens` could make, or sent chunk after chunk
    without a word, or its body past what its caller said it can hold (llm/bodies.py):
    read no further."""


# A token is a few characters; the longest of a vocabulary (runs of spaces or of "=") a few
# dozen, and a reply is never made of those alone: 16 a token, and room besides, is more
# than any reply within `max_tokens` holds.
CHARS_PER_TOKEN = 16
SPARE_CHARS = 4096
# Chunks in a row without a character of reply (a role, a finish reason and the usage are
# three; a server reporting its prompt's progress sends one a batch).
EMPTY_CHUNKS = 1000
# A whole JSON body: a character escaped ("\u00e9", "\n") is written in up to six bytes.
BYTES_PER_CHAR = 6
SPARE_BYTES = 64 * 1024


def reply_budget(max_tokens: int | None) -> int | None:
    """The characters a reply of at most `max_tokens` tokens may hold (None: no bound)."""
    return None if max_tokens is None else max_tokens * CHARS_PER_TOKEN + SPARE_CHARS


@dataclass(eq=False)
class Watch:
    """A stream being read: closed by the watchdog at `deadline`."""

    close: Callable[[], None]
    deadline: float
    closed: bool = False  # by the watchdog, for its silence
    silent: str = "no reply in time"  # what silence at `deadline` means, in words
    began: bool = False  # a token came: silence now is silence mid-reply

    def silence(self) -> Silent:
        """The error of this stream's silence: before its first token, or after."""
        return Silent(self.silent) if self.began else NoFirstToken(self.silent)


class Watchdog:
    """One thread that closes the streams gone silent. Readers move their deadline as
    tokens arrive; the thread wakes at the earliest deadline."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._watches: set[Watch] = set()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, close: Callable[[], None], deadline: float) -> Watch:
        watch = Watch(close, deadline)
        with self._wake:
            self._watches.add(watch)
            if self._thread is None:
                # Not "gam-llm…": that names the pools' threads, which end with their work.
                self._thread = threading.Thread(target=self._run, name="stream-watchdog")
                self._thread.daemon = True
                self._thread.start()
            self._wake.notify()
        return watch

    def move(self, watch: Watch, deadline: float) -> None:
        """A token came: `watch` is due at `deadline` now (earlier, after the first)."""
        with self._wake:
            earlier = deadline < watch.deadline
            watch.deadline = deadline
            if earlier:
                self._wake.notify()

    def forget(self, watch: Watch) -> None:
        with self._wake:
            self._watches.discard(watch)

    def _run(self) -> None:
        while True:
            for watch in self._due():
                with contextlib.suppress(OSError):
                    watch.close()

    def _due(self) -> list[Watch]:
        """The watches to close now, after waiting until the earliest deadline."""
        with self._wake:
            while True:
                now = self._clock()
                due = [w for w in self._watches if w.deadline <= now]
                if due:
                    for watch in due:
                        watch.closed = True
                        self._watches.discard(watch)
                    return due
                earliest = min((w.deadline for w in self._watches), default=None)
                # `watch` and `move` notify when something is due sooner.
                self._wake.wait(None if earliest is None else earliest - now)


WATCHDOG = Watchdog()


@dataclass
class Accumulator:
    """A chat completion put back together from its chunks."""

    fields: dict[str, Any] = field(default_factory=dict)  # id, created, model
    content: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Any = None
    chars: int = 0  # of text, reasoning and tool calls: what counts against max_tokens

    def add(self, chunk: Any) -> bool:
        """Take one chunk; True when it carried a token (text, reasoning, a tool call)."""
        for name in ("id", "created", "model"):
            if getattr(chunk, name, None) is not None:
                self.fields.setdefault(name, getattr(chunk, name))
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        token = False
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0):
                continue  # only the first choice is asked for
            self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
            delta = getattr(choice, "delta", None)
            token = self._delta(delta) or token
        return token

    def _delta(self, delta: Any) -> bool:
        if delta is None:
            return False
        text = getattr(delta, "content", None)
        if text:
            self.content.append(text)
            self.chars += len(text)
        for call in getattr(delta, "tool_calls", None) or []:
            self._tool_call(call)
        # A reasoning model thinks aloud before it answers: that is work, not silence.
        thinking = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        refusal = getattr(delta, "refusal", None)
        for said in (thinking, refusal):
            self.chars += len(said) if isinstance(said, str) else 0
        return bool(text or getattr(delta, "tool_calls", None) or thinking or refusal)

    def _tool_call(self, call: Any) -> None:
        index = getattr(call, "index", None) or 0
        entry = self.calls.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        entry["id"] = getattr(call, "id", None) or entry["id"]
        function = getattr(call, "function", None)
        if function is not None:
            name = getattr(function, "name", None) or ""
            arguments = getattr(function, "arguments", None) or ""
            entry["function"]["name"] += name
            entry["function"]["arguments"] += arguments
            self.chars += len(name) + len(arguments)

    def completion(self, completion_type: Any) -> Any:
        """The chat completion (an instance of the SDK's `completion_type`)."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        choices = []
        if self.content or self.calls or self.finish_reason:
            choices = [{"index": 0, "message": message, "finish_reason": self.finish_reason}]
        body = {"id": "", "created": 0, "model": "", **self.fields, "choices": choices}
        body["object"] = "chat.completion"
        if self.usage is not None:
            body["usage"] = self.usage
        return completion_type.construct(**body)


def read_stream(
    stream: Any,
    *,
    completion_type: Any,
    sent: float,
    first_token_limit: float,
    silence: float,
    max_tokens: int | None = None,
    clock: Callable[[], float] = time.monotonic,
    watchdog: Watchdog = WATCHDOG,
) -> tuple[Any, float | None]:
    """The completion of a streamed reply, and when its first token came (None: none came).

    Silent when no token comes within `first_token_limit` seconds of `sent` (a reading of
    `clock`) or none for `silence` seconds after one, the stream closed first so that the
    server stops. Overlong past `reply_budget(max_tokens)` characters, or after
    EMPTY_CHUNKS chunks in a row without one (closed too)."""
    response = stream.response
    if "event-stream" not in response.headers.get("content-type", ""):  # `stream` ignored
        whole = whole_reply(
            response,
            completion_type=completion_type,
            sent=sent,
            limit=first_token_limit,
            max_tokens=max_tokens,
            watchdog=watchdog,
        )
        return whole, None
    budget = reply_budget(max_tokens)
    watch = watchdog.watch(_closer(response), sent + first_token_limit)
    watch.silent = f"no first token within {round(first_token_limit, 1):g} s"
    accumulator, first, empty = Accumulator(), None, 0
    try:
        for chunk in _chunks(stream, watch):
            before = accumulator.chars
            if accumulator.add(chunk):
                first = clock() if first is None else first
                watch.began, watch.silent = True, f"no token for {silence:g} s"
                watchdog.move(watch, clock() + silence)
            empty = 0 if accumulator.chars > before else empty + 1
            _within(accumulator.chars, budget, max_tokens, empty)
    finally:
        watchdog.forget(watch)
        stream.close()
    if accumulator.finish_reason is None:  # every server ends a reply with one
        if watch.closed:  # by the shutdown
            raise watch.silence()
        raise BrokenReply("the reply was cut short (the stream ended before the reply did)")
    return accumulator.completion(completion_type), first


def _within(chars: int, budget: int | None, max_tokens: int | None, empty: int) -> None:
    """Overlong when a reply holds more than `budget` characters, or `empty` chunks in a
    row came without one."""
    if budget is not None and chars > budget:
        raise _ran_on(max_tokens, budget)
    if empty >= EMPTY_CHUNKS:
        raise Overlong(
            f"the server sent {empty:,} chunks in a row without a word of reply; "
            "it was not read further"
        )


def _ran_on(max_tokens: int | None, budget: int) -> Overlong:
    return Overlong(
        f"the reply ran on past its {max_tokens:,} tokens (more than {budget:,} "
        "characters without an end); it was not read further"
    )


def _chunks(stream: Iterable[Any], watch: Watch) -> Iterable[Any]:
    """The stream's chunks; a stream the watchdog closed, or whose read timed out (the
    read timeout is the first token's limit), ends in Silent."""
    try:
        yield from stream
    except Exception as exc:
        if watch.closed or timed_out(exc):
            raise watch.silence() from exc
        if type(exc).__name__ == "APIError":  # an error event in the stream itself
            raise BrokenReply(f"the server broke off its reply: {exc}") from exc
        raise


def timed_out(exc: BaseException) -> bool:
    """Whether `exc` is, or wraps, a read that timed out (httpx's ReadTimeout, the SDK's
    APITimeoutError, a socket's TimeoutError): matched by name, as the SDK may run on httpx
    or httpx2."""
    current: BaseException | None = exc
    seen: list[BaseException] = []
    while current is not None and current not in seen:
        if isinstance(current, TimeoutError) or "Timeout" in type(current).__name__:
            return True
        seen.append(current)
        current = current.__cause__ or current.__context__
    return False


def whole_reply(
    response: Any,
    *,
    completion_type: Any,
    sent: float,
    limit: float,
    max_tokens: int | None = None,
    watchdog: Watchdog = WATCHDOG,
) -> Any:
    """The chat completion of a reply that is one body, not a stream (the HTTP `response`,
    its body not read yet): read no further than a reply of `max_tokens` could make it
    (Overlong, in a streamed reply's words), and given up on (NoFirstToken, the response
    closed so that the server stops) unless it is whole within `limit` seconds of `sent`:
    only the whole reply is progress, as only a token is in a stream."""
    watch = watchdog.watch(_closer(response), sent + limit)
    watch.silent = f"no reply within {round(limit, 1):g} s"
    try:
        body = _bounded_body(_chunks(response.iter_bytes(), watch), max_tokens)
    finally:
        watchdog.forget(watch)
        response.close()
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        raise BrokenReply(f"the reply was not JSON: {' '.join(text.split())[:60]!r}") from None
    if not isinstance(data, dict) or not data.get("choices"):
        raise BrokenReply("the reply was JSON but no chat completion (it held no choices)")
    return completion_type.construct(**data)


def _bounded_body(parts: Iterable[bytes], max_tokens: int | None) -> bytes:
    """The body's bytes, as many as a reply of `max_tokens` can take in JSON (each of its
    characters escaped, and room besides); Overlong past them. Counted as they come, after
    any decompression: no more than that, and the part that went past it, is ever held."""
    budget = reply_budget(max_tokens)
    body = bytearray()
    for part in parts:
        body += part
        if budget is not None and len(body) > budget * BYTES_PER_CHAR + SPARE_BYTES:
            raise _ran_on(max_tokens, budget)
    return bytes(body)


def _closer(response: Any) -> Callable[[], None]:
    """How to stop a reply being read on another thread: shut its socket down (closing the
    response there is not thread-safe, and a close alone does not wake a blocked read)."""
    network = (getattr(response, "extensions", None) or {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None

    def close() -> None:
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)

    return close
