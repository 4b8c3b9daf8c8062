"""A reply with an error status and a body without end (issue 36): the openai SDK read the
whole body of a 4xx or 5xx to build its error, and httpx the whole body of a call not
streamed (the embeddings'), so a hostile or broken server had the app read gigabytes into
memory. An error's body is read no further than its start (`ERROR_BODY_LIMIT`, decoded:
a gzip bomb is cut too), the connection closed (the server sees the hang-up), and the error
is the status's, as before: asked again for a 429 or a 500, then said; a short JSON error
keeps the server's words. An embeddings reply that succeeds is read no further than its
batch's vectors can take. The server is a tiny one on 127.0.0.1, port 0
(tests/chunked_server.py); no answer of it sends more than `CAP` bytes (50 MB)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

import pytest

from gam_desktop.engine.llm import LLMAuthError, LLMCallFailed, LLMClient, LLMSettings
from gam_desktop.engine.llm.bodies import ERROR_BODY_LIMIT
from gam_desktop.engine.llm.embeddings import (
    SPARE_BYTES,
    VECTOR_BYTES,
    Embedder,
    EmbeddingError,
    EmbeddingSettings,
)
from tests.chunked_server import CAP, Call, ChunkedServer, endless

PAGE = b"<html><body><h1>502 Bad Gateway</h1>" + b"<p>upstream failed</p>" * 20


def whole(body: bytes) -> Callable[[Call], None]:
    def answer(call: Call) -> None:
        call.send(body)

    return answer


def ask(base_url: str) -> None:
    settings = LLMSettings(
        base_url=base_url,
        model="m",
        api_key="k",
        max_retries=1,
        backoff_base=0.001,
        workers=1,
    )
    LLMClient(settings).text([{"role": "user", "content": "hi"}], stage="memorize")


def sdk_error(raised: pytest.ExceptionInfo[Exception]) -> object:
    """The SDK's error an LLMError was raised from (its status, message and body)."""
    cause = raised.value.__cause__
    assert cause is not None and hasattr(cause, "status_code")
    return cause


ENDLESS_ERRORS = {
    # a page of 50 MB, every byte of it sent
    "500": (500, endless(PAGE, b"<p>upstream failed</p>" * 512), "InternalServerError"),
    # a JSON error whose message never ends
    "429": (429, endless(b'{"error": {"message": "slow', b" and slow" * 2048), "RateLimitError"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("status", ["500", "429"])
def test_an_endless_error_body_is_read_no_further_than_its_start(status: str) -> None:
    code, answer, kind = ENDLESS_ERRORS[status]
    with ChunkedServer(answer, content_type="text/html", status=code) as server:
        with pytest.raises(LLMCallFailed) as failed:
            ask(server.base_url)
        assert str(failed.value) == (
            f"the LLM server at {server.base_url} kept failing after 2 attempts: "
            f"{kind} (HTTP {code})"
        )
        body = getattr(sdk_error(failed), "body", None)
        assert isinstance(body, str) and 0 < len(body) <= ERROR_BODY_LIMIT
        assert body.startswith(PAGE.decode() if code == 500 else '{"error"')
        assert server.calls == 2  # asked again, as a 429 or a 500 always is
        for _ in range(2):  # each body closed: the server stops writing it
            assert server.hung_up.acquire(timeout=60)
        # Read to 64 kB; what the sockets' buffers held besides is a few MB at most.
        assert all(call.sent < CAP // 5 for call in server.answered)


@pytest.mark.timeout(60)
def test_a_gzip_bomb_in_an_error_body_is_cut_as_it_unpacks() -> None:
    """32 kB on the wire, 32 MB unpacked: the bytes are counted as they unpack."""
    bomb = gzip.compress(PAGE + b"x" * (32 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < ERROR_BODY_LIMIT
    headers = {"Content-Encoding": "gzip"}
    with ChunkedServer(whole(bomb), content_type="text/html", status=500, headers=headers) as s:
        with pytest.raises(LLMCallFailed, match=r"InternalServerError \(HTTP 500\)$") as failed:
            ask(s.base_url)
        body = getattr(sdk_error(failed), "body", None)
        assert isinstance(body, str) and body.startswith(PAGE.decode())
        assert len(body) <= ERROR_BODY_LIMIT


@pytest.mark.timeout(60)
def test_an_error_body_broken_off_is_still_the_error_of_its_status() -> None:
    """It was the transport's bare error (not one the app words), read past the status."""

    def broken_off(call: Call) -> None:
        call.send(PAGE)
        call.break_off()

    with ChunkedServer(broken_off, content_type="text/html", status=500) as server:
        with pytest.raises(LLMCallFailed) as failed:
            ask(server.base_url)
        assert str(failed.value) == (
            f"the LLM server at {server.base_url} kept failing after 2 attempts: "
            "InternalServerError (HTTP 500)"
        )
        assert getattr(sdk_error(failed), "body", None) == PAGE.decode()


def json_error(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "x", "code": None}}).encode()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_a_short_error_keeps_the_servers_words(encoding: str) -> None:
    """A 401's JSON error (its message in the SDK's error), a 402's (said to the person),
    plain or gzipped: read whole, as before."""
    pack: Callable[[bytes], bytes] = gzip.compress if encoding == "gzip" else bytes
    headers = {"Content-Encoding": encoding}
    said = "Incorrect API key provided: sk-wr***ng."
    refusing = whole(pack(json_error(said)))
    with ChunkedServer(refusing, content_type="application/json", status=401, headers=headers) as s:
        with pytest.raises(LLMAuthError) as refused:
            ask(s.base_url)
        assert str(refused.value) == f"{s.base_url} refused the API key (HTTP 401)"
        assert getattr(sdk_error(refused), "message", None) == f"Error code: 401 - {said}"
        assert s.calls == 1  # a refused key is not asked again
    unpaid = whole(pack(json_error("Insufficient credits: add some at example.com/billing")))
    with ChunkedServer(unpaid, content_type="application/json", status=402, headers=headers) as s:
        with pytest.raises(LLMCallFailed) as failed:
            ask(s.base_url)
        assert str(failed.value) == (
            f"the LLM server at {s.base_url} refused the request (HTTP 402): "
            "Insufficient credits: add some at example.com/billing"
        )


def embedder(base_url: str) -> Embedder:
    # one text a call: a reply may hold one vector; the SDK asks once more after a 500
    settings = EmbeddingSettings(base_url=base_url, model="m", api_key="k", batch_size=1)
    return Embedder(settings)


@pytest.mark.timeout(120)
def test_an_endless_error_body_of_the_embeddings_is_read_no_further_than_its_start() -> None:
    answer = endless(PAGE, b"<p>upstream failed</p>" * 512)
    headers = {"Retry-After-Ms": "1"}  # the SDK's own retry (max_retries 1), at once
    with ChunkedServer(answer, content_type="text/html", status=500, headers=headers) as s:
        with pytest.raises(EmbeddingError, match=r"^HTTP 500$") as failed:
            embedder(s.base_url).embed(["a"], "passage")
        body = getattr(sdk_error(failed), "body", None)
        assert isinstance(body, str) and 0 < len(body) <= ERROR_BODY_LIMIT
        assert s.calls == 2
        for _ in range(2):
            assert s.hung_up.acquire(timeout=60)
        assert all(call.sent < CAP // 5 for call in s.answered)


@pytest.mark.timeout(120)
def test_an_endless_embeddings_reply_is_read_no_further_than_its_vectors_can_take() -> None:
    answer = endless(b'{"object": "list", "data": [{"index": 0, "embedding": [', b"0.5, " * 4096)
    with ChunkedServer(answer, content_type="application/json") as server:
        with pytest.raises(EmbeddingError) as failed:
            embedder(server.base_url).embed(["a"], "passage")
        assert str(failed.value) == (
            f"the reply ran on past {VECTOR_BYTES + SPARE_BYTES:,} bytes; it was not read further"
        )
        assert server.hung_up.acquire(timeout=60)
        assert all(call.sent < CAP // 5 for call in server.answered)
