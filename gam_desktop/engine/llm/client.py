"""The one place that talks to an OpenAI-compatible server.

Retries are ours, not the SDK's (`max_retries=0`), so that they honour
`Retry-After`, stop when the operation is cancelled, and end in an error a person
can read. Transient is wider than 5xx: local servers under load also drop
connections, cut replies short and answer 200 with a body that is not JSON; all of
these are retried like a 500. Only a refused connection on the first attempt means
the server is not there at all (LLMUnreachable).

Structured output walks down json_schema -> json_object -> schema in the prompt,
remembering per server what was rejected.

Every call is streamed (llm/streaming.py) and given up on only when the server falls
silent, never for its total time: a call waiting in the server's queue is not abandoned
while the server will still do it. A server that rejects `stream_options` or `stream` is
asked without them (and remembered so); a reply not streamed is read as it comes, not by the
SDK, within a streamed reply's bounds (its `max_tokens`, and whole within the time a first
token has: `streaming.whole_reply`); of a reply with an error status, the SDK reads no more
than the start (llm/bodies.py). The calls in flight at once are as many as the
server's limiter allows (llm/concurrency.py: learned, or the person's `workers`). An
attempt that got no first token in time is asked again with twice the patience, and so are
the calls that follow (at most 8 times the first limit, given back as first tokens come in
time again): a server busy with another program's calls keeps a call waiting for longer
than any limit we could learn from our own calls. Over all its attempts, though, a call
waits for a first token no longer than its most patient attempt would (`FirstTokenWait`):
a server that keeps every attempt open without a token (an endless stream of keep-alive
comments, a stuck slot) is given up on and said so (LLMNoReply, which stops the operation
as an unreachable server does), not waited on for 31 times the limit for every call.
"""

from __future__ import annotations

import email.utils
import functools
import importlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from gam_desktop.engine.llm import capabilities, concurrency
from gam_desktop.engine.llm.errors import (
    LLMAuthError,
    LLMCallFailed,
    LLMNoReply,
    LLMRejected,
    LLMUnreachable,
    StructuredOutputError,
)
from gam_desktop.engine.llm.limit import MAX_LIMIT
from gam_desktop.engine.llm.protocol import STAGE_HEADER, Messages
from gam_desktop.engine.llm.redact import Redactor, redact_error, redact_reply
from gam_desktop.engine.llm.server_words import server_reason, shown_words
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.engine.llm.streaming import (
    BrokenReply,
    NoFirstToken,
    Silent,
    read_stream,
    whole_reply,
)
from gam_desktop.engine.llm.structured import ParseProblem, parse_model, schema_instruction
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.llm.usage import UsageMeter
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.textutil import plural

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


@functools.cache
def sdk() -> Any:
    """The openai SDK, imported on first use: it takes ~0.6 s to import, which the window
    should not pay at start-up (calls happen on worker threads anyway)."""
    return importlib.import_module("openai")


class _NotAReply(Exception):
    """A 200 whose body the SDK parsed into something that is no chat completion: text
    (an HTML error page served as text/html), a list, or `{"error": ...}`."""


def _retryable() -> tuple[type[Exception], ...]:
    openai = sdk()
    return (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        openai.ConflictError,
        # Dropped, reset or cut-short replies all surface as APIConnectionError; a refused
        # connection does too and is told apart in `_give_up`.
        openai.APIConnectionError,
        openai.APIResponseValidationError,
        # The SDK json.loads a 200 body whose type is JSON and lets the error through bare.
        json.JSONDecodeError,
        _NotAReply,
        Silent,  # a stream given up on for its silence (closed: the server stopped)
        BrokenReply,
    )


@dataclass
class FirstTokenWait:
    """How long one call has waited for a first token, over its attempts, and the most it
    may: as long as its most patient attempt would (the first-token limit our own calls
    explain for its first attempt, which grows with our calls queued ahead, times the most
    patience: `concurrency.patient`). Each attempt waits at most what is left of it."""

    ceiling: float | None = None  # set by the first attempt
    waited: float = 0.0  # the limits of the attempts that got no first token
    attempts: int = 0

    def limit(self, limit: float, explained: Callable[[], float]) -> float:
        """The attempt's first-token `limit`, no longer than what is left."""
        if self.ceiling is None:
            self.ceiling = concurrency.patient(explained(), concurrency.PATIENCE_STEPS)
        return min(limit, max(0.0, self.ceiling - self.waited))

    def unanswered(self, limit: float) -> None:
        """An attempt with this `limit` got no first token."""
        self.waited += limit
        self.attempts += 1

    @property
    def spent(self) -> bool:
        return self.ceiling is not None and self.waited >= self.ceiling * (1 - 1e-9)


class LLMClient:
    """The `LLM` of gam_desktop.engine.llm.protocol, over an OpenAI-compatible server."""

    def __init__(self, settings: LLMSettings, usage: UsageMeter | None = None) -> None:
        self.settings = settings
        self.usage = usage or UsageMeter()
        self._client: Any = None
        # made now: the key is known to the logs (redact.known) before any call
        self._redacting = (settings, Redactor.for_settings(settings))

    @property
    def redactor(self) -> Redactor:
        """What takes the key this client sends out of its replies and errors."""
        if self._redacting[0] is not self.settings:
            self._redacting = (self.settings, Redactor.for_settings(self.settings))
        return self._redacting[1]

    @property
    def _openai(self) -> Any:
        if self._client is None:
            self._client = self.settings.openai_client(max_retries=0)  # retries are ours
        return self._client

    @property
    def caps(self) -> capabilities.Capabilities:
        return capabilities.capabilities_for(self.settings.base_url, self.settings.model)

    @property
    def limiter(self) -> concurrency.Limiter:
        """The calls in flight to this server and model, shared by the whole process."""
        return concurrency.limiter_for(self.settings)

    # -- raw calls -------------------------------------------------------------------

    def complete(
        self, messages: Messages, *, stage: str, cancel: CancelToken | None = None, **extra: Any
    ) -> Any:
        """One chat completion with retries. Whatever fails ends in an LLMError whose words
        hold no key, never in the SDK's own errors: a request the server refuses (HTTP
        400/422) in LLMRejected, which a caller with another way to ask may catch."""
        openai = sdk()
        cancel = cancel or CancelToken()
        kwargs = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature,
            **extra,
            "max_tokens": min(self.settings.max_tokens, extra.get("max_tokens") or 10**9),
            "extra_headers": {**(extra.get("extra_headers") or {}), STAGE_HEADER: stage},
        }
        patience = 0  # an attempt after one that got no first token waits longer
        waiting = FirstTokenWait()  # ... but all of them together no longer than this
        for attempt in range(self.settings.max_retries + 1):
            cancel.raise_if_cancelled()
            redactor = self.redactor
            try:
                try:
                    response = self._call(kwargs, cancel, patience, waiting)
                except Exception as exc:
                    # an error quoting a server that echoes the key must not carry it
                    # into a message, a log or a traceback
                    redact_error(exc, redactor)
                    raise
                # a server echoing the key must not get it into an answer or a file
                redact_reply(response, redactor)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise LLMAuthError(
                    f"{self.settings.base_url} refused the API key (HTTP {exc.status_code})"
                    f"{shown_words(exc, redactor)}"
                ) from exc
            except openai.NotFoundError as exc:
                # The model went away: what was learned of it may no longer hold either.
                capabilities.forget(self.settings.base_url, self.settings.model)
                raise LLMCallFailed(
                    f"{self.settings.base_url} has no model '{self.settings.model}' (HTTP 404)"
                ) from exc
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                raise LLMRejected(
                    f"the LLM server at {self.settings.base_url} rejected the request "
                    f"(HTTP {exc.status_code}): {server_reason(exc)}"
                ) from exc
            except _retryable() as exc:
                if isinstance(exc, NoFirstToken):
                    patience = exc.patience + 1
                self._wait_before_retry(exc, attempt, cancel, waiting)
            except openai.APIStatusError as exc:  # 402, 405, 413 …: asking again won't help
                raise LLMCallFailed(
                    f"the LLM server at {self.settings.base_url} refused the request "
                    f"(HTTP {exc.status_code}): {server_reason(exc)}"
                ) from exc
            else:
                self._record_usage(stage, messages, response)
                return response
        raise AssertionError("unreachable")  # _wait_before_retry raises on the last attempt

    def _call(
        self,
        kwargs: dict[str, Any],
        cancel: CancelToken,
        patience: int = 0,
        waiting: FirstTokenWait | None = None,
    ) -> Any:
        """One request, holding a place among the calls in flight; what it took (or that it
        was refused with a 429, or timed out) teaches the limiter. `patience`: the steps of
        patience for its first token at least (one more than an earlier attempt's that got
        none); `waiting`: what the call's earlier attempts waited for one, which bounds
        this attempt's wait."""
        openai = sdk()
        limiter = self.limiter
        permit = limiter.acquire(self.settings.workers, cancel, patience)
        timeout = self.settings.timeout
        limit = limiter.first_token_limit(permit, timeout)
        if waiting is not None:
            limit = waiting.limit(limit, lambda: limiter.explained(permit, timeout))
        try:
            response, first_token = self._ask(kwargs, limit, permit.sent)
        except openai.RateLimitError as exc:
            limiter.backed_off(permit, _requests_per_minute(exc))
            raise
        except NoFirstToken as exc:
            if waiting is not None:
                waiting.unanswered(limit)
            exc.patience = permit.patience
            limiter.unanswered(permit)  # more patience for the calls that follow, too
            raise
        except Silent:
            limiter.backed_off(permit)
            raise
        except BaseException:
            limiter.failed(permit)
            raise
        limiter.done(permit, first_token, self.settings.timeout)
        return response

    def _ask(self, kwargs: dict[str, Any], limit: float, sent: float) -> tuple[Any, float | None]:
        """The reply, streamed where the server accepts it; a server that rejects
        `stream_options` (or `stream`) is asked again without, and remembered so."""
        openai = sdk()
        while True:
            stream = self.caps.usable("stream")
            usage = stream and self.caps.usable("stream_usage")
            try:
                return self._send(kwargs, stream, usage, limit, sent)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if not stream or "stream" not in str(exc).lower():
                    raise  # about something else (response_format, tools): the caller's
                refused = "stream_usage" if usage else "stream"
                log.info("the server rejected %s; asking without it", refused)
                capabilities.mark(self.settings.base_url, self.settings.model, refused, False)

    def _send(
        self,
        kwargs: dict[str, Any],
        stream: bool,
        usage: bool,
        limit: float,
        sent: float,
    ) -> tuple[Any, float | None]:
        openai = sdk()
        if not stream:
            return self._send_whole(kwargs, limit, sent), None
        extra: dict[str, Any] = {"stream": True}
        if usage:
            extra["stream_options"] = {"include_usage": True}
        try:
            # The read timeout covers the wait for the first byte: `limit` has room for the
            # calls queued ahead of this one.
            reply = self._openai.chat.completions.create(**kwargs, **extra, timeout=limit)
        except openai.APITimeoutError as exc:  # not even the reply's headers in time
            raise NoFirstToken(f"no reply within {round(limit, 1):g} s") from exc
        try:
            # (a read that times out ends in Silent there: before the first token or after)
            completion, first_token = read_stream(
                reply,
                completion_type=openai.types.chat.ChatCompletion,
                sent=sent,
                first_token_limit=limit,
                silence=self.settings.timeout,
                max_tokens=kwargs.get("max_tokens"),  # read no further than it could make
            )
        except importlib.import_module("httpx2").TransportError as exc:
            # A whole body read in place of a stream (the server ignored `stream`) fails
            # with httpx's own errors: the same transient faults as any reply's.
            raise _as_sdk_error(exc, reply.response.request, limit) from exc
        return _checked(completion), first_token

    def _send_whole(self, kwargs: dict[str, Any], limit: float, sent: float) -> Any:
        """A call not streamed. Its body is read here, as it comes, not by the SDK (which
        reads it whole, however long, before it hands anything over): within the bounds of
        a streamed reply (`streaming.whole_reply`: no longer than `max_tokens` allows, and
        whole within `limit` of `sent`, the time a first token has)."""
        openai = sdk()
        try:
            raw = self._openai.chat.completions.with_streaming_response
            with raw.create(**kwargs, timeout=limit) as reply:
                response = reply.http_response
                try:
                    completion = whole_reply(
                        response,
                        completion_type=openai.types.chat.ChatCompletion,
                        sent=sent,
                        limit=limit,
                        max_tokens=kwargs.get("max_tokens"),
                    )
                except importlib.import_module("httpx2").RequestError as exc:
                    # (the SDK's reading would have made these an APIConnectionError)
                    raise _as_sdk_error(exc, response.request, limit) from exc
        except openai.APITimeoutError as exc:  # not even the reply's headers in time
            raise NoFirstToken(f"no reply within {round(limit, 1):g} s") from exc
        return _checked(completion)

    def _wait_before_retry(
        self,
        exc: Exception,
        attempt: int,
        cancel: CancelToken,
        waiting: FirstTokenWait | None = None,
    ) -> None:
        if isinstance(exc, NoFirstToken) and waiting is not None and waiting.spent:
            raise self._no_first_token(waiting) from exc
        error = self._give_up(exc, attempt)
        if error is not None:
            raise error from exc
        delay = _retry_after(exc)
        if delay is None:
            delay = min(self.settings.backoff_max, self.settings.backoff_base * 2**attempt)
            delay *= 0.5 + random.random() / 2  # jitter spreads parallel workers apart
        patience = " with more patience" if isinstance(exc, NoFirstToken) else ""
        log.info("LLM call failed (%s); retrying in %.2fs%s", _describe(exc), delay, patience)
        cancel.sleep(delay)

    def _give_up(self, exc: Exception, attempt: int) -> Exception | None:
        """The error to raise instead of retrying, or None to retry.

        Refused on the first attempt: nothing listens there, and a build should stop at
        once rather than fall back for every chunk. Refused on a later attempt: the first
        one did connect, so the server may be restarting: retry; if it still refuses at
        the end it has gone away, which again stops the operation."""
        url = self.settings.base_url
        refused = _refused(exc)
        if refused is not None and attempt == 0:
            return LLMUnreachable(f"cannot reach the LLM server at {url}: {refused}")
        if attempt < self.settings.max_retries:
            return None
        if refused is not None:
            return LLMUnreachable(
                f"cannot reach the LLM server at {url}: {refused} after "
                f"{plural(attempt + 1, 'attempt')}"
            )
        problem = _describe(exc, self.settings.timeout)
        if isinstance(exc, sdk().RateLimitError):  # which limit, or that the quota is spent
            problem += shown_words(exc, self.redactor)
        return LLMCallFailed(
            f"the LLM server at {url} kept failing after {plural(attempt + 1, 'attempt')}: "
            f"{problem}"
        )

    def _no_first_token(self, waiting: FirstTokenWait) -> LLMNoReply:
        """The call waited as long as its most patient attempt would, over all its
        attempts, and no token came (the server kept it open without a word, as an endless
        stream of keep-alive comments does, or queued it behind more work than that): the
        operation stops, as for a server that cannot be reached, rather than wait as long
        again for each of its calls."""
        return LLMNoReply(
            f"the LLM server at {self.settings.base_url} sent no reply in "
            f"{round(waiting.waited, 1):g} s over {plural(waiting.attempts, 'attempt')} (it "
            "kept the call open without a single token): it may be stuck, or busy with other "
            f"programs' work. Try again later, or raise the timeout ({self.settings.timeout:g} "
            "s) if the server is only slow"
        )

    def _record_usage(self, stage: str, messages: Messages, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            self.usage.record(stage, usage.prompt_tokens, usage.completion_tokens or 0)
            return
        # Some servers omit usage; estimate so the per-operation figures stay honest.
        prompt = sum(count_tokens(str(m.get("content") or "")) for m in messages)
        self.usage.record(stage, prompt, count_tokens(response_text(response)))

    def text(
        self,
        messages: Messages,
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> str:
        limit = {"max_tokens": max_tokens} if max_tokens else {}
        return response_text(self.complete(messages, stage=stage, cancel=cancel, **limit))

    # -- structured output -----------------------------------------------------------

    def structured(
        self,
        messages: Messages,
        model_cls: type[T],
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> T:
        """A validated `model_cls` from the model, with one re-ask on invalid output.

        `max_tokens` caps this reply: small local models sometimes loop, and a stage
        knows how long its answer can sensibly be."""
        schema = model_cls.model_json_schema()
        limit = {"max_tokens": max_tokens} if max_tokens else {}
        mode, reply = self._structured_call(
            messages, schema, model_cls.__name__, stage, cancel, limit
        )
        try:
            return parse_model(reply, model_cls)
        except ParseProblem as problem:
            first_problem = problem
        retry = [
            *messages,
            {"role": "assistant", "content": reply},
            {
                "role": "user",
                "content": f"That reply was invalid: {first_problem}. "
                "Reply again with corrected JSON only.",
            },
        ]
        request = self._structured_kwargs(mode, retry, schema, model_cls.__name__)
        reply = response_text(
            self.complete(request.pop("messages"), stage=stage, cancel=cancel, **request, **limit)
        )
        try:
            return parse_model(reply, model_cls)
        except ParseProblem as problem:
            if mode != capabilities.STRUCTURED_MODES[0] and capabilities.degraded(
                self.settings.base_url, self.settings.model
            ):  # down the ladder on an earlier run's word: perhaps the server can do better now
                capabilities.forget(self.settings.base_url, self.settings.model)
            raise StructuredOutputError(f"invalid reply after a re-ask: {problem}") from problem

    def _structured_call(
        self,
        messages: Messages,
        schema: dict[str, Any],
        name: str,
        stage: str,
        cancel: CancelToken | None,
        limit: dict[str, int],
    ) -> tuple[str, str]:
        for mode in capabilities.STRUCTURED_MODES:
            if mode != "prompt" and not self.caps.usable(mode):
                continue
            request = self._structured_kwargs(mode, messages, schema, name)
            try:
                response = self.complete(
                    request.pop("messages"), stage=stage, cancel=cancel, **request, **limit
                )
            except LLMRejected:
                if mode == "prompt":
                    raise
                log.info("server rejected response_format %s; trying the next way", mode)
                capabilities.mark(self.settings.base_url, self.settings.model, mode, False)
                continue
            if mode != "prompt":
                capabilities.mark(self.settings.base_url, self.settings.model, mode, True)
            return mode, response_text(response)
        raise AssertionError("the prompt mode always returns or raises")

    @staticmethod
    def _structured_kwargs(
        mode: str, messages: Messages, schema: dict[str, Any], name: str
    ) -> dict[str, Any]:
        if mode == "json_schema":
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False},
            }
            return {"messages": messages, "response_format": fmt}
        # json_object needs the word "JSON" in the prompt; the schema text gives it, and
        # tells models without constrained decoding what shape to produce.
        hinted = _append_to_system(messages, schema_instruction(schema))
        if mode == "json_object":
            return {"messages": hinted, "response_format": {"type": "json_object"}}
        return {"messages": hinted}

    # -- parallelism -----------------------------------------------------------------

    def parallel_map(
        self,
        fn: Callable[[Any], R],
        items: Iterable[Any],
        *,
        cancel: CancelToken | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> list[R]:
        """fn over items, as many at a time as the server's limiter allows (it changes as
        the limit is learned), in order; stops early on error or cancel."""
        items = list(items)
        if not items:
            return []
        cancel = cancel or CancelToken()
        results: list[Any] = [None] * len(items)
        pool = ThreadPoolExecutor(
            max_workers=min(len(items), MAX_LIMIT), thread_name_prefix="gam-llm"
        )
        finished_cleanly = False
        try:
            self._run_all(pool, fn, items, results, cancel, on_done)
            finished_cleanly = True
        finally:
            # On cancel or error, do not wait for calls already in flight: they finish in the
            # background (what a memorize call returns is kept: ingest/resume.py).
            pool.shutdown(wait=finished_cleanly, cancel_futures=True)
        return results

    def _run_all(
        self,
        pool: ThreadPoolExecutor,
        fn: Callable[[Any], Any],
        items: list[Any],
        results: list[Any],
        cancel: CancelToken,
        on_done: Callable[[int], None] | None,
    ) -> None:
        limiter, fixed = self.limiter, self.settings.workers
        running: dict[Future[Any], int] = {}
        waiting = iter(range(len(items)))
        finished = 0
        while True:
            # Started only as places free up: items beyond the limit would only wait in
            # threads of their own for a permit.
            while len(running) < limiter.allowed(fixed):
                index = next(waiting, None)
                if index is None:
                    break
                running[pool.submit(fn, items[index])] = index
            if not running:
                return
            done, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                results[running.pop(future)] = future.result()  # raises the item's error
                finished += 1
                if on_done:
                    on_done(finished)
            cancel.raise_if_cancelled()


def _checked(response: Any) -> Any:
    """`response` if it is a chat completion with choices; else a transient error."""
    if isinstance(response, str):
        raise _NotAReply(f"the reply was not JSON: {' '.join(response.split())[:60]!r}")
    if not getattr(response, "choices", None):
        raise _NotAReply("the reply was JSON but no chat completion (it held no choices)")
    return response


def response_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    return choices[0].message.content or ""


def _append_to_system(messages: Messages, text: str) -> Messages:
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{text}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    if headers.get("retry-after-ms"):
        try:
            return min(120.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return min(120.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unreadable: fall back to our own backoff
    return max(0.0, min(120.0, parsed.timestamp() - time.time()))


def _as_sdk_error(exc: Exception, request: Any, limit: float) -> Exception:
    if type(exc).__name__.endswith("Timeout"):  # a whole reply read, which did not come
        return NoFirstToken(f"no reply within {round(limit, 1):g} s")
    error: Exception = sdk().APIConnectionError(request=request)
    return error


def _requests_per_minute(exc: Exception) -> float | None:
    """The rate limit a 429 names (OpenAI's `x-ratelimit-limit-requests`), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    try:
        value = float(headers.get("x-ratelimit-limit-requests") or "")
    except ValueError:
        return None
    return value if value > 0 else None


def _causes(exc: BaseException) -> list[BaseException]:
    """exc and what it wraps (the SDK wraps httpx, which wraps httpcore, h11, OSError)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _refused(exc: Exception) -> str | None:
    """Why no connection could be opened (refused, unknown host, no route, an address
    without http://), or None if one was.

    httpx names these ConnectError and UnsupportedProtocol, and the SDK wraps them as
    APIConnectionError; matched by name because the SDK may run on httpx or httpx2."""
    if not isinstance(exc, sdk().APIConnectionError) or isinstance(exc, sdk().APITimeoutError):
        return None
    chain = _causes(exc)
    if not any(type(e).__name__ in ("ConnectError", "UnsupportedProtocol") for e in chain):
        return None
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    return str(chain[-1]) or "no connection"


def _connection_problem(chain: list[BaseException]) -> str:
    # httpx raises RemoteProtocolError for both a close before any reply and a body shorter
    # than its Content-Length; only h11's message tells them apart.
    text = " ".join(str(e) for e in chain).lower()
    if "complete message body" in text:
        return "the reply was cut short (fewer bytes than its Content-Length)"
    if "without sending a response" in text:
        return "the connection was dropped before a reply"
    if any(isinstance(e, ConnectionResetError) for e in chain) or "reset" in text:
        return "the connection was dropped (reset by the server)"
    if any(type(e).__name__ == "RemoteProtocolError" for e in chain):
        return f"the reply was not valid HTTP ({chain[-1]})"
    return f"the connection failed ({chain[-1]})"


def _describe(exc: Exception, timeout: float | None = None) -> str:
    """One readable line: what went wrong with a call."""
    openai = sdk()
    if isinstance(exc, json.JSONDecodeError):
        return f"the reply was not JSON ({exc.msg}: line {exc.lineno} column {exc.colno})"
    if isinstance(exc, _NotAReply | Silent | BrokenReply):
        return str(exc)
    if isinstance(exc, openai.APITimeoutError):
        return f"no reply within {timeout:g} s" if timeout else "no reply before the timeout"
    if isinstance(exc, openai.APIConnectionError):
        return _connection_problem(_causes(exc))
    if isinstance(exc, openai.APIResponseValidationError):
        return "the reply was not a valid chat completion"
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    return f"{kind} (HTTP {status})" if status else kind
