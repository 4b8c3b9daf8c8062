"""A reply with an error status and a body without end (issue 36): the openai SDK read the
whole body of a 4xx or 5xx to build its error, and httpx the whole body of a call not
streamed (the embeddings'), so a hostile or broken server had the app read gigabytes into
memory. An error's body is read no further than its start (`ERROR_BODY_LIMIT`, decoded:
a gzip bomb is cut too), the connection closed (the server sees the hang-up), and the error
is the status's, as before: asked again for a 429 or a 500, then said; a short JSON error
keeps the server's words. An error's body that trickles in, each byte within the read's
timeout, is read no longer than `ERROR_BODY_SECONDS`. The server's own words of a refused
key or a rate limit are in the line the person is shown when they are short (and without
the key). An embeddings reply that succeeds is read no further than its batch's vectors can
take, 64 MB at most. The server is a tiny one on 127.0.0.1, port 0 (tests/chunked_server.py);
no answer of it sends more than `CAP` bytes (50 MB) unless a test says more."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

import pytest
from pydantic import ValidationError

from gam_desktop.engine.llm import (
    LLMAuthError,
    LLMCallFailed,
    LLMClient,
    LLMError,
    LLMSettings,
    bodies,
)
from gam_desktop.engine.llm.bodies import ERROR_BODY_LIMIT
from gam_desktop.engine.llm.embeddings import (
    MAX_BATCH,
    MAX_REPLY_BYTES,
    SPARE_BYTES,
    VECTOR_BYTES,
    Embedder,
    EmbeddingError,
    EmbeddingSettings,
    reply_limit,
)
from tests.chunked_server import CAP, Call, ChunkedServer, endless

PAGE = b"<html><body><h1>502 Bad Gateway</h1>" + b"<p>upstream failed</p>" * 20


def whole(body: bytes) -> Callable[[Call], None]:
    def answer(call: Call) -> None:
        if body:  # (an empty chunk would be the body's end, and then another)
            call.send(body)

    return answer


def ask(base_url: str, key: str = "k") -> None:
    settings = LLMSettings(
        base_url=base_url,
        model="m",
        api_key=key,
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
        assert str(refused.value) == f"{s.base_url} refused the API key (HTTP 401): {said}"
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


def trickle(call: Call) -> None:
    """An error page begun, then a byte at a time, each well within any read's timeout, for
    as long as the server runs (a client that waits for the end waits for ever)."""
    call.send(PAGE)
    while call.more():
        call.send(b" ")
        call.stop.wait(0.05)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("caller", ["chat", "embeddings"])
def test_an_error_body_that_trickles_is_read_no_longer_than_its_time(
    caller: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Capped in size but not in time, it was read for as long as the server trickled it."""
    monkeypatch.setattr(bodies, "ERROR_BODY_SECONDS", 0.2)  # (10 s in the app)
    headers = {"Retry-After-Ms": "1"}  # the embeddings SDK's own retry, at once
    with ChunkedServer(trickle, content_type="text/html", status=500, headers=headers) as s:
        with pytest.raises(LLMError) as failed:
            if caller == "chat":
                ask(s.base_url)
            else:
                embedder(s.base_url).embed(["a"], "passage")
        assert str(failed.value) == (
            f"the LLM server at {s.base_url} kept failing after 2 attempts: "
            "InternalServerError (HTTP 500)"
            if caller == "chat"
            else "HTTP 500"
        )
        assert getattr(sdk_error(failed), "body", None) == PAGE.decode()  # (its spaces stripped)
        assert s.calls == 2  # asked again, as a 500 always is
        for _ in range(2):  # each body closed: the server stops trickling it
            assert s.hung_up.acquire(timeout=30)


# -- the server's own words of a refused key or a rate limit, in the line shown -----------

KEY = "sk-test-Q2x7Lm4Pz9Rt6Vb3"  # the key the client sends: no server's words may show it


def refusal(status: int, body: bytes, content_type: str = "application/json") -> str:
    """The line a person is shown for a call answered with `status` and `body`, every time,
    without its server's address."""
    with ChunkedServer(whole(body), content_type=content_type, status=status) as s:
        with pytest.raises(LLMAuthError if status == 401 else LLMCallFailed) as raised:
            ask(s.base_url, key=KEY)
        assert s.calls == (1 if status == 401 else 2)  # a refused key is not asked again
        return str(raised.value).replace(s.base_url, "URL")


STATUS_LINE = {
    401: "URL refused the API key (HTTP 401)",
    429: "the LLM server at URL kept failing after 2 attempts: RateLimitError (HTTP 429)",
}
WORDS = {
    401: "Incorrect API key provided: sk-te***V3. You can find your key in your account.",
    429: "You exceeded your current quota, please check your plan and billing details.",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("status", [401, 429])
@pytest.mark.parametrize("form", ["json", "text"])
def test_a_refused_key_and_a_rate_limit_show_the_servers_words(status: int, form: str) -> None:
    """OpenAI's JSON error's message, or a body that is plain text: in the log only, before."""
    said = WORDS[status]
    body = json_error(said) if form == "json" else f"{said}\n".encode()
    kind = "application/json" if form == "json" else "text/plain"
    assert refusal(status, body, kind) == f"{STATUS_LINE[status]}: {said}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("status", [401, 429])
def test_a_key_in_the_servers_words_is_not_shown(status: int) -> None:
    """Echoed whole, broken by a character that does not show (taken out before the key is
    looked for), or masked star by star (OpenAI's project keys: ~150 stars)."""
    echoed = f"Incorrect API key provided: {KEY}."
    assert refusal(status, json_error(echoed)) == (
        f"{STATUS_LINE[status]}: Incorrect API key provided: [redacted]."
    )
    hidden = f"Incorrect API key provided: {KEY[:10]}\u200b{KEY[10:]}."
    assert KEY not in refusal(status, json_error(hidden))
    masked = f"Incorrect API key provided: sk-proj-{'*' * 156}AbCd."
    assert refusal(status, json_error(masked)) == (
        f"{STATUS_LINE[status]}: Incorrect API key provided: sk-proj-***AbCd."
    )


@pytest.mark.timeout(60)
def test_control_characters_of_the_servers_words_are_taken_out() -> None:
    said = "Invalid\tkey:\x1b[31m revoked\u202e\x07"
    assert refusal(401, json_error(said)) == f"{STATUS_LINE[401]}: Invalid key:[31m revoked"


NOT_WORDS = {
    "a page": (PAGE, "text/html"),
    "a short page": (b"<html><body><h1>401 Authorization Required</h1></body></html>", "text/html"),
    "long words": (json_error("Your key is not valid here. " * 8), "application/json"),
    "lines": (b"Unauthorized\nTraceback (most recent call last):\n  File x\n", "text/plain"),
    "nothing": (b"", "text/plain"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("status", [401, 429])
@pytest.mark.parametrize("body", list(NOT_WORDS))
def test_a_page_or_long_words_are_not_shown(status: int, body: str) -> None:
    """Only the status line: a page's markup, a paragraph or a traceback are no words for
    it (they are in the log)."""
    assert refusal(status, *NOT_WORDS[body]) == STATUS_LINE[status]


def embedder(base_url: str, batch_size: int = 1) -> Embedder:
    # one text a call: a reply may hold one vector; the SDK asks once more after a 500
    settings = EmbeddingSettings(base_url=base_url, model="m", api_key="k", batch_size=batch_size)
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


@pytest.mark.timeout(60)
def test_the_embeddings_refusal_shows_the_servers_words_without_the_key() -> None:
    echoed = f"Incorrect API key provided: {KEY}."
    with ChunkedServer(whole(json_error(echoed)), status=401) as s:
        settings = EmbeddingSettings(base_url=s.base_url, model="m", api_key=KEY, batch_size=1)
        with pytest.raises(EmbeddingError) as failed:
            Embedder(settings).embed(["a"], "passage")
    assert str(failed.value) == "HTTP 401: Incorrect API key provided: [redacted]."


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


@pytest.mark.timeout(180)
def test_an_endless_embeddings_reply_of_the_largest_batch_is_read_no_further_than_64_mb() -> None:
    """The bound grew with the batch: 512 MB for a batch of 2,048."""
    answer = endless(b'{"object": "list", "data": [{"index": 0, "embedding": [', b"0.5, " * 4096)
    with ChunkedServer(answer, content_type="application/json", cap=2 * MAX_REPLY_BYTES) as s:
        with pytest.raises(EmbeddingError) as failed:
            embedder(s.base_url, batch_size=MAX_BATCH).embed(["a"], "passage")
        assert str(failed.value) == (
            f"the reply ran on past {MAX_REPLY_BYTES:,} bytes; it was not read further"
        )
        assert s.hung_up.acquire(timeout=120)
        # Read to 64 MB; what the sockets' buffers held besides is a few MB at most.
        assert all(call.sent < MAX_REPLY_BYTES + CAP // 5 for call in s.answered)


def test_a_real_reply_of_the_largest_batch_fits_and_a_larger_batch_is_refused() -> None:
    """OpenAI's reply of MAX_BATCH vectors of 3,072 numbers (text-embedding-3-large), every
    number its longest, pretty-printed as OpenAI sends it: within the bound."""
    vector = [-1.2345678901234567e-05] * 3072  # 23 characters each

    def size(count: int) -> int:
        data = [{"object": "embedding", "index": MAX_BATCH - 1, "embedding": vector}] * count
        usage = {"prompt_tokens": 8191 * MAX_BATCH, "total_tokens": 8191 * MAX_BATCH}
        body = {"object": "list", "data": data, "model": "text-embedding-3-large", "usage": usage}
        return len(json.dumps(body, indent=2).encode())

    one, two = size(1), size(2)
    real = one + (MAX_BATCH - 1) * (two - one)  # (each vector as long as the next)
    assert real <= reply_limit(MAX_BATCH) <= MAX_REPLY_BYTES
    with pytest.raises(ValidationError):
        EmbeddingSettings(batch_size=MAX_BATCH + 1)
