"""Issue 36 §2.8: JSON nested deeper than a parser recurses, sent with a valid token. It
was a 500 and a RecursionError in gam-serve's log; it is a 400 that says why, from
gam-serve and from gam-mcp's streamable HTTP alike, and the server goes on answering."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx2
import pytest

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.serve.app import MAX_NESTING, ServeConfig, create_app
from gam_desktop.serve.mcp_cli import http_app
from gam_desktop.serve.mcp_server import MemoryServer
from tests.serve.running import running
from tests.serve.test_endpoint import ONCALL, QUESTION, TOKEN

pytestmark = pytest.mark.timeout(180)

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
BRACKETS = b"[" * 200_000  # the finding's body: never closed
QUESTION_BODY = {"model": "gam", "messages": [{"role": "user", "content": QUESTION}]}


def with_nested(depth: int) -> bytes:
    """QUESTION_BODY with a `metadata` value `depth` arrays deep (written as text: the
    test's own json.dumps would recurse)."""
    body = json.dumps({**QUESTION_BODY, "metadata": None}).encode()
    return body.replace(b"null", b"[" * depth + b'"deep"' + b"]" * depth)


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


def test_gam_serve_answers_deeply_nested_json_with_a_400(
    memory: Path, settings: LLMSettings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app, endpoint = create_app(ServeConfig(gam_dir=memory, settings=settings, token=TOKEN))
    url_path = "/v1/chat/completions"
    with running(app) as url:
        # unparsable by Python (RecursionError), then one it parses but that is deeper than
        # any request needs (and is written out again when forwarded and queued)
        deep = (BRACKETS, b'{"messages": ' + BRACKETS, with_nested(900), with_nested(MAX_NESTING))
        for body in deep:
            reply = httpx2.post(url + url_path, content=body, headers=HEADERS, timeout=60)
            assert reply.status_code == 400, reply.text
            error = reply.json()["error"]
            assert error["type"] == "invalid_request_error"
            assert error["message"] == (
                "The request body is nested too deeply "
                f"(more than {MAX_NESTING} levels of arrays and objects)."
            )
        # as deep as a request may be is still forwarded, and the server still answers
        within = with_nested(MAX_NESTING - 1)  # the body's own object is a level too
        ok = httpx2.post(url + url_path, content=within, headers=HEADERS, timeout=60)
        assert ok.status_code == 200, ok.text
        assert endpoint.writer.drain(60)
    assert "RecursionError" not in caplog.text
    assert "Traceback" not in caplog.text


def test_gam_mcp_answers_deeply_nested_json_with_a_400(
    memory: Path, settings: LLMSettings, caplog: pytest.LogCaptureFixture
) -> None:
    """The MCP SDK parses the body itself (pydantic-core, whose parser stops at a depth):
    a JSON-RPC parse error with a 400, never a 500."""
    caplog.set_level(logging.DEBUG)
    server = MemoryServer(memory, settings)
    headers = {**HEADERS, "Accept": "application/json, text/event-stream"}
    with running(http_app(server, TOKEN)) as url:
        for body in (
            BRACKETS,
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + BRACKETS,
        ):
            reply = httpx2.post(f"{url}/mcp", content=body, headers=headers, timeout=60)
            assert reply.status_code == 400, reply.text
            assert reply.json()["error"]["code"] == -32700  # JSON-RPC's "parse error"
        hello = {  # and a client that starts a session is still answered
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        still = httpx2.post(f"{url}/mcp", json=hello, headers=headers, timeout=60)
        assert still.status_code == 200 and "gam-memory" in still.text, still.text
    assert "RecursionError" not in caplog.text
