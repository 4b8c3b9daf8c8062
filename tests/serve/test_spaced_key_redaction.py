"""An upstream that echoes the API key broken by whitespace ("sk-ADV44-S ECRET-KEY-…", or
over two lines): a key long enough that its characters in order are no one's words is
redacted so too, in a whole reply and in a stream (where the space may end one event and
the rest of the key begin the next); shorter secrets only as they are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.redact import LABEL, Redactor, known
from gam_desktop.serve.upstream import _RedactedStream
from tests.serve import test_key_redaction as echoing_upstream
from tests.serve.running import running
from tests.serve.test_endpoint import ONCALL, QUESTION, TOKEN, UPSTREAM_KEY
from tests.serve.test_key_redaction import (
    EchoingServer,
    saved_answers,
    serve,
    serving,
)

pytestmark = pytest.mark.timeout(180)

SPACED = f"{UPSTREAM_KEY[:10]} {UPSTREAM_KEY[10:]}"  # "sk-upstrea m-secret-4242"
BROKEN = f"{UPSTREAM_KEY[:4]}\n  {UPSTREAM_KEY[4:]}"  # over two lines


def spaced_echo(content: str) -> str:
    """The upstream's answer with the key in it twice, broken by whitespace (a JSON action
    as it is: the answer's text is what the client sees)."""
    if content.lstrip().startswith("{"):
        return content
    return f"{content} (key {SPACED}; again {BROKEN})"


def test_a_key_with_whitespace_inside_is_redacted() -> None:
    redactor = Redactor([UPSTREAM_KEY, TOKEN])
    assert redactor.text(f"a {SPACED} b {BROKEN} c") == f"a {LABEL} b {LABEL} c"
    assert redactor.data(f"a {SPACED} b".encode()) == f"a {LABEL} b".encode()
    assert known(f"log: {SPACED}") == f"log: {LABEL}"  # the logs' last line of defence


def test_a_short_secret_is_redacted_only_as_it_is() -> None:
    """Eight characters spaced out could be anyone's words."""
    redactor = Redactor(["pass1234"])
    assert redactor.text("pass1234 and pass 1234") == f"{LABEL} and pass 1234"
    assert redactor.partial("say pass ") == 0


@pytest.mark.parametrize("cut", range(1, len(SPACED)))
def test_a_spaced_key_cut_anywhere_is_held_back_then_redacted(cut: int) -> None:
    redactor = Redactor([UPSTREAM_KEY])
    text = f"your key: {SPACED} ok"
    at = text.index(SPACED) + cut
    first, second = text[:at], text[at:]
    assert redactor.partial(first) == cut  # its end (its space too) could start the key
    assert redactor.pieces([first, second]) == [f"your key: {LABEL}", " ok"]


def test_the_relay_holds_an_event_ending_in_the_keys_start_and_a_space() -> None:
    stream = _RedactedStream(Redactor([UPSTREAM_KEY]))

    def event(text: str) -> bytes:
        body = {"choices": [{"index": 0, "delta": {"content": text}}]}
        return b"data: " + json.dumps(body).encode()

    assert stream.line(event(f"key {UPSTREAM_KEY[:10]} ")) == b""  # held back
    out = stream.line(event(f"{UPSTREAM_KEY[10:]} done")) + stream.line(b"data: [DONE]")
    texts = [
        json.loads(line[6:])["choices"][0]["delta"]["content"]
        for line in out.splitlines()
        if line.startswith(b"data: {")
    ]
    assert texts == [f"key {LABEL}", " done"]


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


@pytest.fixture
def spacing(monkeypatch: pytest.MonkeyPatch) -> Iterator[EchoingServer]:
    monkeypatch.setattr(echoing_upstream, "echo", spaced_echo)
    with serving(EchoingServer()) as server:
        yield server  # type: ignore[misc]


def _nowhere(memory: Path) -> None:
    files = [p for p in memory.rglob("*") if p.is_file() and ".git" not in p.parts]
    for part in (UPSTREAM_KEY[:10], UPSTREAM_KEY[10:]):
        for path in files:
            assert part.encode() not in path.read_bytes(), path


def test_gam_serve_redacts_a_spaced_key_in_a_reply_and_a_stream(
    memory: Path, settings: LLMSettings, spacing: EchoingServer
) -> None:
    app, endpoint = serve(memory, settings, spacing)
    with running(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)
        reply = client.chat.completions.create(
            model="gam", messages=[{"role": "user", "content": QUESTION}]
        )
        streamed = client.chat.completions.create(
            model="gam", stream=True, messages=[{"role": "user", "content": QUESTION}]
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
        assert endpoint.writer.drain(60)
    answer = reply.choices[0].message.content or ""
    for said in (answer, text):  # (the scripted stream: a word per event)
        assert said.endswith(f"(key {LABEL}; again {LABEL})"), said
    assert sorted(saved_answers(memory)) == sorted([answer, text])
    _nowhere(memory)
