"""The connections gam-serve and gam-mcp --http keep open: a request must arrive in time,
and there are never more of them than the server can hold.

uvicorn times out only the wait between two requests (`timeout_keep_alive`). A client
that sends half a request head and then nothing held its connection, a file descriptor,
for ever: 400 of them (slowloris) ran the server out of descriptors. What uvicorn offers
does not close them: `h11_max_incomplete_event_size` bounds a head's size, not its time,
and `limit_concurrency` answers 503 to every new request once that many connections are
open, stalled ones included: it would lock the real clients out instead. So the h11
protocol gets what Apache's mod_reqtimeout and nginx's client_header_timeout give a
server: a request's head must be whole within `head_timeout` of its first byte (of the
connection, for the first request), else 408 and the connection is closed; its body must
come at `MIN_BODY_RATE` bytes a second after a first `head_timeout` (a body sent a byte at
a time holds a connection as long). And when `max_connections` are open, the connections
waiting longest for a request (stalled heads, idle keep-alives) are closed to make room
for a new one, as nginx reuses idle connections; with none waiting, the new one gets 503.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any, cast

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEAD_TIMEOUT = 10.0  # seconds for a whole request head: a client sends it at once
MIN_BODY_RATE = 500  # bytes a second a body must keep up after the first HEAD_TIMEOUT
MAX_CONNECTIONS = 128  # a memory's own apps need a few; a slot each for an upstream call
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
_ORDER = itertools.count()  # when a connection began to wait for a request, in order

NO_ROOM = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


def connection_limit() -> int:
    """MAX_CONNECTIONS, or a quarter of the descriptors this process may open when that is
    fewer (macOS gives a program 256): each request opens an upstream connection and
    files of the memory besides its own."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # Windows: no such limit to stay under
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // 4))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on the request (head, then body) and a bound
    on the connections open at once. Made per server by `protocol`."""

    head_timeout: float = HEAD_TIMEOUT
    max_connections: int = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_since = 0  # when it began to wait for a request (_ORDER)
        self._body_started = 0.0
        self._body_bytes = 0

    # -- the request's deadline ---------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_since = next(_ORDER)
        self._arm(self.head_timeout)
        self._make_room()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        if state is h11.IDLE:  # a head begun, not whole: timed from its first byte
            if self._deadline is None:
                self._arm(self.head_timeout)
        elif state is h11.SEND_BODY:
            if not self._body_bytes:
                self._body_started = self.loop.time()
            self._body_bytes += len(data)
            self._arm_at(self._body_started + self.head_timeout + self._body_bytes / MIN_BODY_RATE)
        else:  # the whole request is in: the app's to answer
            self._disarm()
            self._body_bytes = 0

    def on_response_complete(self) -> None:
        super().on_response_complete()  # (uvicorn's keep-alive wait times the next one)
        self._waiting_since = next(_ORDER)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, seconds: float) -> None:
        self._arm_at(self.loop.time() + seconds)

    def _arm_at(self, when: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_at(when, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.SEND_BODY:
            if self.flow.read_paused:  # the app has not taken what came: not the client's delay
                self._arm(self.head_timeout)
                return
            log.info("closing a connection whose request body stalled: %s", self.client)
            self.transport.close()  # the app hears a disconnect
            return
        log.info("closing a connection whose request head did not come in time: %s", self.client)
        self.transport.write(TIMED_OUT)
        self.transport.close()

    # -- the bound on connections -----------------------------------------------------

    def _waiting(self) -> bool:
        """Whether this connection waits for a request (a head not whole yet, or nothing
        since its last reply): nothing is lost by closing it."""
        return (
            self.conn.their_state is h11.IDLE
            and (self.cycle is None or self.cycle.response_complete)
            and not self.transport.is_closing()
        )

    def _make_room(self) -> None:
        """Over `max_connections` with this one: close those waiting longest for a request
        (this one last), the new one with a 503 when none other waits."""
        excess = len(self.connections) - self.max_connections
        if excess <= 0:
            return
        waiting = sorted(
            (c for c in self.connections if isinstance(c, GuardedH11Protocol) and c._waiting()),
            key=lambda c: c._waiting_since,
        )
        for connection in waiting[:excess]:
            if connection is self:
                log.warning("%d connections open: refusing a new one", len(self.connections))
                self.transport.write(NO_ROOM)
            connection._disarm()
            connection.transport.close()


def protocol(
    head_timeout: float = HEAD_TIMEOUT, max_connections: int | None = None
) -> type[GuardedH11Protocol]:
    """The protocol class for one server: these limits (`max_connections` by default
    `connection_limit()`)."""
    limits = {
        "head_timeout": head_timeout,
        "max_connections": max_connections or connection_limit(),
    }
    return cast(type[GuardedH11Protocol], type("GuardedH11Protocol", (GuardedH11Protocol,), limits))


def uvicorn_options(
    head_timeout: float = HEAD_TIMEOUT, max_connections: int | None = None
) -> dict[str, Any]:
    """What gam-serve and gam-mcp --http pass uvicorn (`uvicorn.run`, `uvicorn.Config`)."""
    return {"http": protocol(head_timeout, max_connections)}


def serve(app: Any, host: str, port: int) -> None:
    """Run `app` as gam-serve and gam-mcp --http do: quiet, with the connection guard (a
    stalled client never holds a connection for long)."""
    import uvicorn

    uvicorn.run(
        app, host=host, port=port, log_level="warning", access_log=False, **uvicorn_options()
    )
