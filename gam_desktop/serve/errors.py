"""Errors as OpenAI's API words them, so that every OpenAI client shows them as it would
OpenAI's own: `{"error": {"message", "type", "param", "code"}}` with the matching status."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
    502: "upstream_error",
    503: "server_error",
    504: "upstream_error",
}


class ServeError(Exception):
    """A request refused or failed, said in OpenAI's error format."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_response(status: int, message: str, code: str | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(status, message, code), status_code=status, headers=headers)


async def on_serve_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServeError)
    return error_response(exc.status, exc.message, exc.code)


async def on_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) in the same format."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"There is no {request.method} {request.url.path} here; see /v1/models."
    elif exc.status_code == 405:
        message = f"{request.url.path} does not accept {request.method}."
    else:
        message = str(exc.detail)
    return error_response(exc.status_code, message)


async def on_unexpected(_request: Request, _exc: Exception) -> Response:
    """A bug: the client gets a plain 500 (never a traceback, which might hold settings)."""
    return error_response(500, "The memory server failed on this request (a bug).", "internal")


HANDLERS = {ServeError: on_serve_error, HTTPException: on_http_error, Exception: on_unexpected}
