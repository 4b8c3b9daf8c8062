"""A server that streams a reply without end (issue 36): whitespace, token after token, or
chunks with nothing in them. Every chunk of whitespace was a token, so the silence limit
never came, and the client read on for ever, past `max_tokens`. A reply is read no further
than its `max_tokens` could make it (in characters, with room to spare) and no further than
EMPTY_CHUNKS empty chunks in a row: the stream is closed (the server sees the hang-up), the
call asked again, then failed with words that say why. A whole body in place of a stream is
bounded the same way. The server is a tiny one on 127.0.0.1, port 0."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gam_desktop.engine.llm import LLMCallFailed, LLMClient, LLMSettings
from gam_desktop.engine.llm.streaming import (
    BYTES_PER_CHAR,
    EMPTY_CHUNKS,
    SPARE_BYTES,
    reply_budget,
)

MAX_TOKENS = 64


def chunk(delta: dict[str, object]) -> bytes:
    body = {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class Endless:
    """Answers every chat call without end, as `kind` says: "whitespace" (a token of
    spaces after another), "empty" (chunks with no text) or "body" (a JSON body, not a
    stream, whose content never closes); counts the calls and the calls hung up on."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.calls = 0
        self.hung_up = threading.Semaphore(0)
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no wait for an ACK between two small writes

            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.calls += 1
                self.send_response(200)
                streamed = owner.kind != "body"
                kind = "text/event-stream" if streamed else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                spaces = chunk({"content": " " * 16})  # a run of spaces is a token, too
                first, then = {
                    "whitespace": (chunk({"role": "assistant", "content": ""}), spaces),
                    "empty": (chunk({"role": "assistant"}), chunk({"content": ""})),
                    "body": (b'{"id": "x", "object": "chat.completion", "created": 0, "model": '
                             b'"m", "choices": [{"index": 0, "message": {"role": "assistant", '
                             b'"content": "', b" " * 256),
                }[owner.kind]  # fmt: skip
                try:
                    self._send(first)
                    while not owner.stop.is_set():
                        self._send(then * 64)  # as fast as a fast server writes
                except OSError:  # the client hung up: the call is over at the server too
                    owner.hung_up.release()

            def _send(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Endless:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endless(request: pytest.FixtureRequest) -> Iterator[Endless]:
    with Endless(request.param) as server:
        yield server


def client(base_url: str) -> LLMClient:
    return LLMClient(
        LLMSettings(
            base_url=base_url,
            model="m",
            api_key="k",
            # silence cannot end these calls: the whitespace keeps coming, and an empty
            # chunk's silence would take ten minutes
            timeout=600,
            max_retries=1,
            backoff_base=0.01,
            max_tokens=MAX_TOKENS,
            workers=1,
        )
    )


def said(endless: Endless) -> str:
    budget = reply_budget(MAX_TOKENS) or 0
    return {
        "whitespace": f"the reply ran on past its {MAX_TOKENS} tokens (more than "
        f"{budget:,} characters without an end); it was not read further",
        "empty": f"the server sent {EMPTY_CHUNKS:,} chunks in a row without a word of "
        "reply; it was not read further",
        "body": f"the reply ran on past {budget * BYTES_PER_CHAR + SPARE_BYTES:,} bytes (more "
        "than its max_tokens could make) without an end; it was not read further",
    }[endless.kind]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("endless", ["whitespace", "empty", "body"], indirect=True)
def test_an_endless_reply_is_read_no_further_than_max_tokens_allows(endless: Endless) -> None:
    with pytest.raises(LLMCallFailed) as failed:
        client(endless.base_url).text([{"role": "user", "content": "hi"}], stage="memorize")
    assert str(failed.value) == (
        f"the LLM server at {endless.base_url} kept failing after 2 attempts: {said(endless)}"
    )
    assert endless.calls == 2  # asked again once, as for any broken reply
    for _ in range(2):  # each stream closed: the server stops writing it
        assert endless.hung_up.acquire(timeout=60)
