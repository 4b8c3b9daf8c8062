"""A server that refuses a request (HTTP 400, 422, 413 …) and quotes the API key in its
reason, as some proxies do: the client's error is the app's own (LLMRejected, an
LLMCallFailed), says the server's reason in one line, and neither it, nor the SDK error
it wraps, nor their traceback holds the key. gam-request says so in a line, not as a
bug with a traceback."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from gam_desktop.engine.llm import LLMCallFailed, LLMClient, LLMSettings
from gam_desktop.engine.llm.errors import LLMRejected
from gam_desktop.engine.llm.redact import LABEL
from gam_desktop.engine.llm.tools import Tool, chat_with_tools
from gam_desktop.selfcheck.scripted_llm import Handler, LLMHTTPServer
from tests.clirun import run_cli
from tests.memories import write_memory

KEY = "sk-refused-secret-0123456789abcdef"
QUESTION = [{"role": "user", "content": "What is BERT?"}]


class RefusingServer(LLMHTTPServer):
    """The scripted server answering every completion with `status`, its reason quoting
    the Authorization header it was sent."""

    status = 400

    def handle_completion(self, handler: Handler, request: dict[str, Any]) -> None:
        self.state.requests.append(request)
        said = handler.headers.get("Authorization")
        handler._error(
            self.status, f"This model's maximum context length is 4096 tokens (from {said})"
        )


class _Answer(BaseModel):
    text: str


@pytest.fixture
def refusing() -> Iterator[RefusingServer]:
    server = RefusingServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def keyed(server: LLMHTTPServer) -> LLMSettings:
    return LLMSettings(
        base_url=server.base_url,
        model="scripted",
        api_key=SecretStr(KEY),
        timeout=5,
        max_retries=3,
        backoff_base=0.01,
    )


def assert_no_key(error: BaseException) -> None:
    told = "".join(traceback.format_exception(error))  # the SDK error it wraps included
    assert KEY not in told and KEY[8:] not in told, told
    assert told.count(f"Bearer {LABEL}") == 2  # the SDK's error is kept, redacted too


@pytest.mark.parametrize("status", [400, 422])
def test_a_refused_request_is_an_llm_error_with_the_reason_and_no_key(
    refusing: RefusingServer, status: int
) -> None:
    refusing.status = status
    with pytest.raises(LLMRejected) as raised:
        LLMClient(keyed(refusing)).text(QUESTION, stage="chat")
    error = raised.value
    assert isinstance(error, LLMCallFailed)  # what every stage already falls back on
    said = str(error)
    assert "\n" not in said and f"(HTTP {status})" in said
    assert "maximum context length is 4096 tokens" in said and f"Bearer {LABEL}" in said
    assert_no_key(error)
    assert len(refusing.state.requests) == 1  # not retried: asking again won't help


def test_another_refusal_is_an_llm_error_too(refusing: RefusingServer) -> None:
    """413 has no SDK class of its own (APIStatusError): it is no bug either."""
    refusing.status = 413
    with pytest.raises(LLMCallFailed) as raised:
        LLMClient(keyed(refusing)).text(QUESTION, stage="chat")
    assert not isinstance(raised.value, LLMRejected) and "(HTTP 413)" in str(raised.value)
    assert_no_key(raised.value)


def test_structured_output_and_tools_end_in_the_llm_error(refusing: RefusingServer) -> None:
    """The ladder and the tool calls step down on a refusal, then give the same error."""
    client = LLMClient(keyed(refusing))
    with pytest.raises(LLMRejected) as structured:
        client.structured(QUESTION, _Answer, stage="chat")
    assert_no_key(structured.value)
    tool = Tool("answer", "Answer.", {"type": "object", "properties": {"text": {}}})
    with pytest.raises(LLMRejected) as tools:
        chat_with_tools(client, QUESTION, [tool], stage="chat")
    assert_no_key(tools.value)


def test_gam_request_says_a_refusal_in_a_line_without_the_key(
    refusing: RefusingServer, tmp_path: Path
) -> None:
    memory = write_memory(tmp_path / "memory")
    out = run_cli(
        ["--gam-dir", str(memory), "-Q", "What is BERT?", "--explore"],
        refusing.base_url,
        entry="request_main",
        env={"OPENAI_API_KEY": KEY},
    )
    assert out.returncode != 70 and "Traceback" not in out.stderr, out.stderr
    assert KEY not in out.stdout + out.stderr
    assert refusing.state.requests  # the LLM was asked, and refused
