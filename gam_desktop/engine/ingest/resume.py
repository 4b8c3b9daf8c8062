"""Nothing paid twice: the build stages' LLM results, kept as they arrive, and the record
of an add that has not finished.

A result (a chunk's memory, a passage's split points, a batch of folder descriptions) is
kept under the sha256 of what determines it: the stage, its prompt's version
(`prompts.PROMPT_VERSIONS`), the model and the whole request (the chunk's text and its
document's context are in it). Running the same add again after a cancel, a crash or a
failure finds them and makes no call for them; another model, or a changed prompt, finds
nothing and pays again. The taxonomy plan and placements are not kept: they depend on the
whole batch and on the tree at that moment.

Results are dropped as soon as their documents are in the memory (after each committed
step): the memory then skips those documents, so the results could never be used again.
What an abandoned add leaves is dropped after `store.results.MAX_AGE_DAYS`, or sooner past
the size cap.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gam_desktop.engine.ingest.chunking import Chunk
from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.ingest.prompts import PROMPT_VERSIONS
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.llm.protocol import Messages
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.results import ResultStore

T = TypeVar("T", bound=BaseModel)
PENDING = "pending_add"  # the state entry of the add that has not finished
SECONDS = "call_seconds"  # model -> measured seconds per memorize call, for estimates


class StageResults:
    """The kept results of one add, for its stages; `reused` counts the calls saved by
    results an earlier run kept (a passage repeated in this run, summarized once, is not
    one: "91 earlier LLM results reused" on a first build misled). With no store
    (`NO_RESULTS`), every call is made and nothing is kept."""

    def __init__(self, store: ResultStore | None, model: str) -> None:
        self.store = store
        self.model = model
        self.reused = 0
        self._made: set[str] = set()  # the keys of the results this run paid for
        self._lock = threading.Lock()
        self._seconds: list[float] = []
        self._calls = 0  # calls in flight: a cancel does not wait for them, and their
        self._closing = False  # results, paid for, are still kept when they arrive

    def key(self, stage: str, messages: Messages, schema: type[BaseModel]) -> str:
        what = [stage, PROMPT_VERSIONS[stage], self.model, schema.__name__, messages]
        data = json.dumps(what, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(data.encode("utf-8")).hexdigest()

    def kept(self, keys: Sequence[str]) -> set[str]:
        return self.store.present(keys) if self.store is not None else set()

    def structured(
        self,
        llm: LLM,
        messages: Messages,
        schema: type[T],
        *,
        stage: str,
        document: str = "",
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> T:
        """`llm.structured(...)`, or the result kept for the same request; a new result is
        kept before this returns. A failed call keeps nothing (it is tried again)."""
        if self.store is None:
            return llm.structured(
                messages, schema, stage=stage, cancel=cancel, max_tokens=max_tokens
            )
        key = self.key(stage, messages, schema)
        kept = self.store.get(key)
        if kept is not None:
            try:
                value = schema.model_validate_json(kept)
            except ValidationError:
                pass  # kept by another version of the schema: ask again
            else:
                with self._lock:
                    self.reused += key not in self._made
                return value
        with self._lock:
            self._calls += 1
        try:
            started = time.monotonic()
            value = llm.structured(
                messages, schema, stage=stage, cancel=cancel, max_tokens=max_tokens
            )
            if stage == "memorize":
                self._seconds.append(time.monotonic() - started)
            with self._lock:  # before it is kept: a thread finding it then did not reuse
                self._made.add(key)
            self.store.put(key, stage, document, self.model, value.model_dump_json())
        finally:
            with self._lock:
                self._calls -= 1
                last = self._closing and self._calls == 0
            if last:
                self.store.close()
        return value

    # -- the add these results are for -----------------------------------------------------

    def begin(self, docs: Sequence[SourceDocument]) -> None:
        if self.store is not None:
            begin(self.store, docs, self.model)

    def record_chunks(self, chunks: Sequence[Chunk]) -> None:
        if self.store is not None:
            record_chunks(self.store, chunks)

    def finish(self) -> None:
        """The add is done: its split points go, and it is no longer unfinished."""
        if self.store is not None:
            self.store.forget_stage("split")
            finish(self.store)

    def forget_pending(self) -> None:
        if self.store is not None:
            finish(self.store)

    def cancelled(self) -> None:
        """The person stopped the add (`mark_cancelled`)."""
        if self.store is not None:
            mark_cancelled(self.store)

    def forget_documents(self, docs: Sequence[SourceDocument]) -> None:
        """`docs` are in the memory now: their results, and the descriptions (made for a
        tree that has changed since), are no longer needed."""
        if self.store is not None:
            self.store.forget_documents(d.content_hash for d in docs)
            self.store.forget_stage("describe")

    def close(self) -> None:
        """Remember how long a memorize call took (for the next estimate), then close the
        store, or let the last call still in flight close it once its result is kept."""
        if self.store is None:
            return
        if self._seconds:
            seconds = dict(self.store.state(SECONDS) or {})
            timed = list(self._seconds)
            seconds[self.model] = round(sum(timed) / len(timed), 3)
            self.store.set_state(SECONDS, seconds)
        with self._lock:
            self._closing = True
            idle = self._calls == 0
        if idle:
            self.store.close()


NO_RESULTS = StageResults(None, "")


# -- the add that has not finished ------------------------------------------------------


@dataclass
class PendingAdd:
    """An add that began and has not finished (cancelled, crashed, failed): its files, its
    documents (content hash -> name, chunks once known), and how far it got for `model`."""

    files: list[str]
    documents: dict[str, dict[str, Any]]
    model: str
    started: str
    summarized: int = 0  # documents in the memory or with every chunk's memory kept
    added: int = 0  # of them, documents in the memory already
    ready: set[str] = field(default_factory=set)  # not in it yet, every memory kept
    pid: int = 0  # the process that ran it last
    cancelled: bool = False  # the person stopped it (not a crash or a failure)
    parts: int = 0  # the chunks of the documents not in the memory yet (once they were cut)
    parts_kept: int = 0  # ...of which this many have their memory kept

    @property
    def hashes(self) -> set[str]:
        return set(self.documents)

    @property
    def running(self) -> bool:
        """Whether another process on this computer is still running it (a `gam-add` in a
        terminal): then it is not interrupted, and not to be resumed."""
        return bool(self.pid) and self.pid != os.getpid() and _alive(self.pid)

    @property
    def total(self) -> int:
        return len(self.documents)

    def summary(self) -> str:
        return f"{self.summarized} of {self.total} documents already summarized"


def begin(store: ResultStore, docs: Sequence[SourceDocument], model: str) -> None:
    """Record the add about to run. The same add run again (documents in common with the
    one recorded) continues its record, so that "312 of 500" still counts the documents
    its earlier steps added; any other add replaces it (the latest is resumable)."""
    record = store.state(PENDING)
    documents = {d.content_hash: {"name": d.name, "chunks": None} for d in docs}
    files = [d.path for d in docs if d.path]
    if isinstance(record, dict) and set(record.get("documents") or {}) & set(documents):
        documents = {**record["documents"], **documents}
        files = list(dict.fromkeys([*record.get("files", []), *files]))
        started = str(record.get("started") or utc_now().isoformat())
    else:
        started = utc_now().isoformat()
    store.set_state(
        PENDING,
        {
            "files": files,
            "documents": documents,
            "model": model,
            "started": started,
            "pid": os.getpid(),
        },
    )


def record_chunks(store: ResultStore, chunks: Sequence[Chunk]) -> None:
    """How many chunks each document has: a document is summarized once every one of them
    has its memory kept."""
    record = store.state(PENDING)
    if not isinstance(record, dict):
        return
    counts: dict[str, int] = {}
    for chunk in chunks:
        counts[chunk.source.content_hash] = counts.get(chunk.source.content_hash, 0) + 1
    for doc_hash, entry in record.get("documents", {}).items():
        if doc_hash in counts:  # a document an earlier run added keeps its count
            entry["chunks"] = counts[doc_hash]
    store.set_state(PENDING, record)


def finish(store: ResultStore) -> None:
    store.set_state(PENDING, None)


def mark_cancelled(store: ResultStore) -> None:
    """The person stopped the add: it is not offered at the next start as a crash's is
    (they know; the same files added again still resume it). Running it again clears the
    mark (`begin` writes a new record)."""
    record = store.state(PENDING)
    if isinstance(record, dict):
        record["cancelled"] = True
        store.set_state(PENDING, record)


def pending(folder: MemoryFolder, model: str) -> PendingAdd | None:
    """The add recorded as unfinished in this memory, with how far it got for `model` (a
    result of another model counts for nothing); None when there is none. Reads only."""
    store = ResultStore.of(folder, create=False)
    if store is None:
        return None
    try:
        record = store.state(PENDING)
        kept = store.counts("memorize", model) if isinstance(record, dict) else {}
    finally:
        store.close()
    if not isinstance(record, dict) or not record.get("documents"):
        return None
    documents: dict[str, dict[str, Any]] = dict(record["documents"])
    known = folder.known_sources()
    added = sum(1 for h in documents if h in known)
    ready = {
        h
        for h, entry in documents.items()
        if h not in known and entry.get("chunks") and kept.get(h, 0) >= int(entry["chunks"])
    }
    waiting = {h: int(e.get("chunks") or 0) for h, e in documents.items() if h not in known}
    return PendingAdd(
        files=[str(f) for f in record.get("files", [])],
        documents=documents,
        model=str(record.get("model", "")),
        started=str(record.get("started", "")),
        summarized=added + len(ready),
        added=added,
        ready=ready,
        pid=int(record.get("pid") or 0),
        cancelled=record.get("cancelled") is True,
        parts=sum(waiting.values()),
        parts_kept=sum(min(kept.get(h, 0), n) if n else kept.get(h, 0) for h, n in waiting.items()),
    )


def _alive(pid: int) -> bool:
    if os.name != "posix":  # no cheap check: taken as ended (the offer is only a question)
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def forget_pending(folder: MemoryFolder) -> None:
    """The person declined to resume: forget the record (the results stay until they age
    out or the same documents are added again)."""
    store = ResultStore.of(folder, create=False)
    if store is not None:
        finish(store)
        store.close()


def measured_seconds(folder: MemoryFolder, model: str) -> float | None:
    """Seconds a memorize call of `model` took in this memory's last add, if measured."""
    store = ResultStore.of(folder, create=False)
    if store is None:
        return None
    try:
        seconds = store.state(SECONDS) or {}
    finally:
        store.close()
    value = seconds.get(model) if isinstance(seconds, dict) else None
    return float(value) if isinstance(value, int | float) else None
