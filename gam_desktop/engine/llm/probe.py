"""What a server offers: its models, and whether structured output and tools work.

Settings fills its model lists with `list_models`; "Test connection" runs `probe`;
`detect_local` looks for Ollama, LM Studio and llama.cpp's llama-server on their default
ports. All use short timeouts and one retry at most.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from gam_desktop.engine.llm import capabilities
from gam_desktop.engine.llm.client import LLMClient
from gam_desktop.engine.llm.errors import LLMAuthError, LLMError, LLMUnreachable, NoModels
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.engine.llm.tools import Tool, chat_with_tools

REFUSED = (401, 403)  # the key is wrong or lacks the right


@dataclass(frozen=True)
class LocalServer:
    """A server people run on their own computer, at its default port. `own_path` is a
    path only that server answers (with JSON): its port is a common one, and whatever else
    listens there is not taken for it."""

    name: str
    port: int
    own_path: str = ""


LOCAL_SERVERS = (
    LocalServer("Ollama", 11434),
    LocalServer("LM Studio", 1234),
    LocalServer("llama.cpp", 8080, own_path="/props"),  # llama-server's default port
)


class _Ping(BaseModel):
    ok: bool


@dataclass
class ProbeReport:
    base_url: str
    models: list[str] = field(default_factory=list)
    reachable: bool = False
    structured: str = ""  # the best structured-output mode that worked
    tools: bool | None = None
    error: str = ""
    refused: str = ""  # the server answered, refusing the key: "HTTP 401"

    def summary(self) -> str:
        """What the test found, the finding that matters most first: a refused key is the
        headline (the server answered, but nothing will work with this key)."""
        if self.refused:
            return (
                f"The API key was refused: {self.base_url} answered {self.refused}. Check "
                "the key for this endpoint (each endpoint keeps its own), then test again."
            )
        if not self.reachable:
            return f"Cannot use {self.base_url}: {self.error}"
        parts = [f"Connected to {self.base_url}."]
        if self.models:
            shown = ", ".join(self.models[:8]) + (" …" if len(self.models) > 8 else "")
            parts.append(f"Models: {shown}.")
        parts.append(f"Structured output: {self.structured or 'not working'}.")
        parts.append(
            "Tool calling: "
            + ("yes" if self.tools else "no (a JSON action protocol is used instead)")
        )
        if self.error:
            parts.append(f"Note: {self.error}")
        return " ".join(parts)


def list_models(settings: LLMSettings, timeout: float = 5.0) -> list[str]:
    """The names of the models `settings.base_url` offers (GET /models), in its order.

    What went wrong is said in words: LLMUnreachable (nothing answers there), LLMAuthError
    (the server refuses the key, or wants one), NoModels (it answered and lists none, or
    does not list them at all). urllib, not the SDK: a model list needs no retries, and the
    SDK fails with an AttributeError on a web page served at the address."""
    url = settings.base_url.rstrip("/")
    request = urllib.request.Request(f"{url}/models")
    request.add_header("Authorization", f"Bearer {settings.key_value()}")
    try:
        with urllib.request.urlopen(request, timeout=min(settings.timeout, timeout)) as response:
            data = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        if exc.code in REFUSED:
            raise LLMAuthError(_refusal(settings, exc.code)) from exc
        raise NoModels(f"{url} does not list its models (HTTP {exc.code})") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise LLMUnreachable(f"Nothing answers at {url} ({_reason(exc)})") from exc
    except ValueError as exc:  # a page that is not JSON: the address is not the API's
        raise NoModels(
            f"{url} answered, but not as an OpenAI-compatible server: is it the address "
            "that ends in /v1?"
        ) from exc
    entries = data.get("data") if isinstance(data, dict) else None
    models = [str(m["id"]) for m in entries or [] if isinstance(m, dict) and m.get("id")]
    if not models:
        raise NoModels(f"{url} answered, but offers no models")
    return list(dict.fromkeys(models))


def _refusal(settings: LLMSettings, status: int) -> str:
    url = settings.base_url.rstrip("/")
    if settings.api_key is None or not settings.api_key.get_secret_value():
        return f"{url} wants an API key (HTTP {status})"
    return f"{url} refused the API key (HTTP {status})"


def _reason(exc: BaseException) -> str:
    """Why a connection failed, in words: a refusal, a time limit, an unknown name."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError):
        return "it did not answer in time"
    if isinstance(reason, ConnectionRefusedError):
        return "the connection was refused: is the server running?"
    if isinstance(reason, socket.gaierror):
        return "the name is not known: check the address"
    return str(reason) or type(reason).__name__


def probe(settings: LLMSettings) -> ProbeReport:
    report = ProbeReport(settings.base_url)
    quick = settings.model_copy(update={"max_retries": 0, "timeout": min(settings.timeout, 60)})
    try:
        report.models = list_models(settings)
    except LLMAuthError as exc:  # the headline, unless a completion works with the key
        report.error = f"the model list is unavailable ({exc})"
        status = getattr(exc.__cause__, "code", None)
        report.reachable, report.refused = True, f"HTTP {status}"
    except LLMError as exc:
        report.error = f"the model list is unavailable ({exc})"
    capabilities.forget_all()
    llm = LLMClient(quick)
    messages = [{"role": "user", "content": 'Reply with the JSON {"ok": true}.'}]
    try:
        llm.structured(messages, _Ping, stage="probe", max_tokens=20)
        report.refused = ""  # the model list refused the key, a completion did not
        caps = llm.caps
        report.structured = next(
            (m for m in capabilities.STRUCTURED_MODES[:2] if caps.known(m)), "schema in the prompt"
        )
        report.reachable = True
        tool = Tool("ping", "Answer the ping", {"type": "object", "properties": {}})
        chat_with_tools(
            llm,
            [{"role": "user", "content": "Call the ping tool."}],
            [tool],
            stage="probe",
            max_tokens=50,
        )
        report.tools = llm.caps.usable("tools")
    except LLMAuthError as exc:
        report.reachable = True  # it answered
        status = getattr(exc.__cause__, "status_code", None)
        report.refused = f"HTTP {status}" if status else "that the key is refused"
    except LLMError as exc:
        report.error = str(exc)
    return report


def detect_local(
    timeout: float = 1.0, ports: Mapping[str, int] | None = None, host: str = "127.0.0.1"
) -> list[tuple[str, str, list[str]]]:
    """(name, base URL, models) of the local servers answering on their default ports
    (`ports`: other ports, by the server's name; a test's own server). A server whose port
    is a common one (llama.cpp's 8080) is named only when it answers its own path; else an
    OpenAI-compatible server there is "Custom"."""
    found = []
    for server in LOCAL_SERVERS:
        port = (ports or {}).get(server.name, server.port)
        url = f"http://{host}:{port}/v1"
        try:
            models = list_models(LLMSettings(base_url=url), timeout)
        except NoModels:  # it is there, with nothing loaded yet
            models = None
        except LLMError:
            continue
        if not server.own_path or _answers_json(f"http://{host}:{port}{server.own_path}", timeout):
            found.append((server.name, url, models or []))
        elif models is not None:  # another OpenAI-compatible server on that port
            found.append(("Custom", url, models))
    return found


def _answers_json(url: str, timeout: float) -> bool:
    """Whether GET `url` answers with a JSON object (llama-server's /props: its settings)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return isinstance(json.loads(response.read() or b"null"), dict)
    except (OSError, http.client.HTTPException, ValueError):  # (HTTPError is an OSError)
        return False
