"""Clients that open a connection and then stall (issue 36): half a request head sent and
nothing more held the connection, a file descriptor, for ever; 400 of them (slowloris) ran
gam-serve out of descriptors. A request head must be whole in time (408, closed), a body
must keep coming, the connections open at once are bounded (those waiting longest for a
request make room), and real requests are answered all the while. Against a real gam-serve
on 127.0.0.1; the limits are lowered so that no test waits long, and a stalled socket is
waited on until the server closes it (a generous bound: closed or failed)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from starlette.types import ASGIApp

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.serve.app import ServeConfig, create_app
from gam_desktop.serve.connections import connection_limit, uvicorn_options
from tests.serve.test_endpoint import ONCALL, QUESTION, TOKEN
from tests.serve.test_serve_cli import free_port

pytestmark = pytest.mark.timeout(300)

HALF_HEAD = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CLOSED_WITHIN = 30.0  # seconds: the bound on waiting for the server to close a socket


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


@contextmanager
def serving(app: ASGIApp, **limits: Any) -> Iterator[int]:
    """The port of a uvicorn server running `app` as gam-serve does, with `limits`."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        **uvicorn_options(**limits),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:  # uvicorn has no event for it; a generous deadline
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(60)


@pytest.fixture
def app(memory: Path, settings: LLMSettings) -> ASGIApp:
    app, _endpoint = create_app(
        ServeConfig(gam_dir=memory, settings=settings, token=TOKEN, learn=False)
    )
    return app


def connect(port: int, sent: bytes = HALF_HEAD) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN)
    if sent:
        sock.sendall(sent)
    return sock


def until_closed(sock: socket.socket) -> bytes:
    """What the server wrote before it closed `sock`; fails if it is still open after
    CLOSED_WITHIN seconds."""
    sock.settimeout(CLOSED_WITHIN)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {CLOSED_WITHIN:g} s: {received!r}") from None
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return received


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:  # nothing to read, and no end: open
        return True
    except ConnectionResetError:
        return False
    finally:
        sock.setblocking(True)


def one_response(sock: socket.socket) -> bytes:
    """One whole response read from a keep-alive connection (its Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head


def test_stalled_request_heads_are_closed_while_real_requests_are_answered(
    app: ASGIApp,
) -> None:
    with serving(app, head_timeout=1.0) as port, ExitStack() as stack:
        url = f"http://127.0.0.1:{port}"
        stalled = [connect(port) for _ in range(40)]
        silent = connect(port, b"")  # connected, and never a byte
        # a keep-alive connection: one request answered, then half of the next one
        kept = connect(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert one_response(kept).startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127")
        for sock in (*stalled, silent, kept):
            stack.callback(sock.close)

        # while they stall, the others are served
        assert httpx2.get(f"{url}/health").status_code == 200
        models = httpx2.get(f"{url}/v1/models", headers=AUTH)
        assert models.status_code == 200, models.text
        question = {"model": "gam", "messages": [{"role": "user", "content": QUESTION}]}
        asked = httpx2.post(f"{url}/v1/chat/completions", json=question, headers=AUTH, timeout=60)
        assert asked.status_code == 200, asked.text

        for sock in (*stalled, silent, kept):
            assert until_closed(sock).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert httpx2.get(f"{url}/health").status_code == 200


def test_a_body_that_stops_coming_is_closed(app: ASGIApp, caplog: pytest.LogCaptureFixture) -> None:
    """A head in time and then a body that stalls (a slow POST): closed once it falls
    behind the body's minimum rate, the app told the client is gone."""
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
    )
    with serving(app, head_timeout=0.5) as port:
        slow = connect(port, head + b'{"model": "gam", ')
        assert httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200
        assert not until_closed(slow).startswith(b"HTTP/1.1 200")
        assert httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200
    assert "Traceback" not in caplog.text


def test_at_the_connection_limit_those_waiting_longest_make_room(app: ASGIApp) -> None:
    """Eight connections at most: eight stalled heads, and a real request still gets in:
    the oldest stalled one is closed for it, the others are left alone."""
    with serving(app, head_timeout=120, max_connections=8) as port, ExitStack() as stack:
        stalled = [connect(port) for _ in range(8)]
        for sock in stalled:
            stack.callback(sock.close)
        assert httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200
        assert until_closed(stalled[0]) == b""  # closed to make room: nothing to say
        assert all(still_open(sock) for sock in stalled[2:])


def test_with_every_connection_busy_a_new_one_is_told_so(app: ASGIApp) -> None:
    """Two connections at most, both in the middle of a request (their bodies coming): a
    third is answered 503 and closed, and the busy ones are left alone."""
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 100\r\n"
        b"Expect: 100-continue\r\n\r\n"
    )
    with serving(app, head_timeout=120, max_connections=2) as port, ExitStack() as stack:
        busy = [connect(port, head) for _ in range(2)]
        for sock in busy:
            stack.callback(sock.close)
            # the app reads the body (its "100 Continue" says so): the request is under way
            assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n")
            sock.sendall(b"{")
        refused = connect(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert until_closed(refused).startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert all(still_open(sock) for sock in busy)


@pytest.mark.parametrize("command", ["gam-serve", "gam-mcp"])
def test_the_commands_serve_with_the_bounds(
    command: str, memory: Path, settings: LLMSettings
) -> None:
    """gam-serve and gam-mcp --http as a person runs them: at their connection limit, a
    new connection makes room by closing the one that has waited longest for a request."""
    port = free_port()
    main = {"gam-serve": "serve.cli import serve_main", "gam-mcp": "serve.mcp_cli import mcp_main"}
    name = main[command].rsplit(" ", 1)[1]
    code = f"import sys; from gam_desktop.{main[command]}; sys.exit({name}())"
    argv = ["--gam-dir", str(memory), "--port", str(port), "--token", TOKEN]
    argv += ["--http"] if command == "gam-mcp" else []
    environment = {**os.environ, "OPENAI_BASE_URL": settings.base_url, "OPENAI_MODEL": "scripted",
                   "OPENAI_API_KEY": "k"}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", code, *argv], env=environment, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}/health"
        deadline = time.monotonic() + 120  # a loaded machine starts it slowly
        while True:  # any answer: it listens
            assert process.poll() is None and time.monotonic() < deadline, process.stderr
            try:
                httpx2.get(url)
                break
            except httpx2.TransportError:
                time.sleep(0.05)  # not listening yet
        with ExitStack() as stack:
            stalled = [connect(port) for _ in range(connection_limit())]
            for sock in stalled:
                stack.callback(sock.close)
            httpx2.get(url)  # answered, whatever it says (gam-mcp has no /health)
            assert until_closed(stalled[0]) == b""
    finally:
        process.terminate()
        process.communicate(timeout=60)
