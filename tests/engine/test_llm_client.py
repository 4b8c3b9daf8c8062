"""The LLM client against the scripted server over real HTTP, one test per fault."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from gam_desktop.engine.ingest.chunking import Chunker
from gam_desktop.engine.ingest.context import document_context
from gam_desktop.engine.ingest.documents import load_text
from gam_desktop.engine.ingest.memorize import in_context
from gam_desktop.engine.ingest.prompts import MemoryDraft, memorize_messages
from gam_desktop.engine.llm import (
    LLMAuthError,
    LLMCallFailed,
    LLMClient,
    LLMSettings,
    LLMUnreachable,
    StructuredOutputError,
)
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.progress import CancelToken, OperationCancelled
from gam_desktop.selfcheck.scripted_llm import Fault, task_of

GIL = "Python's GIL prevents true multi-threading. Threads still help with I/O."


def memorize(client: LLMClient, cancel: CancelToken | None = None) -> MemoryDraft:
    return client.structured(memorize_messages(GIL), MemoryDraft, stage="memorize", cancel=cancel)


def test_structured_reply_uses_json_schema_and_counts_usage(settings, llm_server) -> None:
    client = LLMClient(settings)
    draft = memorize(client)
    assert "GIL" in draft.memory
    assert llm_server.state.requests[0]["response_format"] == "json_schema"
    stage = client.usage.stages["memorize"]
    assert stage.calls == 1 and stage.prompt_tokens > 50 and stage.completion_tokens > 5


def test_malformed_json_is_repaired_without_a_second_call(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("malformed_json"))
    assert "GIL" in memorize(LLMClient(settings)).memory
    assert len(llm_server.state.requests) == 1


def test_no_json_at_all_is_reasked_with_the_error(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("garbage"))
    assert "GIL" in memorize(LLMClient(settings)).memory
    reask = llm_server.state.requests[1]["messages"][-1]["content"]
    assert "invalid" in reask and "no JSON" in reask


def test_wrong_shape_is_reasked_with_the_validation_error(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("wrong_shape"))
    assert "GIL" in memorize(LLMClient(settings)).memory
    reask = llm_server.state.requests[1]["messages"][-1]["content"]
    assert "title" in reask and "Field required" in reask


def test_wrong_shape_twice_raises_structured_output_error(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("wrong_shape", times=5))
    # The re-ask is recognised by the server and answered correctly, so force the
    # re-ask to fail too by making every reply garbage-shaped via the "prompt" path.
    client = LLMClient(settings)
    original = client.complete

    def always_wrong(*args, **kwargs):
        response = original(*args, **kwargs)
        response.choices[0].message.content = '{"unexpected": true}'
        return response

    client.complete = always_wrong  # type: ignore[method-assign]
    with pytest.raises(StructuredOutputError, match="re-ask"):
        memorize(client)


def test_429_honours_retry_after(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("429", seconds=1))
    started = time.monotonic()
    memorize(LLMClient(settings))
    assert time.monotonic() - started >= 1.0  # waited as told, not the 0.01 s backoff
    assert len(llm_server.state.requests) == 2


def test_500_is_retried_then_succeeds(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("500", times=2))
    assert "GIL" in memorize(LLMClient(settings)).memory
    assert len(llm_server.state.requests) == 3


def test_500_every_time_fails_after_the_retries(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("500", times=100))
    with pytest.raises(LLMCallFailed, match="kept failing after 4 attempts"):
        memorize(LLMClient(settings))
    assert len(llm_server.state.requests) == 4


def test_timeout_is_retried(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("slow", seconds=2.0))
    # One call at a time: none can be queued ahead of it, so 0.5 s of silence is the limit.
    client = LLMClient(settings.model_copy(update={"timeout": 0.5, "workers": 1}))
    assert "GIL" in memorize(client).memory
    assert len(llm_server.state.requests) == 2


def test_server_without_json_schema_falls_back_and_remembers(settings, llm_server) -> None:
    llm_server.state.reject.add("json_schema")
    client = LLMClient(settings)
    memorize(client)
    memorize(client)
    formats = [r["response_format"] for r in llm_server.state.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert "JSON schema" in llm_server.state.requests[1]["messages"][0]["content"]


def test_server_without_any_response_format_uses_the_prompt(settings, llm_server) -> None:
    llm_server.state.reject.update({"json_schema", "json_object"})
    client = LLMClient(settings)
    assert "GIL" in memorize(client).memory
    assert "GIL" in memorize(client).memory
    formats = [r["response_format"] for r in llm_server.state.requests]
    assert formats == ["json_schema", "json_object", None, None]


def test_refused_key_is_an_auth_error(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("401"))
    with pytest.raises(LLMAuthError, match="refused the API key"):
        memorize(LLMClient(settings))
    assert len(llm_server.state.requests) == 1  # no pointless retries


def test_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LLMSettings(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_base=0.01
    )
    with pytest.raises(LLMUnreachable, match="cannot reach"):
        memorize(LLMClient(settings))


def test_cancel_during_backoff_stops_at_once(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("429", seconds=30))
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(OperationCancelled):
        memorize(LLMClient(settings), cancel)
    assert time.monotonic() - started < 10


def test_cancelled_token_makes_no_call(settings, llm_server) -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(OperationCancelled):
        memorize(LLMClient(settings), cancel)
    assert llm_server.state.requests == []


def release_at(server: Any, received: int) -> None:
    """Hold every memorize call until `received` of them reached the server (so that as
    many as the client allows are in flight at once), then let all of them through."""
    server.state.hold_after = {"memorize": 0}

    def release() -> None:
        server.state.slots.wait_until(lambda slots: slots.received >= received)
        server.state.released.set()

    threading.Thread(target=release, daemon=True).start()


def test_parallel_map_runs_on_workers_and_keeps_order(settings, llm_server) -> None:
    # The first four calls are held until all four reached the server (no latency to race
    # against: under load, threads started 0.3 s apart never overlapped).
    release_at(llm_server, 4)
    client = LLMClient(settings.model_copy(update={"workers": 4}))
    done: list[int] = []
    results = client.parallel_map(
        lambda i: (i, memorize(client).title), range(8), on_done=done.append
    )
    assert [r[0] for r in results] == list(range(8))
    assert done == list(range(1, 9))
    assert llm_server.state.max_in_flight == 4  # four workers, never more


def test_settings_from_environment_never_show_the_key() -> None:
    env = {
        "OPENAI_API_KEY": "sk-secret-value-123",
        "OPENAI_BASE_URL": "http://h/v1",
        "OPENAI_MODEL": "base-model",
        "CHAT_AGENT_MODEL": "chat-model",
        "GAM_AGENT_TEMPERATURE": "0.1",
    }
    builder = LLMSettings.from_env("builder", env=env)
    chat = LLMSettings.from_env("chat", env=env)
    assert (builder.model, builder.temperature) == ("base-model", 0.1)
    assert (chat.model, chat.temperature) == ("chat-model", 0.0)  # reading, not writing
    assert builder.key_value() == "sk-secret-value-123"
    assert "sk-secret" not in repr(builder) and "sk-secret" not in str(builder.model_dump())


def test_cancel_does_not_wait_for_calls_in_flight(settings, llm_server) -> None:
    llm_server.state.latency_s = 5.0
    client = LLMClient(settings.model_copy(update={"timeout": 30}))
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(OperationCancelled):
        client.parallel_map(lambda _: memorize(client, cancel), range(4), cancel=cancel)
    assert time.monotonic() - started < 4.0  # returned before the 5 s replies arrived


def test_unreadable_retry_after_falls_back_to_backoff() -> None:
    from types import SimpleNamespace

    from gam_desktop.engine.llm.client import _retry_after

    def error(headers: dict[str, str]) -> Exception:
        exc = Exception()
        exc.response = SimpleNamespace(headers=headers)  # type: ignore[attr-defined]
        return exc

    assert _retry_after(error({"retry-after": "soon, maybe"})) is None
    assert _retry_after(error({"retry-after": "2"})) == 2.0
    assert _retry_after(error({"retry-after-ms": "1500"})) == 1.5


def test_each_call_names_its_stage_and_the_scripted_server_routes_by_it(
    settings, llm_server
) -> None:
    # a prompt that opens like the memorizer's, sent by the reading stage: the stage wins
    messages = [
        {"role": "system", "content": "You are a memory generation agent. Unusual wording."},
        {"role": "user", "content": "Passages:\n\n[1] (a — b)\nThe sky is blue.\n\nQuestion: sky?"},
    ]
    LLMClient(settings).text(messages, stage="read")
    (request,) = llm_server.state.requests
    assert request["task"] == "read"
    assert task_of(messages) == "chat"  # without the header: no wording of ours routes it


def test_a_memory_cut_short_before_its_tldr_is_kept_without_a_second_call(
    settings, llm_server
) -> None:
    """A small model that fills its token cap with the memory never writes the tldr: the
    note keeps the model's memory (json-repair closes the reply) and takes its tldr from
    it, instead of a re-ask that fails the same way and a note written without the LLM.
    The schema sent still asks for the tldr."""
    llm_server.state.faults.append(Fault("cut_short", task="memorize"))
    draft = memorize(LLMClient(settings))
    assert "GIL" in draft.memory and draft.tldr == ""
    assert len(llm_server.state.requests) == 1
    (chunk,) = Chunker(ChunkConfig(min_tokens=20, max_tokens=400)).chunk_documents(
        [load_text(GIL, "gil.md")]
    )
    note = in_context(draft, chunk, document_context(chunk.source))
    assert note.tldr.endswith("Python's GIL prevents true multi-threading.")  # its first sentence
