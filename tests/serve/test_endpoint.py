"""gam-serve (issue 16): the real openai client against the endpoint on 127.0.0.1, the
scripted server upstream."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import httpx2
import openai
import pytest

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.facts.record import read_facts
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.store.folder import JOURNAL_FILE, MemoryFolder
from gam_desktop.engine.store.lock import writer_lock
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer
from gam_desktop.serve.app import CONVERSATION_HEADER, MemoryEndpoint, ServeConfig, create_app
from tests.repos import git
from tests.serve.running import running

pytestmark = pytest.mark.timeout(180)

TOKEN = "gam-test-token-0123456789"
UPSTREAM_KEY = "sk-upstream-secret-4242"
ONCALL = (
    "# Acme on-call\n\nThe Acme on-call rotation escalates to Maria Lopez after 30 minutes. "
    "Pages go to the #acme-oncall channel first.\n"
)


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


@pytest.fixture
def config(memory: Path, settings: LLMSettings) -> ServeConfig:
    upstream = settings.model_copy(update={"api_key": openai_secret(UPSTREAM_KEY)})
    return ServeConfig(gam_dir=memory, settings=upstream, token=TOKEN)


def openai_secret(value: str):
    from pydantic import SecretStr

    return SecretStr(value)


class Served:
    def __init__(self, url: str, endpoint: MemoryEndpoint) -> None:
        self.url = url
        self.endpoint = endpoint

    def client(self, token: str = TOKEN) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=token, max_retries=0)


@pytest.fixture
def served(config: ServeConfig) -> Iterator[Served]:
    app, endpoint = create_app(config)
    with running(app) as url:
        yield Served(url, endpoint)


def commits(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


QUESTION = "Who does the Acme on-call rotation escalate to?"


def test_memory_is_injected_and_sources_returned(
    served: Served, llm_server: RunningServer, memory: Path
) -> None:
    raw = served.client().chat.completions.with_raw_response.create(
        model="gam", messages=[{"role": "user", "content": QUESTION}]
    )
    reply = raw.parse()
    sources = raw.headers["x-gam-sources"].split(",")
    assert sources and sources[0].endswith(".md") and (memory / sources[0]).is_file()
    assert reply.model_extra["gam"]["sources"][0]["path"] == sources[0]
    upstream = llm_server.state.requests[-1]["messages"]
    assert upstream[0]["role"] == "system" and f"### {sources[0]} (" in upstream[0]["content"]
    assert "Maria Lopez" in upstream[0]["content"]
    # the reply is the upstream's, unchanged: its model is the configured one ("gam" mapped)
    assert reply.model == "scripted"
    assert reply.choices[0].message.content.startswith(f"From {sources[0]}: ")


def test_a_clients_system_message_is_kept_after_the_memory(
    served: Served, llm_server: RunningServer
) -> None:
    served.client().chat.completions.create(
        model="gam",
        messages=[
            {"role": "system", "content": "Answer in one line."},
            {"role": "user", "content": QUESTION},
        ],
    )
    (system, user) = llm_server.state.requests[-1]["messages"]
    assert system["content"].startswith("Passages from the user's memory")
    assert system["content"].endswith("---\n\nAnswer in one line.")
    assert user == {"role": "user", "content": QUESTION}


def test_streaming_passes_the_chunks_and_saves_the_turn(served: Served, memory: Path) -> None:
    before = commits(memory)
    raw = served.client().chat.completions.with_raw_response.create(
        model="gam", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    first = raw.headers["x-gam-sources"].split(",")[0]
    chunks = list(raw.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith(f"From {first}: ") and len(chunks) > 3
    assert served.endpoint.writer.drain(60)
    (info,) = list_conversations(memory)
    (turn,) = parse((memory / info.path).read_text()).turns
    assert turn.question == QUESTION and turn.answer == text
    assert commits(memory)[: len(commits(memory)) - len(before)] == [f"Chat: {info.title}"]


def test_a_turn_is_saved_and_its_facts_learned(served: Served, memory: Path) -> None:
    client = served.client()
    first = [{"role": "user", "content": "I live in Porto."}]
    answer = client.chat.completions.create(model="gam", messages=first)
    assert served.endpoint.writer.drain(60)
    assert [f.statement for f in read_facts(memory)] == ["The user lives in Porto."]
    assert commits(memory)[0] == "Learned 1 fact"
    assert commits(memory)[1].startswith("Chat: ")
    # the next request carrying that history continues the same conversation
    follow = [*first, {"role": "assistant", "content": answer.choices[0].message.content}]
    follow.append({"role": "user", "content": QUESTION})
    client.chat.completions.create(model="gam", messages=follow)
    assert served.endpoint.writer.drain(60)
    (info,) = list_conversations(memory)
    assert info.turns == 2
    assert served.endpoint.writer.stats.failed == []
    # what was learned is read back: the fact and the conversation are passages now
    served.endpoint.index.refresh_now()
    raw = client.chat.completions.with_raw_response.create(
        model="gam", messages=[{"role": "user", "content": "Which city do I live in, Porto?"}]
    )
    sources = raw.headers["x-gam-sources"].split(",")
    assert any(s.startswith("facts/") for s in sources), sources
    assert any(s.startswith("conversations/") for s in sources), sources


def test_upstream_errors_are_passed_on_as_openai_errors(
    served: Served, llm_server: RunningServer
) -> None:
    client = served.client()
    messages = [{"role": "user", "content": QUESTION}]
    llm_server.state.faults.append(Fault("429", seconds=7))
    with pytest.raises(openai.RateLimitError) as limited:
        client.chat.completions.create(model="gam", messages=messages)
    assert limited.value.body["message"] == "The LLM: rate limited"
    llm_server.state.faults.append(Fault("500"))
    with pytest.raises(openai.InternalServerError, match="internal error"):
        client.chat.completions.create(model="gam", messages=messages)
    llm_server.state.faults.append(Fault("401"))  # gam-serve's key, not the client's token
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.create(model="gam", messages=messages, stream=True)
    assert refused.value.status_code == 502
    assert "refused gam-serve's API key" in refused.value.message
    assert UPSTREAM_KEY not in str(refused.value.body)
    assert served.endpoint.writer.drain(60) and served.endpoint.writer.stats.saved == 0


def test_an_unreachable_upstream_is_a_502(config: ServeConfig) -> None:
    with RunningServer() as gone:
        url = gone.base_url
    dead = replace(config, settings=config.settings.model_copy(update={"base_url": url}))
    app, _ = create_app(dead)
    with running(app) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0)
        with pytest.raises(openai.APIStatusError, match="Cannot reach the LLM") as failed:
            client.chat.completions.create(
                model="gam", messages=[{"role": "user", "content": "Hi"}]
            )
    assert failed.value.status_code == 502


def test_no_token_or_a_wrong_one_is_401(served: Served) -> None:
    messages = [{"role": "user", "content": QUESTION}]
    with pytest.raises(openai.AuthenticationError) as refused:
        served.client("not-the-token").chat.completions.create(model="gam", messages=messages)
    assert refused.value.body["type"] == "authentication_error"
    bare = httpx2.post(f"{served.url}/v1/chat/completions", json={"messages": messages})
    assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in bare.json()["error"]["message"]
    assert httpx2.get(f"{served.url}/health").json()["status"] == "ok"  # open: no token
    assert httpx2.get(f"{served.url}/v1/models").status_code == 401


def test_models_lists_the_served_names(served: Served) -> None:
    names = [m.id for m in served.client().models.list()]
    assert names == ["gam"]


def test_an_oversized_body_is_413(config: ServeConfig) -> None:
    app, endpoint = create_app(replace(config, max_body=64 * 1024))
    with running(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0)
        big = [{"role": "user", "content": "word " * 20_000}]
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="gam", messages=big)
        assert refused.value.status_code == 413 and "larger than" in refused.value.message

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it comes
            yield b'{"messages": [{"role": "user", "content": "'
            yield from (b"x" * 8192 for _ in range(10))
            yield b'"}]}'

        headers = {"Authorization": f"Bearer {TOKEN}"}
        response = httpx2.post(f"{url}/v1/chat/completions", content=chunks(), headers=headers)
        assert response.status_code == 413
        assert response.json()["error"]["type"] == "invalid_request_error"
    assert endpoint.served == 0


def test_bad_requests_get_openai_error_json(served: Served) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = f"{served.url}/v1/chat/completions"
    not_json = httpx2.post(url, content=b"{nope", headers=headers)
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]["message"]
    empty = httpx2.post(url, json={"model": "gam", "messages": []}, headers=headers)
    assert empty.status_code == 400 and "'messages'" in empty.json()["error"]["message"]
    missing = httpx2.get(f"{served.url}/v1/embeddings", headers=headers)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"


def test_no_cors_and_loopback_host_names_only(served: Served) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}
    models = httpx2.get(f"{served.url}/v1/models", headers=headers)
    assert models.status_code == 200
    assert not any(k.lower().startswith("access-control-") for k in models.headers)
    preflight = httpx2.options(f"{served.url}/v1/chat/completions", headers=headers)
    assert preflight.status_code in (401, 405)
    assert "access-control-allow-origin" not in preflight.headers
    rebound = httpx2.get(f"{served.url}/v1/models", headers={**headers, "Host": "evil.example"})
    assert rebound.status_code == 403


def test_turns_wait_for_another_writer_and_none_is_lost(served: Served, memory: Path) -> None:
    """A GUI-style writer holds the lock: requests are still answered, their turns wait,
    and once it is released every one is committed."""
    before = len(commits(memory))
    questions = [f"What does the Acme rotation do at step {n}?" for n in range(6)]
    answered: list[str] = []
    with writer_lock(MemoryFolder(memory)):

        def ask(question: str) -> None:
            reply = served.client().chat.completions.create(
                model="gam", messages=[{"role": "user", "content": question}]
            )
            answered.append(reply.choices[0].message.content)

        threads = [threading.Thread(target=ask, args=(q,)) for q in questions]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(answered) == 6
        assert served.endpoint.writer.waited.wait(60)  # the writer is waiting for the lock
        assert len(commits(memory)) == before  # nothing written while the lock is held
        assert served.endpoint.writer.pending() >= 1
    assert served.endpoint.writer.drain(120)
    saved = sorted(parse((memory / i.path).read_text()).turns[0].question
                   for i in list_conversations(memory))  # fmt: skip
    assert saved == sorted(questions)
    # the turn the writer held while waiting, then the five queued meanwhile, together
    chats = [s for s in commits(memory) if s.startswith("Chat: ")]
    assert 1 <= len(chats) <= 2, chats
    assert git(memory, "status", "--porcelain", "--", "conversations") == ""
    assert len(git(memory, "ls-files", "conversations").split()) == 6


# -- under attack (review of issue 16): malformed requests, an upstream cutting its
# stream short, a memory a crash left half-written, an unknown conversation id ----------

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def test_messages_that_are_not_objects_are_a_400_not_a_500(served: Served) -> None:
    url = f"{served.url}/v1/chat/completions"
    for messages in (["hi"], [None], [{"role": "user", "content": "hi"}, 3]):
        reply = httpx2.post(url, json={"model": "gam", "messages": messages}, headers=HEADERS)
        assert reply.status_code == 400, messages
        assert reply.json()["error"]["type"] == "invalid_request_error"


def _sse(content: str, finish: str | None = None) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@contextmanager
def raw_upstream(reply: Callable[[socket.socket], None]) -> Iterator[str]:
    """An upstream that answers every request with `reply` on the bare socket (what a
    crashing server sends), then closes the connection."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                _read_request(conn)  # all of it: a close with unread bytes is a reset
                reply(conn)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    finally:
        server.close()


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(65536)


def _streamed(config: ServeConfig, reply: Callable[[socket.socket], None]) -> str:
    """Ask one streamed question through an upstream sending `reply`; the client's text."""
    with raw_upstream(reply) as upstream:
        settings = config.settings.model_copy(update={"base_url": upstream})
        app, endpoint = create_app(replace(config, settings=settings))
        with running(app) as url:
            body = {
                "model": "gam",
                "stream": True,
                "messages": [{"role": "user", "content": QUESTION}],
            }
            text = httpx2.post(f"{url}/v1/chat/completions", json=body, headers=HEADERS).text
            assert endpoint.writer.drain(60)
    return text


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def test_a_stream_the_upstream_cuts_short_is_not_saved_as_a_whole_answer(
    config: ServeConfig, memory: Path
) -> None:
    """The upstream closes the connection mid-reply (no finish_reason, no [DONE]): the
    client has what came, but the memory does not keep half an answer as the turn."""
    text = _streamed(config, lambda conn: conn.sendall(HEAD + _sse("The rotation escalates")))
    assert "The rotation escalates" in text
    assert list_conversations(memory) == []


def test_a_stream_that_finished_without_done_is_saved(config: ServeConfig, memory: Path) -> None:
    """Some servers end with a finish_reason and never send [DONE]: that answer is whole."""
    whole = HEAD + _sse("It escalates ") + _sse("to Maria Lopez.", finish="stop")
    _streamed(config, lambda conn: conn.sendall(whole))
    [saved] = list_conversations(memory)
    assert (
        parse((memory / saved.path).read_text()).turns[0].answer == "It escalates to Maria Lopez."
    )


def test_a_stream_whose_upstream_breaks_after_finishing_is_saved_whole(
    config: ServeConfig, memory: Path
) -> None:
    """The upstream says the reply finished, then breaks the connection (garbage, a
    reset): the answer was whole, so the turn is saved, and the client gets no error
    event after its finished reply."""

    def finish_then_break(conn: socket.socket) -> None:
        events = _sse("It escalates ") + _sse("to Maria Lopez.", finish="stop")
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
            + f"{len(events):x}\r\n".encode()
            + events
            + b"\r\n"
            + b"not a chunk size\r\n"  # the HTTP client fails here, after the finish
        )

    text = _streamed(config, finish_then_break)
    assert "Maria Lopez" in text
    assert "stopped answering" not in text
    [saved] = list_conversations(memory)
    assert (
        parse((memory / saved.path).read_text()).turns[0].answer == "It escalates to Maria Lopez."
    )


def test_health_says_when_a_crash_left_the_memory_needing_recovery(
    served: Served, memory: Path
) -> None:
    """gam-serve killed mid-commit leaves the journal: every later turn fails (logged only)
    until recovery, so /health must not say "ok"."""
    assert httpx2.get(f"{served.url}/health").json()["status"] == "ok"
    journal = {"operation": "chat", "started": "2026-01-01T00:00:00+00:00", "head": None, "pid": 1}
    (memory / JOURNAL_FILE).write_text(json.dumps(journal))
    health = httpx2.get(f"{served.url}/health").json()
    assert health["status"] == "needs recovery"
    served.client().chat.completions.create(
        model="gam", messages=[{"role": "user", "content": QUESTION}]
    )
    assert served.endpoint.writer.drain(60)
    assert httpx2.get(f"{served.url}/health").json()["failed_turns"] == 1


def test_an_unknown_conversation_id_starts_a_new_conversation(served: Served, memory: Path) -> None:
    """A client naming a conversation that does not exist (stale, or from another memory)
    still has its turn saved, as a new conversation, rather than silently lost."""
    served.client().chat.completions.create(
        model="gam",
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={CONVERSATION_HEADER: "no-such-conversation"},
    )
    assert served.endpoint.writer.drain(60)
    assert served.endpoint.writer.stats.failed == []
    [saved] = list_conversations(memory)
    assert parse((memory / saved.path).read_text()).turns[0].question == QUESTION
