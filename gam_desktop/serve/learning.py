"""The write path: each answered turn saved as a conversation and its facts learned, after
the reply has gone out, by one background thread.

One thread, one queue: turns are written in the order they were answered, through the
memory's writer lock like any other writer; while the app or a CLI holds the lock the queue
waits and nothing is dropped. A turn is one operation ("Chat: …", then "Learned …" when it
states facts); the turns that arrived while the writer was committing are saved together,
as one "Chat:" operation (a commit takes most of a second in a big memory: one per turn
would fall behind a busy client).
Stopping drains the queue first. With a `TurnQueue` each turn is also on disk from before it
is handed over until it is saved, and what a killed run left is written at the next start
(turnqueue.py says how a turn is never saved twice).

Which conversation a turn belongs to: an OpenAI client sends the whole history with every
request, so the history before the new question names the conversation. The key of the
history a saved turn leaves (…, question, answer) is remembered with the conversation's id;
the next request whose history has that key continues it. A client may also name the
conversation with the `x-gam-conversation` header. The key is also kept in the saved turn
(in the same commit), so after a restart the map is read back from the conversations most
recently updated: a chat continued the next day still lands in its own file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.api import (
    TurnToSave,
    Workflow,
    list_conversations,
    parse_conversation,
    parse_time,
    saved_turn_ids,
    utc_now,
)
from gam_desktop.serve.retrieval import text_of
from gam_desktop.serve.turnqueue import TurnQueue

log = logging.getLogger(__name__)

RECENT_CONVERSATIONS = 200  # read back at start: the chats a client may still continue
BATCH = 100  # turns committed together at most (one operation, one commit)
MAX_KEYS = 20_000  # histories remembered while running (~2 MB), the oldest forgotten first


def history_key(messages: list[dict[str, Any]]) -> str:
    """A conversation's history as a key: the user and assistant texts, in order (system
    messages left out: a client may change its instructions between turns)."""
    said = [(m.get("role"), text_of(m.get("content"))) for m in messages]
    kept = [pair for pair in said if pair[0] in ("user", "assistant")]
    return hashlib.sha256(json.dumps(kept, ensure_ascii=False).encode()).hexdigest()


def known_histories(root: Path, recent: int = RECENT_CONVERSATIONS) -> dict[str, str]:
    """History key -> conversation id, from the turns gam-serve saved in the `recent`
    conversations updated last (read oldest first: when two chats share a history, the
    later one is continued, as while running)."""
    known: dict[str, str] = {}
    for info in reversed(list_conversations(root)[:recent]):
        try:
            record = parse_conversation(
                (root / info.path).read_text(encoding="utf-8", errors="replace")
            )
        except (OSError, ValueError):  # vanished meanwhile, or no longer a conversation
            continue
        known.update((t.history_key, record.id) for t in record.turns if t.history_key)
    return known


@dataclass
class PendingTurn:
    """A turn answered for another app, waiting to be written."""

    history: list[dict[str, Any]]  # the messages before the question
    question: str
    answer: str
    sources: list[str] = field(default_factory=list)
    conversation_id: str | None = None  # named by the client
    at: datetime = field(default_factory=utc_now)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)  # kept in the saved turn
    file: Path | None = None  # its file in the queue on disk, until it is saved

    def data(self) -> dict[str, Any]:
        return {
            "history": self.history,
            "question": self.question,
            "answer": self.answer,
            "sources": self.sources,
            "conversation_id": self.conversation_id,
            "at": self.at.isoformat(),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any], file: Path) -> PendingTurn:
        conversation = data.get("conversation_id")
        return cls(
            history=[m for m in data["history"] if isinstance(m, dict)],
            question=data["question"],
            answer=data["answer"],
            sources=[str(s) for s in data["sources"]],
            conversation_id=conversation if isinstance(conversation, str) else None,
            at=parse_time(data["at"]) or utc_now(),
            id=data["id"],
            file=file,
        )


@dataclass
class WriterStats:
    saved: int = 0  # turns committed (or deliberately not kept: saving is off)
    learned: int = 0  # turns whose facts were committed
    failed: list[str] = field(default_factory=list)  # why turns could not be written


_STOP = object()


class TurnWriter:
    """Saves turns and learns from them on one thread of its own. `workflow` is used only
    by that thread (a Workflow's repository is not shared between threads). With `disk`,
    turns are queued on disk too (see turnqueue.py)."""

    def __init__(
        self,
        workflow: Workflow,
        on_saved: Callable[[PendingTurn], None] | None = None,
        disk: TurnQueue | None = None,
    ):
        self.workflow = workflow
        self.disk = disk
        self.on_saved = on_saved
        self.stats = WriterStats()
        self.waited = threading.Event()  # set once a turn waited for another writer's lock
        self._queue: queue.Queue[object] = queue.Queue()
        self._conversations: dict[str, str] = {}  # history key -> conversation id
        self._thread = threading.Thread(target=self._run, name="gam-serve-writer", daemon=True)

    def start(self) -> None:
        """Queue what a previous run left on disk (before any new turn), then start."""
        if self.disk is not None:
            self._replay(self.disk)
        self._thread.start()

    def submit(self, turn: PendingTurn) -> None:
        if self.disk is not None:
            try:
                turn.file = self.disk.put(turn.id, turn.data())
            except OSError as exc:  # a full disk, .gam a link: still written, not durable
                log.warning("a turn could not be queued on disk: %s", exc)
        self._queue.put(turn)

    def _replay(self, disk: TurnQueue) -> None:
        left = disk.left()
        if not left:
            return
        saved = saved_turn_ids(self.workflow.folder.root)
        again = 0
        for path, data in left:
            if data["id"] in saved:  # saved just before the kill, its file not yet removed
                log.info("queued turn %s was already saved", data["id"])
                disk.done(path)
                continue
            self._queue.put(PendingTurn.from_data(data, path))
            again += 1
        log.info("%d turn(s) the last run answered are queued again", again)

    def pending(self) -> int:
        return self._queue.unfinished_tasks

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every turn submitted so far is written; False on a timeout."""
        done = threading.Event()

        def wait() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        return done.wait(timeout)

    def stop(self, timeout: float | None = None) -> None:
        """Write what is queued, end the thread, then close what its Workflow opened."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)
        if not self._thread.is_alive():  # (still writing after `timeout`: it is its own)
            self.workflow.close()

    def _run(self) -> None:
        # Which conversations clients may continue, read back before the first turn is
        # written: here, not in start(), as 1,000 conversations take a second to list.
        try:
            self._conversations = known_histories(self.workflow.folder.root)
        except OSError as exc:  # the folder unreadable: turns start new conversations
            log.warning("the saved conversations could not be read back: %s", exc)
        while True:
            batch, stopping = self._next_batch()
            try:
                if batch:
                    self._write(batch)
            except Exception as exc:  # a failed batch must not end the writer; its turns
                # stay in the queue on disk and are written at the next start
                log.warning("%d turn(s) could not be written: %s", len(batch), exc)
                self.stats.failed.append(str(exc))
            finally:
                for _ in range(len(batch) + stopping):
                    self._queue.task_done()
            if stopping:
                return

    def _next_batch(self) -> tuple[list[PendingTurn], bool]:
        """The next turn (waited for) and those queued behind it, up to BATCH: the turns
        that arrived while the last ones were being committed are committed together."""
        items = [self._queue.get()]
        while len(items) < BATCH:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        turns = [item for item in items if isinstance(item, PendingTurn)]
        return turns, len(turns) < len(items)

    def _write(self, batch: list[PendingTurn]) -> None:
        items = []
        for pending in batch:
            before = history_key(pending.history)
            after = [
                *pending.history,
                {"role": "user", "content": pending.question},
                {"role": "assistant", "content": pending.answer},
            ]
            items.append(
                TurnToSave(
                    pending.question,
                    pending.answer,
                    pending.conversation_id or self._conversations.get(before),
                    follows=before,  # or a turn of this batch started its conversation
                    sources=pending.sources,
                    at=pending.at,
                    turn_id=pending.id,
                    history_key=history_key(after),  # what the client's next request sends
                )
            )
        turns = self.workflow.save_turns(items)
        self.stats.saved += len(batch)
        for pending, item, turn in zip(batch, items, turns, strict=True):
            if self.disk is not None and pending.file is not None:  # never written again
                self.disk.done(pending.file)
            if turn.conversation_id and item.history_key:
                self._remember(item.history_key, turn.conversation_id)
        for pending, turn in zip(batch, turns, strict=True):
            try:
                learned = self.workflow.learn_from_turn(
                    turn.conversation_id, turn.turn, pending.question, pending.at
                )
                self.stats.learned += bool(learned)
            except Exception as exc:  # the turn is saved; its facts are not
                log.warning("facts could not be learned from a turn: %s", exc)
                self.stats.failed.append(str(exc))
            if self.on_saved is not None:
                self.on_saved(pending)

    def _remember(self, key: str, conversation_id: str) -> None:
        self._conversations.pop(key, None)  # to the end: the newest is forgotten last
        self._conversations[key] = conversation_id
        while len(self._conversations) > MAX_KEYS:
            del self._conversations[next(iter(self._conversations))]
