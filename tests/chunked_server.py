"""A tiny chat server for the tests of hostile and broken replies (tests/engine/test_llm_*):
it answers every chat call with a chunked body that the test writes (an endless stream,
keep-alive comments, a whole body that never ends or trickles in), with the status and
headers the test gives (an error whose body never ends), on 127.0.0.1, port 0.

    def spaces(call: Call) -> None:
        call.send(b'{"choices": [{"message": {"content": "')
        while call.more():
            call.send(b" " * 4096)

    with ChunkedServer(spaces, content_type="application/json") as server:
        settings = LLMSettings(base_url=server.base_url, ...)

Bounded: the threads are daemons, every answer stops once the server is stopped, and no
answer sends more than `cap` bytes (a client that fails to stop reading uses that much
memory at most, then gets the end of a body that is no chat completion).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CAP = 50 * 1024 * 1024  # bytes one answer sends at most


def sse(body: dict[str, Any]) -> bytes:
    """One event of a stream."""
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def chunk(delta: dict[str, object]) -> bytes:
    """One event carrying `delta` for the first choice."""
    return sse(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
    )


@dataclass
class Call:
    """One chat call being answered: what it asked, and the bytes sent back so far."""

    request: dict[str, Any]
    stop: threading.Event
    cap: int
    sent: int = 0
    write: Callable[[bytes], None] = field(default=lambda _data: None, repr=False)
    broken_off: bool = False  # the connection is closed without the body's end

    def break_off(self) -> None:
        """End the call in the middle of its body: no end of it, the connection closed."""
        self.broken_off = True

    def send(self, data: bytes) -> None:
        """`data` as one chunk of the body (OSError once the client has hung up)."""
        self.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.sent += len(data)

    def more(self) -> bool:
        """Whether to go on: the server is not stopping and the cap is not reached."""
        return not self.stop.is_set() and self.sent < self.cap


def endless(first: bytes, then: bytes) -> Callable[[Call], None]:
    """An answer: `first`, then `then` again and again, as fast as the server writes, up to
    its cap (CAP)."""

    def answer(call: Call) -> None:
        call.send(first)
        while call.more():
            call.send(then)

    return answer


class ChunkedServer:
    """Answers every POST with a `status` (200) of `content_type`, with `headers` besides,
    whose body `answer` writes (then ends it, unless it broke it off), or, with
    `refuse_stream`, a call that asks for a stream with a 400 naming `stream`. Counts the
    calls, keeps each answer's `Call` (`answered`) and releases `hung_up` for each answer
    the client hung up on (as a server sees a call given up)."""

    def __init__(
        self,
        answer: Callable[[Call], None],
        *,
        content_type: str = "text/event-stream",
        refuse_stream: bool = False,
        cap: int = CAP,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.calls = 0
        self.answered: list[Call] = []
        self.hung_up = threading.Semaphore(0)
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no wait for an ACK between two small writes

            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = json.loads(raw or b"{}")
                owner.calls += 1
                if refuse_stream and request.get("stream"):
                    self._refuse()
                    return
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                call = Call(request, owner.stop, cap, write=self._write)
                owner.answered.append(call)
                try:
                    answer(call)
                    if call.broken_off:
                        self.close_connection = True
                    else:
                        self._write(b"0\r\n\r\n")
                except OSError:  # the client hung up: the call is over at the server too
                    owner.hung_up.release()

            def _refuse(self) -> None:
                body = json.dumps({"error": {"message": "stream is not supported"}}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _write(self, data: bytes) -> None:
                self.wfile.write(data)
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ChunkedServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
