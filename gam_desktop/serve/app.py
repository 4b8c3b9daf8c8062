"""The OpenAI-compatible memory endpoint: `/v1/chat/completions` (streaming or not),
`/v1/models`, `/health`.

A request is answered in three steps: the read path finds the memory's passages (on a
worker thread: BM25 is CPU work), the request goes to the configured LLM with them, and
the reply comes back as the LLM gave it plus the files it was given (`x-gam-sources`, and
a `gam` field in a JSON reply). The turn is then handed to the write path's thread; the
reply never waits for a commit.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from gam_desktop.engine.api import (
    Changes,
    EmbeddingSettings,
    LLMSettings,
    MemoryFolder,
    ProgressEvent,
    Workflow,
    needs_recovery,
)
from gam_desktop.serve import retrieval
from gam_desktop.serve.auth import MAX_BODY, Guard
from gam_desktop.serve.errors import HANDLERS, ServeError
from gam_desktop.serve.index import FreshIndex
from gam_desktop.serve.learning import PendingTurn, TurnWriter
from gam_desktop.serve.retrieval import Passage, ReadOptions
from gam_desktop.serve.turnqueue import TurnQueue
from gam_desktop.serve.upstream import Upstream

SOURCES_HEADER = "x-gam-sources"
CONVERSATION_HEADER = "x-gam-conversation"
# Arrays and objects inside one another, at most: a chat request (tools' schemas included)
# needs a few dozen; far deeper is an attack on the parser (and on whatever walks it after).
MAX_NESTING = 100


@dataclass
class ServeConfig:
    gam_dir: Path
    settings: LLMSettings  # the upstream LLM (the chat role's settings)
    token: str
    model_map: dict[str, str] = field(default_factory=dict)  # client name -> upstream model
    max_body: int = MAX_BODY
    loopback_only: bool = True
    read: ReadOptions = field(default_factory=ReadOptions)
    learn: bool = True  # save turns and learn facts (the memory's own switches still apply)
    lock_timeout: float = 3600.0  # a turn waits this long for another writer to finish
    # hears what each saved turn and lesson changed, on the writer's thread (the app's views)
    on_change: Callable[[Changes], None] | None = None
    # search by meaning (the app's Settings, or the environment); None: BM25 alone
    embeddings: EmbeddingSettings | None = None


class MemoryEndpoint:
    """What the routes share: the search index, the upstream, the writer thread."""

    def __init__(self, config: ServeConfig, on_served: Callable[[str], None] | None = None):
        self.config = config
        self.index = FreshIndex(config.gam_dir, embeddings=config.embeddings)
        model_map = {"gam": config.settings.model, **config.model_map}
        # no reply passes on the upstream key or this server's own token
        self.upstream = Upstream(config.settings, model_map, secrets=(config.token,))
        workflow = Workflow(  # the writer's own: saving and learning need no search tools
            gam_dir=config.gam_dir,
            settings=config.settings,
            embeddings=config.embeddings,
            lock_timeout=config.lock_timeout,
            progress=self._progress,
            on_change=self._changed,
        )
        self.writer = TurnWriter(workflow, disk=TurnQueue(config.gam_dir))
        self.on_served = on_served
        self.served = 0

    def _changed(self, changes: Changes) -> None:
        self.index.changed()
        if self.config.on_change is not None:
            self.config.on_change(changes)

    def _progress(self, event: ProgressEvent) -> None:
        if event.stage == "lock":  # another app or CLI is writing: the turns wait their turn
            self.writer.waited.set()

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(self.index.start)
        await anyio.to_thread.run_sync(self.writer.start)  # replays what a kill left
        try:
            yield
        finally:
            await self.upstream.close()
            await anyio.to_thread.run_sync(self.writer.stop)  # the queue is written first
            await anyio.to_thread.run_sync(self.index.stop)

    # -- routes --------------------------------------------------------------------------

    async def health(self, _request: Request) -> Response:
        folder = MemoryFolder(self.config.gam_dir)
        status = "ok" if folder.is_memory() else "not a memory"
        if await anyio.to_thread.run_sync(needs_recovery, folder):
            # a crash left an operation half-done: every turn fails until it is recovered
            status = "needs recovery"
        return JSONResponse(
            {
                "status": status,
                "pending_turns": self.writer.pending(),
                "failed_turns": len(self.writer.stats.failed),
            }
        )

    async def models(self, _request: Request) -> Response:
        created = int(time.time())
        names = dict.fromkeys(["gam", *self.config.model_map])
        data = [{"id": n, "object": "model", "created": created, "owned_by": "gam"} for n in names]
        return JSONResponse({"object": "list", "data": data})

    async def chat_completions(self, request: Request) -> Response:
        body = await _json_body(request)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ServeError(400, "'messages' must be a non-empty list of messages.")
        if not all(isinstance(m, dict) for m in messages):  # ["hi"] was a 500
            raise ServeError(400, "Each of 'messages' must be an object with a role.")
        if not isinstance(body.get("model"), str | None):  # ["a"] was a 500 (unhashable)
            raise ServeError(400, "'model' must be a string: the name of a model.")
        query = retrieval.query_of(messages)
        found = await anyio.to_thread.run_sync(self._read, query)
        forward = {
            **body,
            "model": self.upstream.model_for(body.get("model")),
            "messages": retrieval.inject(messages, found),
        }
        headers = {SOURCES_HEADER: _sources_header(found)}
        pending = self._pending(messages, query, found, request)
        if body.get("stream"):
            chunks = await self.upstream.stream(forward, lambda text: self._answered(pending, text))
            return StreamingResponse(chunks, media_type="text/event-stream", headers=headers)
        forwarded = await self.upstream.complete(forward)
        self._answered(pending, forwarded.text)
        reply = {**forwarded.body, "gam": {"sources": [_source(p) for p in found]}}
        return JSONResponse(reply, headers=headers)

    def _read(self, query: str) -> list[Passage]:
        return retrieval.passages(self.index.current, query, self.config.read, refresh=False)

    def _pending(
        self, messages: list[dict[str, Any]], query: str, found: list[Passage], request: Request
    ) -> PendingTurn | None:
        """The turn to write once answered: None when learning is off or the last message
        is not the user's (a tool result going back to the model)."""
        if not self.config.learn or messages[-1].get("role") != "user" or not query.strip():
            return None
        return PendingTurn(
            history=messages[:-1],
            question=query,
            answer="",
            sources=[p.path for p in found],
            conversation_id=request.headers.get(CONVERSATION_HEADER) or None,
        )

    def _answered(self, pending: PendingTurn | None, text: str) -> None:
        """The LLM has answered: the turn goes to the writer thread (queued before the
        client has the end of the reply, written after; never an empty answer)."""
        self.served += 1
        if self.on_served is not None:
            self.on_served(pending.question if pending else "")
        if pending is None or not text.strip():
            return
        pending.answer = text
        self.writer.submit(pending)


async def _json_body(request: Request) -> dict[str, Any]:
    data = await request.body()
    too_deep = ServeError(
        400,
        "The request body is nested too deeply "
        f"(more than {MAX_NESTING} levels of arrays and objects).",
    )
    try:
        body = json.loads(data, parse_constant=_not_a_number, parse_float=_finite)
    except RecursionError:  # `[` x 200,000: the parser gives up before Python's stack does
        raise too_deep from None
    except ValueError as exc:
        raise ServeError(400, f"The request body is not valid JSON: {exc}.") from None
    if not isinstance(body, dict):
        raise ServeError(400, "The request body must be a JSON object.")
    # Parsed is not enough: what was parsed is written out again (forwarded, queued with the
    # turn), deeper in the stack or on another thread, and no chat request is nested this
    # deep. Fewer brackets than the limit cannot nest deeper (a cheap first look).
    if data.count(b"[") + data.count(b"{") > MAX_NESTING and _nesting(body) > MAX_NESTING:
        raise too_deep
    return body


def _not_a_number(name: str) -> Any:
    """NaN, Infinity, -Infinity: Python's json reads them, JSON has no such thing (and
    nothing could forward them)."""
    raise ServeError(400, f"The request body is not valid JSON: {name} is not a JSON number.")


def _finite(text: str) -> float:
    """A JSON number with a fraction or an exponent; one too large for a float (1e999)
    would be read as infinity."""
    number = float(text)
    if not math.isfinite(number):
        raise ServeError(400, f"The request body holds a number too large: {text[:40]}.")
    return number


def _nesting(value: Any) -> int:
    """How many arrays and objects deep `value` goes (a loop: it may go deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:  # enough to refuse it
            return deepest
        items = node.values() if isinstance(node, dict) else node
        stack.extend((item, depth + 1) for item in items if isinstance(item, dict | list))
    return deepest


def _source(passage: Passage) -> dict[str, Any]:
    return {"path": passage.path, "label": passage.label, "score": passage.score}


def _sources_header(found: list[Passage]) -> str:
    """The files, comma-separated and percent-encoded (a header is Latin-1; a path need
    not be)."""
    return ",".join(quote(p.path, safe="/._-~ ") for p in found)


def create_app(
    config: ServeConfig, on_served: Callable[[str], None] | None = None
) -> tuple[Guard, MemoryEndpoint]:
    """The ASGI application (the routes behind the token, size and host checks) and the
    endpoint it serves (its writer thread, its counters)."""
    endpoint = MemoryEndpoint(config, on_served)
    app = Starlette(
        routes=[
            Route("/health", endpoint.health, methods=["GET"]),
            Route("/v1/models", endpoint.models, methods=["GET"]),
            Route("/v1/chat/completions", endpoint.chat_completions, methods=["POST"]),
        ],
        exception_handlers=HANDLERS,  # type: ignore[arg-type]
        lifespan=endpoint.lifespan,
    )
    guard = Guard(app, config.token, max_body=config.max_body, loopback_only=config.loopback_only)
    return guard, endpoint
