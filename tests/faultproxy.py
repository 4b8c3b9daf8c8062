"""A fault-injecting HTTP proxy in front of an OpenAI-compatible server (tests, benchmarks).

It listens on 127.0.0.1 (a free port) and forwards every request to the upstream
server, except that chat completions may instead get one of the faults real local
servers produce under load (KINDS): a 500, a 429 with a short Retry-After, a hang
longer than the client's timeout, a 200 whose body is not JSON, a body cut short of
its Content-Length, or a connection closed without a reply. Faults are forced for the
next N requests (`force`) or drawn at `rate` from a seeded random generator. A faulty
request never reaches upstream, so the upstream sees exactly the calls that succeeded.

Bounded: threads are daemons, a hang ends at `hang_s` or on close, idle connections
time out, and the proxy shuts itself down after `lifetime_s`.

    with RunningServer() as server, FaultProxy(server.base_url, rate=0.3) as proxy:
        settings = LLMSettings(base_url=proxy.base_url, timeout=1, ...)
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import re
import socket
import threading
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KINDS = ("500", "429", "hang", "not_json", "truncated", "dropped")
# Not in the default mix: a gateway's HTML error page sent as a 200 text/html, which the
# openai SDK hands back as a plain str instead of raising.
EXTRA_KINDS = ("html",)
# A plausible start of a chat completion, as a server cut off mid-write would send it.
_PARTIAL = b'{"id": "chatcmpl-fault", "object": "chat.completion", "choices": [{"index": 0, '
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyServer
    protocol_version = "HTTP/1.1"  # keep-alive, so a drop can hit a reused connection
    disable_nagle_algorithm = True

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = self.server.proxy.next_fault() if "/chat/completions" in self.path else None
        if kind is None:
            self._forward(body)
        else:
            getattr(self, f"_fault_{kind}")()

    def _forward(self, body: bytes) -> None:
        proxy = self.server.proxy
        upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", *_HOP_BY_HOP}}
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            reply = upstream.getresponse()
            data = reply.read()
        except (OSError, http.client.HTTPException):
            proxy.count("upstream_failed")  # a real gateway's answer, not an injected fault
            self._error(502)
            return
        finally:
            upstream.close()
        proxy.count("forwarded")  # before the reply goes out, so callers see it counted
        self.send_response(reply.status)
        for key, value in reply.getheaders():
            if key.lower() not in _HOP_BY_HOP and key.lower() not in {"server", "date"}:
                self.send_header(key, value)
        self._finish(data)

    def _finish(self, data: bytes, length: int | None = None) -> None:
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, extra: dict[str, str] | None = None) -> None:
        data = json.dumps({"error": {"message": f"injected {status}", "code": status}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self._finish(data)

    def _drop(self) -> None:
        """Close at once with a FIN (the request was read, so no RST)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _fault_500(self) -> None:
        self._error(500)

    def _fault_429(self) -> None:
        self._error(429, {"Retry-After": f"{self.server.proxy.retry_after_s:g}"})

    def _fault_hang(self) -> None:
        self.server.proxy.stopped.wait(self.server.proxy.hang_s)
        self._drop()

    def _fault_not_json(self) -> None:
        # A complete HTTP reply (right Content-Length) whose JSON body breaks off.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self._finish(_PARTIAL + b"<!-- overloaded -->")

    def _fault_truncated(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self._finish(_PARTIAL, length=len(_PARTIAL) + 400)
        self._drop()

    def _fault_dropped(self) -> None:
        self._drop()

    def _fault_html(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self._finish(b"<html><body><h1>502 Bad Gateway</h1></body></html>")


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, proxy: FaultProxy) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.proxy = proxy

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        conn.settimeout(30)  # a client that goes quiet cannot hold a thread for ever
        return conn, address


class FaultProxy:
    """The proxy on a background thread; use as a context manager. `counts` holds how many
    faults of each kind were injected, "forwarded" for requests passed through and
    "upstream_failed" for those the upstream did not answer (sent back as a 502)."""

    def __init__(
        self,
        upstream: str,
        *,
        rate: float = 0.0,
        kinds: tuple[str, ...] = KINDS,
        seed: int = 0,
        hang_s: float = 3.0,
        retry_after_s: float = 0.02,
        lifetime_s: float = 600.0,
    ) -> None:
        unknown = set(kinds) - set(KINDS) - set(EXTRA_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")
        parts = urlsplit(upstream)
        if parts.hostname not in ("127.0.0.1", "localhost"):
            raise ValueError("the fault proxy only forwards to this machine")
        self.upstream_host, self.upstream_port = parts.hostname, parts.port or 80
        self._path = parts.path.rstrip("/")
        self.rate, self.kinds, self.hang_s = rate, kinds, hang_s
        self.retry_after_s, self.lifetime_s = retry_after_s, lifetime_s
        self.counts: Counter[str] = Counter()
        self.stopped = threading.Event()
        self._random = random.Random(seed)
        self._forced: deque[str] = deque()
        self._lock = threading.Lock()
        self._server = _ProxyServer(self)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="fault-proxy")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._path}"

    @property
    def faults(self) -> int:
        return sum(self.counts[kind] for kind in KINDS)

    def force(self, kind: str, times: int = 1) -> None:
        """The next `times` chat completions get `kind`, before any random fault."""
        if kind not in KINDS + EXTRA_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}")
        with self._lock:
            self._forced.extend([kind] * times)

    def next_fault(self) -> str | None:
        with self._lock:
            if self._forced:
                kind: str | None = self._forced.popleft()
            elif self.rate and self._random.random() < self.rate:
                kind = self._random.choice(self.kinds)
            else:
                kind = None
            if kind is not None:
                self.counts[kind] += 1
        return kind

    def count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _serve(self) -> None:
        timer = threading.Timer(self.lifetime_s, self.close)
        timer.daemon = True
        timer.start()
        try:
            self._server.serve_forever(poll_interval=0.1)
        finally:
            timer.cancel()

    def close(self) -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()  # wakes hanging handlers
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# -- comparing memories built with and without faults -------------------------------------

_CREATED = re.compile(r"^created: .*\n", re.MULTILINE)


def memory_snapshot(root: Path) -> dict[str, str]:
    """Every file of a memory but .git/, the lock and the cache, with its time stamps removed.

    Two fault-free builds of the same documents differ only in front matter `created:`,
    .gam_meta.json `created_at`/`updated_at`, and the root README's title, which is the
    folder's name: compare folders of the same name (a/memory and b/memory)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith((".git/", ".gam/cache/")) or rel == ".gam/lock":
            continue
        text = path.read_text(encoding="utf-8")
        if rel == ".gam_meta.json":
            meta = {k: v for k, v in json.loads(text).items() if not k.endswith("_at")}
            text = json.dumps(meta, sort_keys=True)
        elif rel.endswith(".md"):
            text = _CREATED.sub("", text, count=1)
        out[rel] = text
    return out
