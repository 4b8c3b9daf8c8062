"""Streamed calls against the scripted server: a call is given up only when the server falls
silent, never while it waits its turn in the server's queue; a call given up on is closed
at the server; tool calls and usage survive the streaming; servers that reject streaming
are asked without it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from gam_desktop.engine.llm import LLMClient, LLMSettings
from gam_desktop.engine.llm.streaming import (
    BrokenReply,
    NoFirstToken,
    Silent,
    Watchdog,
    read_stream,
)
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.llm.tools import Tool, chat_with_tools
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer
from tests.documents import document_files
from tests.engine.test_llm_client import memorize


@pytest.fixture
def one_slot() -> Iterator[RunningServer]:
    count_tokens("warm up")  # the server's first usage count loads the tokenizer
    with RunningServer(latency_ms=1000, slots=1) as server:
        yield server


def test_a_one_slot_server_queueing_past_the_silence_limit_loses_no_call(
    one_slot: RunningServer, make_workflow, tmp_path
) -> None:
    """Eight calls at once at a server that works on one, 1 s each: a call with three or
    more ahead of it waits longer than the 2.5 s silence limit for its first token, and is
    still not given up on. (Seconds, not tenths: a loaded machine stalls a reply mid-stream
    for longer than a second.)"""
    settings = LLMSettings(
        base_url=one_slot.base_url, model="scripted", api_key="k", timeout=2.5, workers=8
    )
    report = make_workflow(settings=settings).add(files=document_files(tmp_path / "docs", 8))
    slots = one_slot.state.slots
    assert slots.abandoned == 0 and slots.received == slots.completed
    assert one_slot.state.tasks().count("memorize") == report.chunks  # none asked twice
    assert report.fallbacks == 0 and report.chunks >= 8  # every summary kept
    assert one_slot.state.max_in_flight >= 4  # a first token 3 s away at least


@pytest.mark.timeout(90)
def test_a_call_without_a_first_token_is_asked_again_with_more_patience() -> None:
    """A server busy with work our limiter cannot see (another program's calls ahead of
    ours in its queue): each first token comes 4.5 s after the request, the limit is 3 s.
    With the same limit every attempt would fail the same way; the second waits 6 s and
    gets its reply, and the server received as many requests as attempts were made. The
    next call is as patient from its first attempt."""
    count_tokens("warm up")  # the server's first usage count loads the tokenizer
    with RunningServer(latency_ms=4500) as server:
        settings = LLMSettings(
            base_url=server.base_url,
            model="scripted",
            api_key="k",
            timeout=3.0,
            max_retries=2,
            backoff_base=0.01,
            workers=1,  # none of ours ahead of it: the first limit is the 3 s alone
        )
        client = LLMClient(settings)
        assert "GIL" in memorize(client).memory
        slots = server.state.slots
        assert slots.wait_until(lambda s: s.received == s.completed + s.abandoned)
        assert (slots.received, slots.abandoned, slots.completed) == (2, 1, 1)
        assert "GIL" in memorize(client).memory  # the next call: one request
        assert slots.wait_until(lambda s: s.received == s.completed + s.abandoned)
        assert (slots.received, slots.abandoned, slots.completed) == (3, 1, 2)


def test_a_stream_that_falls_silent_is_closed_and_asked_again(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("stall"))  # the first word, then nothing
    client = LLMClient(settings.model_copy(update={"timeout": 0.5}))
    assert "GIL" in memorize(client).memory
    slots = llm_server.state.slots
    assert slots.wait_until(lambda s: s.abandoned == 1)  # the server saw the hang-up
    assert (slots.received, slots.completed) == (2, 1)


@pytest.mark.timeout(30)
def test_silence_after_the_first_token_is_timed_from_that_token() -> None:
    """A first token may be an hour away (a long queue ahead), the next no more than the
    silence limit: the watchdog shuts the socket down at the latter, waking the reader."""
    ours, theirs = socket.socketpair()
    token = SimpleNamespace(
        choices=[SimpleNamespace(index=0, delta=SimpleNamespace(content="Hi"), finish_reason=None)]
    )
    asleep = threading.Event()  # the watchdog waits for the first token's (hour-long) limit

    def clock() -> float:
        if threading.current_thread().name == "stream-watchdog":
            asleep.set()  # read under its lock, which it keeps until it sleeps
        return time.monotonic()

    def chunks() -> Iterator[Any]:
        assert asleep.wait(10)
        yield token
        ours.recv(1)  # blocks until the watchdog shuts the socket down
        raise ConnectionError("closed")

    network = SimpleNamespace(get_extra_info=lambda _name: ours)
    response = SimpleNamespace(
        headers={"content-type": "text/event-stream"}, extensions={"network_stream": network}
    )
    with pytest.raises(Silent, match=r"no token for 0\.05 s") as silent:
        read_stream(
            FakeStream(chunks(), response),
            completion_type=ChatCompletion,
            sent=time.monotonic(),
            first_token_limit=3600,
            silence=0.05,
            watchdog=Watchdog(clock),
        )
    assert not isinstance(silent.value, NoFirstToken)  # the reply had begun: no more patience
    assert theirs.recv(1) == b""  # the other end saw the hang-up
    ours.close()
    theirs.close()


class ReadTimeout(Exception):
    """httpx's read timeout, as the SDK's stream lets it through (matched by its name)."""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("ended_by", ["watchdog", "read timeout"])
def test_silence_before_the_first_token_is_told_apart(ended_by: str) -> None:
    """No first token: the watchdog shuts the socket down at the first token's limit, or
    the read times out first (its timeout is the same limit): either is NoFirstToken, the
    silence that asks for more patience on the next attempt."""
    ours, theirs = socket.socketpair()

    def chunks() -> Iterator[Any]:
        if ended_by == "read timeout":
            raise ReadTimeout("timed out")
        ours.recv(1)  # blocks until the watchdog shuts the socket down
        raise ConnectionError("closed")
        yield  # (a generator)

    network = SimpleNamespace(get_extra_info=lambda _name: ours)
    response = SimpleNamespace(
        headers={"content-type": "text/event-stream"}, extensions={"network_stream": network}
    )
    limit = 0.2 if ended_by == "watchdog" else 60
    with pytest.raises(NoFirstToken, match=f"no first token within {limit:g} s"):
        read_stream(
            FakeStream(chunks(), response),
            completion_type=ChatCompletion,
            sent=time.monotonic(),
            first_token_limit=limit,
            silence=3600,
            watchdog=Watchdog(),
        )
    ours.close()
    theirs.close()


def test_a_stream_that_ends_before_its_reply_did_is_no_reply() -> None:
    """A connection closed mid-reply reads as a clean end when the server sent no length:
    without a finish reason, what came is a piece of a reply, to be asked again."""
    piece = SimpleNamespace(
        choices=[SimpleNamespace(index=0, delta=SimpleNamespace(content='{"ti'))]
    )
    response = SimpleNamespace(headers={"content-type": "text/event-stream"}, extensions={})
    with pytest.raises(BrokenReply, match="cut short"):
        read_stream(
            FakeStream(iter([piece]), response),
            completion_type=ChatCompletion,
            sent=time.monotonic(),
            first_token_limit=60,
            silence=60,
        )


class FakeStream:
    """The SDK's stream as `read_stream` uses it: chunks, the HTTP response, close()."""

    def __init__(self, chunks: Iterator[Any], response: Any) -> None:
        self._chunks, self.response = chunks, response

    def __iter__(self) -> Iterator[Any]:
        return self._chunks

    def close(self) -> None:
        pass


def test_streamed_tool_calls_and_usage_are_put_back_together(settings, llm_server) -> None:
    client = LLMClient(settings)
    tool = Tool("cat", "Read a file", {"type": "object", "properties": {"file": {}}})
    reply = chat_with_tools(client, [{"role": "user", "content": "Read it."}], [tool], stage="x")
    assert reply.native and reply.calls[0].name == "cat" and reply.calls[0].arguments
    assert llm_server.state.requests[0]["stream"] == (True, True)  # streamed, usage asked
    usage = client.usage.stages["x"]
    assert usage.calls == 1 and usage.prompt_tokens == count_tokens("Read it.")


def test_a_server_rejecting_stream_options_streams_without(settings, llm_server) -> None:
    llm_server.state.reject.add("stream_options")
    client = LLMClient(settings)
    assert "GIL" in memorize(client).memory
    assert "GIL" in memorize(client).memory
    streams = [r["stream"] for r in llm_server.state.requests]
    assert streams == [(True, True), (True, False), (True, False)]  # remembered
    assert client.usage.stages["memorize"].calls == 2  # counted, the tokens estimated


def test_a_server_rejecting_streaming_is_asked_without(settings, llm_server) -> None:
    llm_server.state.reject.add("stream")
    client = LLMClient(settings)
    assert "GIL" in memorize(client).memory
    assert "GIL" in memorize(client).memory
    streams = [r["stream"][0] for r in llm_server.state.requests]
    assert streams == [True, True, False, False]  # with usage, without, then not streamed
    assert client.usage.stages["memorize"].calls == 2
