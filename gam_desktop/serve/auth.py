"""Who may talk to the memory over HTTP: a bearer token, a body size limit, loopback hosts.

The token comes from `--token`, else GAM_SERVE_TOKEN, else the OS keychain, where one is
generated and kept the first time (the app shows it to copy). `Guard` is plain ASGI
middleware in front of both servers (the OpenAI-compatible one and MCP's streamable HTTP):
no token, or a wrong one, is 401; a body over the limit is 413 before any of it is parsed;
a Host header that is not a loopback name is 403 while bound to loopback (a web page that
rebinds its own domain to 127.0.0.1 would otherwise reach the memory). No CORS headers are
ever sent, so a browser page cannot read a reply either.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gam_desktop import keystore
from gam_desktop.serve.errors import error_body

TOKEN_ENV = "GAM_SERVE_TOKEN"
KEYCHAIN_ACCOUNT = "gam-serve token"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765  # gam-serve's; gam-mcp --http takes the next
MAX_BODY = 4 * 1024 * 1024  # bytes: a long conversation with pasted documents fits


@dataclass(frozen=True)
class Token:
    value: str
    source: str  # "flag", "environment", "keychain", "generated", "session"


def resolve_token(flag: str | None = None) -> Token:
    """The token to require: given, from the environment, kept in the keychain, or a new
    one (kept there, or for this session only when there is no keychain)."""
    if flag:
        return Token(flag, "flag")
    if os.environ.get(TOKEN_ENV):
        return Token(os.environ[TOKEN_ENV], "environment")
    try:
        kept = keystore.get_key(KEYCHAIN_ACCOUNT)
    except keystore.KeychainUnavailable:
        kept = None
    if kept:
        return Token(kept, "keychain")
    fresh = new_token()
    try:
        keystore.set_key(KEYCHAIN_ACCOUNT, fresh)
    except keystore.KeychainUnavailable:
        return Token(fresh, "session")
    return Token(fresh, "generated")


def new_token() -> str:
    return "gam-" + secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    return host.strip("[]") in LOOPBACK


class Guard:
    """ASGI middleware: the token, the size limit and the Host check, in that order of
    cheapness. `open_paths` need no token (/health, for a client checking it is up)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        max_body: int = MAX_BODY,
        loopback_only: bool = True,
        open_paths: tuple[str, ...] = ("/health",),
    ) -> None:
        self.app = app
        self.token = token.encode()
        self.max_body = max_body
        self.loopback_only = loopback_only
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _send_error(send, *refusal)
            return
        declared = headers.get("content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_body:
            await _send_error(send, 413, self._too_large())
            return
        body = await self._read_body(receive)
        if body is None:
            await _send_error(send, 413, self._too_large())
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, scope: Scope, headers: dict[str, bytes]) -> tuple[int, str] | None:
        if self.loopback_only:
            host = headers.get("host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host and not is_loopback(name):
                return 403, f"This memory answers only on loopback addresses, not '{host}'."
        if scope["path"] in self.open_paths:
            return None
        given = headers.get("authorization", b"")
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not value.strip():
            return (
                401,
                "An API key is required: send 'Authorization: Bearer <token>' "
                "(the token is in GAM Desktop ▸ Settings, or printed by gam-serve).",
            )
        if not hmac.compare_digest(value.strip(), self.token):
            return 401, "The API key (token) is not this memory's."
        return None

    def _too_large(self) -> str:
        return f"The request is larger than this server accepts ({self.max_body:,} bytes)."

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it passes the limit (sent in chunks, a body need
        not declare its length)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read already, then the connection's own messages
    (a disconnect, while a reply streams)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _send_error(send: Send, status: int, message: str) -> None:
    data = json.dumps(error_body(status, message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
