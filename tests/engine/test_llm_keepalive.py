"""A server that accepts a streamed call and then sends only SSE keep-alive comments, for
ever: comments are no progress (only tokens are), and over all its attempts a call waits
for a first token no longer than its most patient attempt would, then is given up on and
said so, stopping the operation (it waited 31 times the limit, then fell back, and the
add's next call waited as long: an add sat at "Summarizing 1 chunk" for minutes)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from gam_desktop.engine.llm import LLMCallFailed, LLMClient, LLMSettings
from gam_desktop.engine.llm.errors import LLMNoReply
from tests.chunked_server import Call, ChunkedServer, chunk


def keep_alive(token_first: bool = False) -> Callable[[Call], None]:
    """An event stream of keep-alive comments only (after one token, when `token_first`),
    until the client hangs up."""

    def answer(call: Call) -> None:
        if token_first:
            call.send(chunk({"role": "assistant", "content": "Hi"}))
        while call.more():
            call.send(b": keep-alive\n\n")
            call.stop.wait(0.05)

    return answer


@pytest.fixture
def keepalive() -> Iterator[ChunkedServer]:
    with ChunkedServer(keep_alive()) as server:
        yield server


def _client(base_url: str, timeout: float, retries: int) -> LLMClient:
    return LLMClient(
        LLMSettings(
            base_url=base_url,
            model="m",
            api_key="k",
            timeout=timeout,
            max_retries=retries,
            backoff_base=0.01,
            workers=1,  # none of ours ahead: the first attempt's limit is the timeout
        )
    )


@pytest.mark.timeout(60)
def test_keep_alive_comments_alone_end_in_a_plain_error_after_the_most_patient_wait(
    keepalive: ChunkedServer,
) -> None:
    """Timeout 0.3 s: the attempts wait 0.3, 0.6 and 1.2 s, and the fourth only what is
    left of 8 x 0.3 s; then the call is given up on, not asked 11 times (21 s)."""
    client = _client(keepalive.base_url, 0.3, retries=10)
    started = time.monotonic()
    with pytest.raises(LLMNoReply) as failed:  # no fallback: the operation stops
        client.text([{"role": "user", "content": "hi"}], stage="memorize")
    assert str(failed.value) == (
        f"the LLM server at {keepalive.base_url} sent no reply in 2.4 s over 4 attempts (it "
        "kept the call open without a single token): it may be stuck, or busy with other "
        "programs' work. Try again later, or raise the timeout (0.3 s) if the server is "
        "only slow"
    )
    assert keepalive.calls == 4
    assert time.monotonic() - started < 20  # (not the 21 s of every attempt's patience)


@pytest.mark.timeout(60)
def test_keep_alive_comments_after_a_token_are_silence() -> None:
    """Mid-reply, comments do not move the silence limit either: each attempt is closed
    `timeout` after its token, and the call fails after its retries."""
    with ChunkedServer(keep_alive(token_first=True)) as server:
        client = _client(server.base_url, 0.3, retries=2)
        with pytest.raises(LLMCallFailed, match=r"kept failing after 3 attempts: no token for"):
            client.text([{"role": "user", "content": "hi"}], stage="memorize")
        assert server.calls == 3
