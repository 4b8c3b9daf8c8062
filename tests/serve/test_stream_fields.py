"""gam-serve's relay passes no secret on, whatever field a server streams it in and however
it ends its lines: `delta.reasoning` (vLLM, Ollama, OpenRouter), the legacy
`delta.function_call.arguments`, a field not named anywhere, and SSE framed with CR, LF or
CRLF. And it refuses what it cannot forward (a `model` that is no string, NaN, Infinity)
with a 400, not a 500."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import pytest

from gam_desktop.engine.llm.redact import LABEL, Redactor
from gam_desktop.serve.app import ServeConfig, create_app
from gam_desktop.serve.upstream import _lines, _RedactedStream
from tests.serve import test_endpoint
from tests.serve.running import running
from tests.serve.test_endpoint import (
    HEAD,
    HEADERS,
    TOKEN,
    UPSTREAM_KEY,
    Served,
    _streamed,
    raw_upstream,
)

pytestmark = pytest.mark.timeout(180)

# the endpoint's fixtures: a memory, the endpoint's config, the endpoint served
memory, config, served = test_endpoint.memory, test_endpoint.config, test_endpoint.served

CUT = 9  # where the key is cut: inside it, after its "sk-" start


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"id": "c", "choices": [choice]}).encode()


def _texts(out: bytes) -> dict[str, str]:
    """Each streamed string's pieces joined, by where it is in the delta (what a client
    rebuilds), from the relay's output split on any SSE line end."""
    texts: dict[str, str] = {}
    for line in out.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        if not line.startswith(b"data: {"):
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"]
        stack = [("", delta)]
        while stack:
            where, node = stack.pop()
            for key, value in node.items():
                if isinstance(value, str):
                    texts[where + key] = texts.get(where + key, "") + value
                elif isinstance(value, dict):
                    stack.append((f"{where}{key}.", value))
    return texts


@pytest.mark.parametrize(
    "field",
    [
        ("reasoning",),  # vLLM's, Ollama's, OpenRouter's thinking text
        ("function_call", "arguments"),  # the legacy single function call
        ("x_vendor_thoughts",),  # a name nobody lists
    ],
)
def test_a_key_split_across_any_streamed_field_is_redacted(field: tuple[str, ...]) -> None:
    def delta(text: str) -> dict[str, Any]:
        value: Any = text
        for name in reversed(field):
            value = {name: value}
        return value

    stream = _RedactedStream(Redactor([UPSTREAM_KEY, TOKEN]))
    first = stream.line(_event(delta("say " + UPSTREAM_KEY[:CUT])))
    assert first == b""  # held back: it ends with the start of the key
    out = first + stream.line(_event(delta(UPSTREAM_KEY[CUT:] + " end")))
    out += stream.line(_event({}, "stop")) + stream.line(b"data: [DONE]")
    assert _texts(out)[".".join(field)] == f"say {LABEL} end"
    assert UPSTREAM_KEY[CUT:].encode() not in out


def test_a_constant_field_that_could_start_the_key_holds_back_no_more_than_its_line() -> None:
    """A field every event repeats (an id) whose end could start a secret is held back
    only until the next event shows what follows, not to the end of the stream."""
    redactor = Redactor([UPSTREAM_KEY])
    stream = _RedactedStream(redactor)
    constant = "id-" + UPSTREAM_KEY[:2]  # ends with what the key starts with

    def event(n: int) -> bytes:
        return b"data: " + json.dumps({"id": constant, "n": n}).encode()

    assert stream.line(event(1)) == b""
    assert stream.line(event(2)) == event(1) + b"\n"
    assert stream.line(event(3)) == event(2) + b"\n"


def test_sse_lines_end_with_cr_lf_or_crlf() -> None:
    assert _lines(b"a\rb\nc\r\nd") == ([b"a", b"b", b"c"], b"d")
    # a CR at the end may be half a CRLF: it waits for what follows
    lines, rest = _lines(b"a\r\nb\r")
    assert (lines, rest) == ([b"a"], b"b\r")
    assert _lines(rest + b"\nc\r\r") == ([b"b", b"c"], b"\r")
    assert _lines(b"\r" + b"d\n") == ([b"", b"d"], b"")


def test_a_key_split_in_a_stream_framed_with_bare_cr_is_redacted(
    config: ServeConfig, memory: Path
) -> None:
    """Valid SSE (the OpenAI SDK reads it) whose lines end with a CR alone, the key cut
    across two events: the client gets neither half joined."""
    cr = [
        _event({"role": "assistant", "content": "k " + UPSTREAM_KEY[:CUT]}),
        _event({"content": UPSTREAM_KEY[CUT:] + " end"}),
        _event({}, "stop"),
        b"data: [DONE]",
    ]

    def reply(conn: socket.socket) -> None:
        conn.sendall(HEAD + b"".join(line + b"\r\r" for line in cr))

    text = _streamed(config, reply)
    assert UPSTREAM_KEY not in text and UPSTREAM_KEY[CUT:] not in text
    assert _texts(text.encode())["content"] == f"k {LABEL} end"


@pytest.mark.parametrize(
    "raw",
    [
        '{"model": ["a"], "messages": [{"role": "user", "content": "Hi?"}]}',
        '{"model": {"x": 1}, "messages": [{"role": "user", "content": "Hi?"}]}',
        '{"model": "gam", "temperature": NaN, "messages": [{"role": "user", "content": "Hi?"}]}',
        '{"model": "gam", "max_tokens": -Infinity, "messages": [{"role": "user", "content": "?"}]}',
        '{"model": "gam", "top_p": 1e999, "messages": [{"role": "user", "content": "Hi?"}]}',
    ],
)
def test_a_request_that_cannot_be_forwarded_is_a_400_not_a_500(served: Served, raw: str) -> None:
    reply = httpx2.post(
        f"{served.url}/v1/chat/completions",
        content=raw.encode(),
        headers={**HEADERS, "Content-Type": "application/json"},
    )
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]


def test_a_key_in_a_non_streamed_replys_object_keys_is_redacted(config: ServeConfig) -> None:
    """A proxy's debug field keyed by the key it was sent: every string of the JSON,
    names of fields included."""
    reply = {
        "id": "c",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "It escalates."}}],
        "debug": {UPSTREAM_KEY: "your key", "nested": [{"k": f"x{UPSTREAM_KEY}"}]},
    }
    data = json.dumps(reply).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}"
    with raw_upstream(lambda conn: conn.sendall(head.encode() + b"\r\n\r\n" + data)) as url:
        settings = config.settings.model_copy(update={"base_url": url})
        app, endpoint = create_app(replace(config, settings=settings))
        with running(app) as served_at:
            body = {"model": "gam", "messages": [{"role": "user", "content": "Who?"}]}
            got = httpx2.post(f"{served_at}/v1/chat/completions", json=body, headers=HEADERS)
            assert endpoint.writer.drain(60)
    assert got.status_code == 200 and UPSTREAM_KEY not in got.text
    assert got.json()["debug"] == {LABEL: "your key", "nested": [{"k": f"x{LABEL}"}]}
