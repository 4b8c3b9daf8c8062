"""Issue 36 §2.7: an upstream that echoes the API key in a normal 200 answer (a proxy's
debug field, a model repeating its prompt, a prompt injection asking for it). Neither
gam-serve's client, nor MCP `ask`'s, nor the saved conversation, the learned facts or the
memory's git history may get the key (nor gam-serve's own token)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.facts.record import read_facts
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.redact import LABEL, Redactor
from gam_desktop.selfcheck.scripted_llm import Handler, LLMHTTPServer, ServerState
from gam_desktop.serve.app import ServeConfig, create_app
from gam_desktop.serve.mcp_cli import http_app
from gam_desktop.serve.mcp_server import MemoryServer
from gam_desktop.serve.upstream import _RedactedStream
from tests.repos import git
from tests.serve.running import running
from tests.serve.test_endpoint import ONCALL, QUESTION, TOKEN, UPSTREAM_KEY, openai_secret

pytestmark = pytest.mark.timeout(180)

SECRETS = (UPSTREAM_KEY, TOKEN)
# one the passages alone do not settle (QUESTION is): the LLM answers it
MCP_QUESTION = "Who does the Acme rotation escalate to?"


def echo(content: str) -> str:
    """What the echoing upstream answers instead of `content`: a JSON answer with the key
    inside a value (a fact's, an `answer` action's text), a text with the key and the token
    in its first sentence citing a passage, else at its end."""
    if content.lstrip().startswith("{"):
        action = json.loads(content)
        if action.get("tool") == "answer":  # the agent's answer as a JSON action
            action["arguments"]["text"] = echo(action["arguments"]["text"])
            return json.dumps(action)
        if isinstance(action.get("answer"), str) and action["answer"]:  # a reading's answer
            action["answer"] = echo(action["answer"])
            return json.dumps(action)
        return content.replace("Porto", f"Porto {UPSTREAM_KEY}")
    said = f" (sent with key {UPSTREAM_KEY} and token {TOKEN})"
    cited = re.search(r" \[\d+\]", content)  # a grounded answer: inside its cited sentence
    at = cited.start() if cited else len(content)
    return content[:at] + said + content[at:]


class EchoingServer(LLMHTTPServer):
    """The scripted server, every answer passed through `echo`; a stream written by
    `streamer` (the scripted one by default: a word per event)."""

    def __init__(self, streamer: Callable[[Handler, str, str], None] | None = None) -> None:
        super().__init__(0, ServerState())
        self.streamer = streamer

    def handle_completion(self, handler: Handler, request: dict[str, Any]) -> None:
        send, stream = handler._send, handler._stream

        def echoing_send(status: int, body: dict[str, Any], headers: Any = None) -> None:
            for choice in body.get("choices") or []:
                message = choice.get("message") or {}
                if isinstance(message.get("content"), str):
                    message["content"] = echo(message["content"])
                for call in message.get("tool_calls") or []:  # the agent's `answer` tool
                    if call["function"]["name"] == "answer":
                        arguments = json.loads(call["function"]["arguments"])
                        arguments["text"] = echo(arguments["text"])
                        call["function"]["arguments"] = json.dumps(arguments)
            send(status, body, headers)

        def echoing_stream(model: str, content: str) -> None:
            if self.streamer is None:
                stream(model, echo(content))
            else:
                self.streamer(handler, model, echo(content))

        handler._send = echoing_send  # type: ignore[method-assign]
        handler._stream = echoing_stream  # type: ignore[method-assign]
        super().handle_completion(handler, request)


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


@pytest.fixture
def echoing() -> Iterator[EchoingServer]:
    server = EchoingServer()
    with serving(server):
        yield server


@contextmanager
def serving(server: LLMHTTPServer) -> Iterator[LLMHTTPServer]:
    """`server` answering on a thread of its own while in the `with`."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def keyed(settings: LLMSettings, server: LLMHTTPServer) -> LLMSettings:
    """`settings` sending UPSTREAM_KEY to `server`."""
    return settings.model_copy(
        update={"api_key": openai_secret(UPSTREAM_KEY), "base_url": server.base_url}
    )


def assert_nowhere(memory: Path) -> None:
    """No file of the memory (its queue and cache included) and no commit holds a secret."""
    history = git(memory, "log", "-p", "--all")
    files = [p for p in memory.rglob("*") if p.is_file() and ".git" not in p.parts]
    for secret in SECRETS:
        assert secret not in history
        for path in files:
            assert secret.encode() not in path.read_bytes(), path


def saved_answers(memory: Path) -> list[str]:
    return [
        turn.answer
        for info in list_conversations(memory)
        for turn in parse((memory / info.path).read_text()).turns
    ]


def serve(memory: Path, settings: LLMSettings, server: LLMHTTPServer) -> tuple[Any, Any]:
    config = ServeConfig(gam_dir=memory, settings=keyed(settings, server), token=TOKEN)
    return create_app(config)


def test_a_key_in_a_200_answer_is_redacted_for_the_client_and_in_every_file(
    memory: Path, settings: LLMSettings, echoing: EchoingServer
) -> None:
    app, endpoint = serve(memory, settings, echoing)
    with running(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)
        reply = client.chat.completions.create(
            model="gam", messages=[{"role": "user", "content": QUESTION}]
        )
        told = client.chat.completions.create(  # a statement: its fact is learned
            model="gam", messages=[{"role": "user", "content": "I live in Porto."}]
        )
        assert endpoint.writer.drain(60)
    answer = reply.choices[0].message.content
    assert answer.endswith(f"(sent with key {LABEL} and token {LABEL})"), answer
    assert UPSTREAM_KEY not in told.model_dump_json() and TOKEN not in told.model_dump_json()
    assert sorted(saved_answers(memory)) == sorted([answer, told.choices[0].message.content])
    # the fact was learned (the upstream echoed the key inside it) and kept without it
    assert [f.statement for f in read_facts(memory)] == [f"The user lives in Porto {LABEL}."]
    assert endpoint.writer.stats.failed == []
    assert_nowhere(memory)


def test_a_streamed_key_is_redacted(
    memory: Path, settings: LLMSettings, echoing: EchoingServer
) -> None:
    """The scripted stream: a word per event, the key whole in one of them."""
    text = _ask_streamed(memory, settings, echoing)
    assert text.endswith(f"(sent with key {LABEL} and token {LABEL})"), text
    assert saved_answers(memory) == [text]
    assert_nowhere(memory)


def _split_stream(handler: Handler, model: str, content: str) -> None:
    """The reply in events cut in the middle of the key and of the token; the first event,
    which ends with the key's start, written in two pieces cut inside it."""
    handler.replying()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    key, token = content.index(UPSTREAM_KEY) + 7, content.index(TOKEN) + 9
    pieces = [content[:key], content[key:token], content[token:], ""]
    for n, piece in enumerate(pieces):
        finish = "stop" if n == len(pieces) - 1 else None
        delta = {"content": piece} if piece else {}
        event = {"id": "c", "model": model, "choices": [{"index": 0, "delta": delta}]}
        event["choices"][0]["finish_reason"] = finish
        data = f"data: {json.dumps(event)}\n\n".encode()
        for part in _cut_at(data, UPSTREAM_KEY[:5].encode()):
            handler.wfile.write(part)
            handler.wfile.flush()
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()


def _cut_at(data: bytes, mark: bytes) -> list[bytes]:
    at = data.find(mark)
    return [data] if at < 0 else [data[: at + 2], data[at + 2 :]]


def test_a_key_split_across_stream_events_is_redacted(memory: Path, settings: LLMSettings) -> None:
    """The key and the token each cut across two events (and across two writes): no event
    holds either whole, yet the client's text, the saved turn and git have neither."""
    with serving(EchoingServer(streamer=_split_stream)) as splitting:
        text = _ask_streamed(memory, settings, splitting)
    assert text.endswith(f"(sent with key {LABEL} and token {LABEL})"), text
    assert saved_answers(memory) == [text]
    assert_nowhere(memory)


def _ask_streamed(memory: Path, settings: LLMSettings, server: LLMHTTPServer) -> str:
    app, endpoint = serve(memory, settings, server)
    with running(app) as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        body = {"model": "gam", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
        raw = httpx2.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60)
        assert endpoint.writer.drain(60)
    assert raw.status_code == 200
    for secret in SECRETS:
        assert secret not in raw.text
    events = [line[6:] for line in raw.text.splitlines() if line.startswith("data: {")]
    return "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events)


@pytest.fixture
def unchecked(monkeypatch) -> None:
    """Answers as the model gives them, its first passage their support: the checks would
    reject a reply holding a key's digits, and redaction must hold without them."""
    from dataclasses import replace

    from gam_desktop.engine.answering import pipeline
    from gam_desktop.engine.answering.checks import Support

    def as_given(draft, _checks, _evidence):
        first = draft.passages[0]
        return replace(draft, support=[Support(first, first.text)]) if draft.answer else None

    monkeypatch.setattr(pipeline, "_checked", as_given)


def test_mcp_ask_redacts_the_key_and_the_token(
    memory: Path, settings: LLMSettings, echoing: EchoingServer, unchecked
) -> None:
    server = MemoryServer(memory, keyed(settings, echoing))
    before = git(memory, "rev-parse", "HEAD")
    with running(http_app(server, TOKEN)) as url:

        async def scenario() -> str:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                transport = streamable_http_client(f"{url}/mcp", http_client=http)
                async with Client(transport) as client:
                    result = await client.call_tool("ask", {"question": MCP_QUESTION})
                    assert not result.is_error
                    return "\n".join(p.text for p in result.content if hasattr(p, "text"))

        answer = anyio.run(scenario)
    assert f"key {LABEL}" in answer and "Sources:" in answer, answer
    for secret in SECRETS:
        assert secret not in answer
    assert git(memory, "rev-parse", "HEAD") == before  # asking writes nothing
    assert_nowhere(memory)


def test_gam_chat_saves_no_key_the_llm_echoed(
    make_workflow, settings: LLMSettings, echoing: EchoingServer, unchecked
) -> None:
    """The engine's own conversations (gam-chat, the app's chat) are written from the
    LLM's reply too: the key it echoed is not in the file nor in git."""
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    chatting = make_workflow(settings=keyed(settings, echoing))
    turn = chatting.chat(QUESTION)
    assert UPSTREAM_KEY not in turn.result.answer and LABEL in turn.result.answer
    assert saved_answers(workflow.folder.root) == [turn.result.answer]
    assert UPSTREAM_KEY not in git(workflow.folder.root, "log", "-p", "--all")


# -- the sliding window on its own: every cut of the secret ----------------------------


@pytest.mark.parametrize("cut", range(1, len(UPSTREAM_KEY)))
def test_a_secret_cut_anywhere_is_held_back_then_redacted_where_it_started(cut: int) -> None:
    redactor = Redactor(SECRETS)
    text = f"say sk-up then {UPSTREAM_KEY} and s"
    at = text.index(UPSTREAM_KEY) + cut
    first, second = text[:at], text[at:]
    assert redactor.partial(first) == cut  # its end could start the key: held back
    assert redactor.partial(second) == 1  # "s" could too, however unlikely
    assert redactor.pieces([first, second]) == [f"say sk-up then {LABEL}", " and s"]


def _call_event(arguments: str) -> bytes:
    call = {"index": 0, "function": {"arguments": arguments}}
    return (
        b"data: "
        + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}).encode()
    )


def test_a_stream_passes_other_lines_as_sent_and_redacts_tool_arguments() -> None:
    """The relay's window on its own: an event with no secret goes out byte for byte and
    at once; one ending with the start of the key waits for the next, and the key split
    across a tool call's arguments comes out redacted where it started."""
    stream = _RedactedStream(Redactor(SECRETS))
    plain = _call_event('{"q": "hello"')
    assert stream.line(plain) == plain + b"\n"
    first, second = _call_event(', "k": "' + UPSTREAM_KEY[:6]), _call_event(UPSTREAM_KEY[6:] + '"}')
    assert stream.line(first) == b""  # held back: it ends with the key's start
    out = stream.line(second) + stream.line(b"data: [DONE]")
    events = [json.loads(line[6:]) for line in out.splitlines() if line.startswith(b"data: {")]
    arguments = [e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for e in events]
    assert arguments == [f', "k": "{LABEL}', '"}']
    assert out.endswith(b"data: [DONE]\n") and UPSTREAM_KEY[6:].encode() not in out


def test_short_placeholder_keys_are_not_redacted() -> None:
    """A local server's placeholder key ('none', 'ollama') would mangle ordinary words;
    no key at all sends 'not-needed', which is not a secret either."""
    assert Redactor(["none", "ollama", None, ""]).text("none of ollama") == "none of ollama"
    assert not Redactor.for_settings(LLMSettings(api_key=None))
