"""A server that replies without end (issue 36): whitespace, token after token, or chunks with
nothing in them. Every chunk of whitespace was a token, so the silence limit never came, and
the client read on for ever, past `max_tokens`. A reply is read no further than its
`max_tokens` could make it (in characters, with room to spare) and no further than
EMPTY_CHUNKS empty chunks in a row: the stream is closed (the server sees the hang-up), the
call asked again, then failed with words that say why.

A reply that is one body, not a stream, is bounded the same way, in the same words: the
body a server sends for a call not streamed (it refused `stream`, or is remembered so) was
read whole by the SDK however long it was, and a body trickled in a byte at a time kept
every read within its timeout, so it was read for ever too. It must be whole within the
limit a first token has (its bytes are no tokens). The server is a tiny one on 127.0.0.1,
port 0 (tests/chunked_server.py); no answer of it sends more than `CAP` bytes."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gam_desktop.engine.llm import LLMCallFailed, LLMClient, LLMSettings, capabilities
from gam_desktop.engine.llm.streaming import EMPTY_CHUNKS, reply_budget
from tests.chunked_server import CAP, Call, ChunkedServer, chunk, endless

MAX_TOKENS = 64
RAN_ON = (
    f"the reply ran on past its {MAX_TOKENS} tokens (more than "
    f"{reply_budget(MAX_TOKENS) or 0:,} characters without an end); it was not read further"
)
# A chat completion whose content never closes: what follows is only ever more of it.
BODY_START = (
    b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": '
    b'[{"index": 0, "message": {"role": "assistant", "content": "'
)


def trickle(call: Call) -> None:
    """A body begun, then a space at a time, each well within any read's timeout (200 of
    them at most: a client that waits for the end gets it, with no chat completion)."""
    call.send(BODY_START)
    for _ in range(200):
        if not call.more():
            return
        call.send(b" ")
        call.stop.wait(0.05)


STREAMS = {
    # a run of spaces is a token, too
    "whitespace": endless(
        chunk({"role": "assistant", "content": ""}), chunk({"content": " " * 16}) * 64
    ),
    "empty": endless(chunk({"role": "assistant"}), chunk({"content": ""}) * 64),
}


@pytest.fixture
def endless_stream(request: pytest.FixtureRequest) -> Iterator[ChunkedServer]:
    with ChunkedServer(STREAMS[request.param]) as server:
        yield server


def client(base_url: str, timeout: float = 600, retries: int = 1) -> LLMClient:
    return LLMClient(
        LLMSettings(
            base_url=base_url,
            model="m",
            api_key="k",
            # (600 s) silence cannot end the endless calls: the whitespace keeps coming, and
            # an empty chunk's silence would take ten minutes
            timeout=timeout,
            max_retries=retries,
            backoff_base=0.01,
            max_tokens=MAX_TOKENS,
            workers=1,  # none of ours ahead: a first token's limit is the timeout
        )
    )


def ask(base_url: str, timeout: float = 600) -> None:
    client(base_url, timeout).text([{"role": "user", "content": "hi"}], stage="memorize")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("endless_stream", ["whitespace", "empty"], indirect=True)
def test_an_endless_reply_is_read_no_further_than_max_tokens_allows(
    endless_stream: ChunkedServer, request: pytest.FixtureRequest
) -> None:
    with pytest.raises(LLMCallFailed) as failed:
        ask(endless_stream.base_url)
    said = {
        "whitespace": RAN_ON,
        "empty": f"the server sent {EMPTY_CHUNKS:,} chunks in a row without a word of "
        "reply; it was not read further",
    }[request.node.callspec.params["endless_stream"]]
    assert str(failed.value) == (
        f"the LLM server at {endless_stream.base_url} kept failing after 2 attempts: {said}"
    )
    assert endless_stream.calls == 2  # asked again once, as for any broken reply
    for _ in range(2):  # each stream closed: the server stops writing it
        assert endless_stream.hung_up.acquire(timeout=60)


def whole_body_server(answer: Callable[[Call], None], how: str) -> ChunkedServer:
    """A server whose replies are one body, not a stream, as `how` says: it "ignored"
    `stream`, "refused" it (400), or is "remembered" as a server that does not stream."""
    server = ChunkedServer(answer, content_type="application/json", refuse_stream=how == "refused")
    if how == "remembered":
        capabilities.mark(server.base_url, "m", "stream", False)
    return server


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["ignored", "refused", "remembered"])
def test_an_endless_body_is_read_no_further_than_max_tokens_allows(how: str) -> None:
    with whole_body_server(endless(BODY_START, b" " * 16384), how) as server:
        with pytest.raises(LLMCallFailed) as failed:
            ask(server.base_url)
        assert str(failed.value) == (
            f"the LLM server at {server.base_url} kept failing after 2 attempts: {RAN_ON}"
        )
        assert len(server.answered) == 2  # asked again once, as for any broken reply
        streamed = [call.request.get("stream") for call in server.answered]
        assert streamed == ([True, True] if how == "ignored" else [None, None])
        for _ in range(2):  # each body closed: the server stops writing it
            assert server.hung_up.acquire(timeout=60)
        # Read to about 100 kB; what the sockets' buffers held besides is a few MB at most.
        assert all(call.sent < CAP // 5 for call in server.answered)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["ignored", "refused", "remembered"])
def test_a_body_trickled_in_must_be_whole_within_the_first_token_limit(how: str) -> None:
    """Timeout 0.3 s: the first attempt's body is closed 0.3 s after it was sent, the next
    (more patient, as after any call without a first token) 0.6 s after; never 10 s later
    at the body's end."""
    with whole_body_server(trickle, how) as server:
        with pytest.raises(LLMCallFailed) as failed:
            ask(server.base_url, timeout=0.3)
        assert str(failed.value) == (
            f"the LLM server at {server.base_url} kept failing after 2 attempts: "
            "no reply within 0.6 s"
        )
        assert len(server.answered) == 2
        for _ in range(2):  # each body closed at its limit: the server sees the hang-up
            assert server.hung_up.acquire(timeout=30)
