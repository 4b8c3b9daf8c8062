"""Forwarding a chat completion to the configured LLM and passing its reply back unchanged.

The request goes out as the client wrote it (its options, tools, streaming) with two
changes: the messages carry the memory's passages and the model name is mapped. The reply
comes back byte for byte (a stream chunk by chunk), so this speaks HTTP itself (httpx2,
which the openai SDK uses) rather than through `LLMClient`, whose job is to parse, retry
and validate replies for the engine. The endpoint and key are the engine's `LLMSettings`.

The upstream key is sent upstream and nowhere else: an upstream error passed back to the
client has it removed, and nothing here logs a header.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.serve.errors import ServeError, error_body


@dataclass
class Forwarded:
    """A non-streaming upstream reply: its JSON and the assistant's text in it."""

    body: dict[str, Any]
    text: str = ""


class Upstream:
    """The configured LLM, reached through one connection pool."""

    def __init__(self, settings: LLMSettings, model_map: dict[str, str] | None = None) -> None:
        self.settings = settings
        self.model_map = model_map if model_map is not None else {"gam": settings.model}
        self._client = httpx2.AsyncClient(
            base_url=settings.base_url.rstrip("/") + "/",
            timeout=httpx2.Timeout(settings.timeout, connect=10.0),
            headers={"Authorization": f"Bearer {settings.key_value()}"},
        )

    async def close(self) -> None:
        await self._client.aclose()

    def model_for(self, requested: str | None) -> str:
        """The upstream model for the name a client asked for: mapped when configured, the
        configured model when none was given, else the client's name as it is."""
        if not requested:
            return self.settings.model
        return self.model_map.get(requested, requested)

    async def complete(self, request: dict[str, Any]) -> Forwarded:
        """A non-streaming completion: the upstream's JSON, or a ServeError."""
        try:
            response = await self._client.post("chat/completions", json=request)
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None
        if response.status_code >= 400:
            raise self._refused(response.status_code, response.text)
        try:
            body = response.json()
        except ValueError:
            raise ServeError(502, "The LLM answered with something that is not JSON.") from None
        if not isinstance(body, dict):
            raise ServeError(502, "The LLM answered with something that is not a completion.")
        return Forwarded(body, _message_text(body))

    async def stream(
        self, request: dict[str, Any], on_done: Callable[[str], None]
    ) -> AsyncIterator[bytes]:
        """A streaming completion: the upstream's bytes as they come. `on_done` hears the
        whole text once the upstream has finished, before the client sees the end (so the
        turn is queued by the time the client has its answer). Errors before the first
        byte are ServeErrors."""
        sent = self._client.build_request("POST", "chat/completions", json=request)
        try:
            response = await self._client.send(sent, stream=True)
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None
        if response.status_code >= 400:
            body = (await response.aread()).decode("utf-8", "replace")
            await response.aclose()
            raise self._refused(response.status_code, body)
        return self._relay(response, on_done)

    async def _relay(
        self, response: httpx2.Response, on_done: Callable[[str], None]
    ) -> AsyncIterator[bytes]:
        # The answer is whole once the upstream says why it ended (a finish_reason) or
        # sends [DONE]; the turn is queued then, before that chunk reaches the client, and
        # not when the connection closes: a server that drops it after finishing (or never
        # sends [DONE]) has still answered. One that closes before either cut the reply
        # short, and a truncated answer is not saved as if it were whole.
        text, pending, answered = "", b"", False
        try:
            async for chunk in response.aiter_raw():
                *lines, pending = (pending + chunk).split(b"\n")
                text += "".join(_delta_text(line) for line in lines)
                if not answered and any(_ends_reply(line) for line in lines):
                    answered = True
                    on_done(text)
                yield chunk
            if not answered and _ends_reply(pending):
                on_done(text + _delta_text(pending))
        except httpx2.HTTPError as exc:
            if not answered:  # cut off mid-reply: the client sees an error event
                message = f"The LLM stopped answering mid-reply: {type(exc).__name__}."
                yield f"data: {json.dumps(error_body(502, message))}\n\n".encode()
        finally:
            await response.aclose()

    def _refused(self, status: int, text: str) -> ServeError:
        """An upstream error passed on with its status and, when it is OpenAI's shape, its
        own message; the key removed wherever the upstream echoed it."""
        text = self._redacted(text)
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict) and error.get("message"):
            message, code = str(error["message"]), error.get("code")
        elif isinstance(error, str):
            message, code = error, None
        else:
            message, code = f"The LLM refused the request (HTTP {status}).", None
        if status in (401, 403):  # gam-serve's key, not the client's token: not the client's 401
            return ServeError(
                502,
                f"The LLM refused gam-serve's API key (HTTP {status}): {message}",
                "upstream_auth",
            )
        status = status if 400 <= status < 600 else 502
        return ServeError(status, f"The LLM: {message}", str(code) if code is not None else None)

    def _unreachable(self, exc: httpx2.HTTPError) -> ServeError:
        if isinstance(exc, httpx2.TimeoutException):
            return ServeError(504, f"The LLM at {self.settings.base_url} did not answer in time.")
        return ServeError(
            502, f"Cannot reach the LLM at {self.settings.base_url}: {type(exc).__name__}."
        )

    def _redacted(self, text: str) -> str:
        key = self.settings.key_value()
        return text.replace(key, "[the API key]") if len(key) >= 8 else text


def _message_text(body: dict[str, Any]) -> str:
    try:
        content = body["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""
    return content if isinstance(content, str) else ""


def _ends_reply(line: bytes) -> bool:
    """Whether an SSE line ends the reply: [DONE], or a chunk saying why the reply ended
    ("stop", "length", …)."""
    line = line.strip()
    if line == b"data: [DONE]":
        return True
    if not line.startswith(b"data:") or b"finish_reason" not in line:
        return False
    try:
        return bool(json.loads(line[5:])["choices"][0].get("finish_reason"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return False


def _delta_text(line: bytes) -> str:
    """The text an SSE line adds: `data: {"choices": [{"delta": {"content": "…"}}]}`."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return ""
    data = line[5:].strip()
    if data == b"[DONE]":
        return ""
    try:
        content = json.loads(data)["choices"][0]["delta"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""
    return content if isinstance(content, str) else ""
