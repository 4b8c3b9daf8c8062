"""How much of a reply's body the SDK may read: of an error, no more than its start.

The openai SDK reads the whole body of a reply with an error status (4xx, 5xx) to build its
error (`APIStatusError`: the server's message and body), and httpx reads the whole body of a
call not streamed (the embeddings') and of a redirect: a server answering 500 (or 429,
which is asked again) with a body that never ends had the app read gigabytes into memory.
The body of a reply that is no success is read no further than ERROR_BODY_LIMIT bytes
(counted after decompression); the connection is then closed (the server sees the hang-up)
and the SDK raises the error of the status from what was read, as before: a server's short
JSON error (a 401's, a 429's) whole, a long one's start. A body that breaks off or times out
midway is what came of it: the status is still what the person is told. So is a body that
trickles in (a byte every few seconds, each read well within its timeout, for ever): it is
read for ERROR_BODY_SECONDS from the reply's head at most, then closed and the error raised
from what came, as past the size; the read timeout still gives up on a body that falls
silent, as on any (the last read after the deadline takes no longer than it). A successful
reply's body is bounded only where its caller says how long it can be (`body_limit`: the
embeddings'), and is `Overlong` past it (streaming.py's word for a reply that runs on); the
chat client reads its replies itself, within their own bounds (streaming.py).

An event hook of the SDK's own HTTP client, not a transport around it: httpx goes through
the environment's proxies (HTTPS_PROXY, NO_PROXY) only with transports it makes itself. The
hook runs before anything reads the body and puts a bounded stream in place of the body's
(`Response.stream`, as httpx itself wraps it). Gzip and deflate are decoded here, counted as
they are decoded (a 64 kB gzip body unpacks to 64 MB), and handed on decoded; a body in
another encoding (br, zstd: which httpx decodes only with extra packages) is not read.
"""

from __future__ import annotations

import functools
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx2

from gam_desktop.engine.llm.client import sdk
from gam_desktop.engine.llm.streaming import Overlong

ERROR_BODY_LIMIT = 64 * 1024  # bytes of an error's body: a JSON error takes a few hundred
# Seconds an error's body may take to come, from the reply's head: a JSON error comes with
# its head or a moment after it, and even 64 kB take a fraction of a second on any network
# a call works on. Only a body that trickles takes longer, and the status is known anyway.
ERROR_BODY_SECONDS = 10.0
_ZLIB = ("gzip", "x-gzip", "deflate")  # the encodings decoded here (zlib's header says which)


def http_client(base_url: str, timeout: float, body_limit: int | None = None) -> Any:
    """The HTTP client the SDK would make for itself (its connection limits, redirects, the
    environment's proxies; `base_url` and `timeout` given to it as the SDK gives them)
    reading no more than ERROR_BODY_LIMIT bytes of a reply that is no success and, with
    `body_limit`, no more than `body_limit` bytes of any (Overlong past them)."""
    hook = functools.partial(bound, body_limit=body_limit)
    return sdk().DefaultHttpxClient(
        base_url=base_url, timeout=timeout, event_hooks={"response": [hook]}
    )


def bound(response: httpx2.Response, body_limit: int | None = None) -> None:
    """Have `response`'s body read within its bounds (an httpx response hook: run before
    the body is read, once the reply's head has come)."""
    limit = body_limit if response.is_success else ERROR_BODY_LIMIT
    if limit is None:
        return
    # (read here, not bound at import: a test makes it short)
    deadline = None if response.is_success else time.monotonic() + ERROR_BODY_SECONDS
    assert isinstance(response.stream, httpx2.SyncByteStream)  # (a client that is not async)
    encoding = response.headers.get("content-encoding", "").strip().lower()
    # handed on decoded, and perhaps cut short: httpx must not decode it again
    for name in ("content-encoding", "content-length"):
        response.headers.pop(name, None)
    response.stream = Bounded(
        response.stream, encoding, limit, whole=response.is_success, deadline=deadline
    )


class Bounded(httpx2.SyncByteStream):
    """The first `limit` bytes of a body (`raw`, in `encoding`), decoded; then the body is
    closed. Past them: the end of the body or, for a body that must be `whole` (a success's),
    Overlong. The bytes that come encoded count too: gzip that unpacks to nothing,
    endlessly, is cut as well. With a `deadline` (time.monotonic's), no part is asked for
    after it: the body ends there, as past `limit`."""

    def __init__(
        self,
        raw: httpx2.SyncByteStream,
        encoding: str,
        limit: int,
        *,
        whole: bool,
        deadline: float | None = None,
    ):
        self._raw = raw
        self._encoding = encoding
        self._limit = limit
        self._whole = whole
        self._deadline = deadline
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._read()
        finally:
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._raw.close()

    def _read(self) -> Iterator[bytes]:
        decode = _decoder(self._encoding)
        if decode is None:
            return  # an encoding not decoded here: nothing is read
        room, came = self._limit, 0
        try:
            for part in self._raw:
                came += len(part)
                data = decode(part, room + 1)  # one byte past the room says it went on
                if len(data) > room or came > self._limit:
                    if self._whole:
                        raise Overlong(
                            f"the reply ran on past {self._limit:,} bytes; it was not read further"
                        )
                    yield data[:room]
                    return
                room -= len(data)
                yield data
                if self._deadline is not None and time.monotonic() >= self._deadline:
                    return  # it trickles: what came is its body
        # An error's body broken off, timed out or damaged midway: what came is its body.
        except httpx2.TransportError:
            if self._whole:
                raise
        except zlib.error as exc:
            if self._whole:  # as httpx says it
                raise httpx2.DecodingError(f"the body is no valid {self._encoding}") from exc


def _decoder(encoding: str) -> Callable[[bytes, int], bytes] | None:
    """How to decode a part of a body in `encoding` into at most n bytes (the rest of the
    part is dropped: the body is not read past n), or None for an encoding not decoded
    here."""
    if encoding in ("", "identity"):
        return lambda part, _n: part
    if encoding not in _ZLIB:
        return None
    # Gzip's or zlib's header, told apart by zlib (raw deflate, without one, is taken for
    # a damaged body: HTTP's "deflate" is zlib's format).
    unpacker = zlib.decompressobj(zlib.MAX_WBITS | 32)

    def decode(part: bytes, n: int) -> bytes:
        return b"" if unpacker.eof else unpacker.decompress(part, n)

    return decode
