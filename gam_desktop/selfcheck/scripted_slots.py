"""The scripted server's slots and streams: serving a request as llama-server does.

`Slots(n)`: at most n requests are worked on at once (llama-server's `-np n`), the others
wait their turn in a FIFO queue; each takes the server's latency once in its slot, and
`GET /props` reports `total_slots`. A client that hangs up (gave up waiting, closed its
stream) is noticed while its request waits or is worked on, and the request is dropped,
as llama-server cancels a task whose connection closed. Calls are counted as received,
completed (the whole reply written) and abandoned (the client gone before that), with or
without slots (`Slots(0)`: no queue, every request worked on at once).

`write_stream` sends a whole chat completion as server-sent events, as a server does
with `stream=True`: the text a word per event, tool calls with their arguments in
pieces, the usage last when `stream_options.include_usage` asks for it; `stall` stops
after the first token and says nothing more until the client hangs up.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

POLL_S = 0.05  # how often a queued request looks whether its client is still there
STALL_LIMIT_S = 60.0  # a stalled reply waits at most this long for its client to hang up


class ClientGone(Exception):
    """The client hung up before its reply was written."""


def client_gone(handler: BaseHTTPRequestHandler) -> bool:
    """Whether the client closed its side: a client waiting for its reply sends nothing,
    so a readable socket with nothing to read means it hung up."""
    sock = handler.connection
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


@dataclass
class Slots:
    count: int = 0  # requests worked on at once; 0: all of them
    received: int = 0
    completed: int = 0
    abandoned: int = 0
    _turns: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _queue: deque[object] = field(default_factory=deque, repr=False)
    _busy: int = 0

    def serve(self, handler: BaseHTTPRequestHandler, work: Callable[[], None]) -> None:
        """Wait in the queue for a slot, do `work` in it (the request), and count it."""
        with self._turns:
            self.received += 1
            self._turns.notify_all()
        try:
            self._take(handler)
            try:
                work()
            finally:
                self._free()
            self._count("completed")
        except (ClientGone, ConnectionError):  # ConnectionError: a broken pipe, a reset
            self._count("abandoned")
            handler.close_connection = True

    def work(self, handler: BaseHTTPRequestHandler, seconds: float) -> None:
        """Spend `seconds` on the request in its slot; ClientGone if the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([handler.connection], [], [], left)
            if readable and client_gone(handler):
                raise ClientGone
            if readable:  # the client sent something: nothing to watch for, only wait
                time.sleep(max(0.0, deadline - time.monotonic()))

    def before_reply(self, handler: BaseHTTPRequestHandler) -> None:
        """A reply is about to be written: not to a client that is gone."""
        if client_gone(handler):
            raise ClientGone

    def wait_until(self, condition: Callable[[Slots], bool], timeout: float = 30.0) -> bool:
        """Wait until `condition(self)` holds for the counts (a test's fixed point: they
        change on the server's threads); False if it did not within `timeout`."""
        with self._turns:
            return self._turns.wait_for(lambda: condition(self), timeout)

    def props(self) -> dict[str, Any] | None:
        """What llama-server's `GET /props` says of its slots (None: no slots set)."""
        return {"total_slots": self.count} if self.count else None

    def _take(self, handler: BaseHTTPRequestHandler) -> None:
        ticket = object()
        with self._turns:
            self._queue.append(ticket)
            try:
                while self._queue[0] is not ticket or (self.count and self._busy >= self.count):
                    if client_gone(handler):
                        raise ClientGone
                    self._turns.wait(POLL_S)  # the client's hang-up notifies nobody
            except ClientGone:
                self._queue.remove(ticket)
                self._turns.notify_all()
                raise
            self._queue.popleft()
            self._busy += 1
            self._turns.notify_all()

    def _free(self) -> None:
        with self._turns:
            self._busy -= 1
            self._turns.notify_all()

    def _count(self, outcome: str) -> None:
        with self._turns:
            setattr(self, outcome, getattr(self, outcome) + 1)
            self._turns.notify_all()


def stream_events(body: dict[str, Any], usage: bool) -> list[dict[str, Any]]:
    """The chunks of a streamed `body` (a whole chat completion)."""
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": w} for w in re.findall(r"\S+\s*", message.get("content") or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        head = {"index": index, "id": call.get("id"), "type": "function"}
        deltas.append({"tool_calls": [{**head, "function": {"name": function.get("name")}}]})
        for piece in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    head = {k: body.get(k) for k in ("id", "created", "model")}
    events = [
        {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d}]}
        for d in deltas
    ]
    events.append(
        {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}],
        }
    )
    if usage and body.get("usage"):
        events.append({**head, "object": "chat.completion.chunk", "choices": []})
        events[-1]["usage"] = body["usage"]
    return events


def write_stream(
    handler: BaseHTTPRequestHandler, body: dict[str, Any], usage: bool, stall: bool
) -> None:
    """`body` as server-sent events on `handler` (its headers not yet sent)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for n, event in enumerate(stream_events(body, usage)):
        if stall and n == 2:  # the role and the first word sent: then nothing more
            select.select([handler.connection], [], [], STALL_LIMIT_S)
            raise ClientGone
        handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        handler.wfile.flush()
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()
