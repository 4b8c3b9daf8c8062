"""What gam-serve reads from its upstream LLM is bounded (issue 36, third adversarial
pass): a stream whose line never ends is cut past MAX_LINE with an error event (its relay
copied and split what it held at every chunk: 16 MB took a minute, the event loop busy
all along); a streamed reply whose text passes MAX_REPLY is passed on but not saved; a
non-streaming reply larger than MAX_REPLY is a 502, never read whole. The upstream here is
a plain HTTP server on 127.0.0.1 (a free port) sending what a broken or hostile one would."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.serve import upstream as upstream_module
from gam_desktop.serve.errors import ServeError
from gam_desktop.serve.upstream import Upstream

pytestmark = pytest.mark.timeout(180)
KB = 1024


@contextmanager
def upstream_sending(body: Callable[[], Iterator[bytes]], kind: str) -> Iterator[LLMSettings]:
    """Settings for an upstream that answers every completion with `body`'s pieces, the
    connection closed after them (the body's end)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.end_headers()
            try:
                for piece in body():
                    self.wfile.write(piece)
            except OSError:  # the relay gave up on it
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LLMSettings(
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="m", timeout=30
        )
    finally:
        server.shutdown()
        server.server_close()


def relayed(settings: LLMSettings) -> tuple[bytes, list[str]]:
    """What a streaming request through gam-serve's relay gives the client, and the texts
    handed over to be saved."""
    saved: list[str] = []

    async def run() -> bytes:
        upstream = Upstream(settings)
        try:
            relay = await upstream.stream(
                {"model": "m", "messages": [], "stream": True}, saved.append
            )
            return b"".join([piece async for piece in relay])
        finally:
            await upstream.close()

    return asyncio.run(run()), saved


def event(content: str) -> bytes:
    data = {"choices": [{"index": 0, "delta": {"content": content}}]}
    return f"data: {json.dumps(data)}\n\n".encode()


def test_a_line_that_never_ends_is_cut_with_an_error_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream_module, "MAX_LINE", 256 * KB, raising=False)
    fed: list[int] = []  # the bytes split into lines, chunk after chunk
    split = upstream_module._lines
    monkeypatch.setattr(
        upstream_module, "_lines", lambda data: (fed.append(len(data)), split(data))[1]
    )

    def spaces() -> Iterator[bytes]:
        yield event("Otters")
        yield b"data: "
        for _ in range(64):  # 4 MB of one line, in 64 KB pieces
            yield b" " * (64 * KB)

    with upstream_sending(spaces, "text/event-stream") as settings:
        client, saved = relayed(settings)
    assert client.startswith(event("Otters").rstrip(b"\n"))
    assert client.endswith(
        b'data: {"error": {"message": "The LLM sent a line of more than 0.25 MB; the reply was'
        b' cut.", "type": "upstream_error", "param": null, "code": null}}\n\n'
    )
    assert saved == []  # no whole reply: nothing to save
    assert sum(fed) < 1024 * KB  # the line was not joined and split again at every piece


def test_a_reply_too_long_to_keep_is_passed_on_and_not_saved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(upstream_module, "MAX_REPLY", 10 * KB, raising=False)

    def long_reply() -> Iterator[bytes]:
        for _ in range(100):
            yield event("otters " * 32)  # 224 characters each: 22,400 in all
        yield b"data: [DONE]\n\n"

    with upstream_sending(long_reply, "text/event-stream") as settings:
        client, saved = relayed(settings)
    assert client.count(b'"delta"') == 100 and client.rstrip().endswith(b"[DONE]")
    assert saved == []


def test_a_reply_within_the_bounds_is_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    def reply() -> Iterator[bytes]:
        yield event("Otters hold ")
        yield event("hands.")
        yield b"data: [DONE]\n\n"

    with upstream_sending(reply, "text/event-stream") as settings:
        _client, saved = relayed(settings)
    assert saved == ["Otters hold hands."]


def test_a_whole_reply_larger_than_the_limit_is_a_502_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(upstream_module, "MAX_REPLY", 64 * KB, raising=False)

    def huge() -> Iterator[bytes]:
        yield b'{"choices": [{"message": {"content": "'
        for _ in range(256):  # 16 MB
            yield b"x" * (64 * KB)
        yield b'"}}]}'

    async def complete(settings: LLMSettings) -> None:
        upstream = Upstream(settings)
        try:
            await upstream.complete({"model": "m", "messages": []})
        finally:
            await upstream.close()

    with (
        upstream_sending(huge, "application/json") as settings,
        pytest.raises(ServeError) as refused,
    ):
        asyncio.run(complete(settings))
    assert (refused.value.status, refused.value.message) == (
        502,
        "The LLM answered with more than 0.0625 MB; it was not read.",
    )
