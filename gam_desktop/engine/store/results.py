"""The LLM results a build has paid for, kept in the memory until it no longer needs them.

One SQLite file, `.gam/cache/results/results.sqlite3` (under the cache folder: never in
git, and the folder may be deleted at any time, costing only calls). SQLite in WAL mode
because each result is written on its own as it arrives, from several worker threads,
and must survive a `kill -9` right after: a committed transaction is in the WAL file
before `put` returns (synchronous=NORMAL: a power cut may lose the last few, a crash of
the process none). Two processes on one memory (the app and `gam-add`) may share it.

It stores text by key and knows nothing of prompts: `ingest.resume` makes the keys. Every
failure here (a locked or damaged file) is logged and treated as "not kept": the cache
saves money, it must never stop a build. A full disk is the exception: what cannot be
written is kept in this process (read back like the rest) and written when the store is
closed, after the operation that met the full disk has put its files back (which frees
their space); only what still finds no room then is lost, and said so once. So is what
comes while less than RESERVE_BYTES are free: written first, the results (SQLite writes
a few pages for each) took the last bytes the operation's journal and files needed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gam_desktop.engine.store import faults
from gam_desktop.engine.store.folder import RESULTS_DIR, MemoryFolder
from gam_desktop.engine.store.links import LinkedPathError, check_writable_path
from gam_desktop.engine.textutil import plural

log = logging.getLogger(__name__)
RESULTS_FILE = f"{RESULTS_DIR}/results.sqlite3"
CAP_BYTES = 200 * 1024 * 1024  # the oldest results go first past this
MAX_AGE_DAYS = 30  # results of an add abandoned this long ago are dropped when opened
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY, stage TEXT NOT NULL, document TEXT NOT NULL,
    model TEXT NOT NULL, value TEXT NOT NULL, bytes INTEGER NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_created ON results(created);
CREATE INDEX IF NOT EXISTS results_document ON results(document);
CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
SQLITE_FULL = 13  # "database or disk is full"
# Below this much free space, results wait in this process for the end of the operation
# (they are forgotten then if it succeeded): its files, git's objects and its journal go
# first. A crash meanwhile loses them, as a full disk would have.
RESERVE_BYTES = 8 * 1024 * 1024
NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
LOST = (
    "{count} could not be kept: the disk is full; a rerun will ask the LLM again (free "
    "some space first)"
)
Row = tuple[str, str, str, str, str, int, float]


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` is SQLite's or the system's "no space left"."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in NO_SPACE


class ResultStore:
    """Results by key; thread-safe (one connection behind a lock). `document` tags a result
    with the source document it was made for ("" when it belongs to none)."""

    def __init__(self, path: Path, cap_bytes: int = CAP_BYTES) -> None:
        self.path = path
        self.cap_bytes = cap_bytes
        self._lock = threading.Lock()
        self._bytes = 0  # what the results take, as this process last counted
        self._db: sqlite3.Connection | None = None
        # What a full disk kept from being written, by key / by name (None: removed),
        # written at `close` (or `save_unsaved`) when there is room again.
        self._unsaved: dict[str, Row] = {}
        self._unsaved_state: dict[str, str | None] = {}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=10, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            self._db = db
            self._expire()
        except (sqlite3.Error, OSError) as exc:
            log.warning("LLM results will not be kept (%s): %s", path, exc)
            self._db = None

    @classmethod
    def of(cls, folder: MemoryFolder, create: bool = True) -> ResultStore | None:
        """The memory's store; None without `create` when it has none yet, and None when
        its file, a file SQLite keeps beside it or a folder on the way is a link (nothing is
        written through links: the memory's summaries would land where it points)."""
        try:
            for suffix in ("-wal", "-shm", "-journal", ""):
                path = check_writable_path(folder.root, RESULTS_FILE + suffix)
        except LinkedPathError as exc:
            log.warning("LLM results will not be kept: %s", exc)
            return None
        if not create and not path.is_file():
            return None
        return cls(path)

    @contextlib.contextmanager
    def _sql(self, what: str) -> Iterator[sqlite3.Connection | None]:
        """The connection under the lock, or None when the store is off; a failure turns
        it off (logged once) rather than reaching the build."""
        with self._lock:
            db = self._db
            try:
                yield db
            except (sqlite3.Error, OSError) as exc:
                log.warning("LLM results: %s failed, no longer kept: %s", what, exc)
                self._db = None

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[sqlite3.Connection | None]:
        """As `_sql`, for a write that a full disk keeps in this process instead: the
        connection, or None when the store is off or the disk was found full (then the
        caller keeps what it writes in `_unsaved`, as it does when this fails for it)."""
        with self._sql(what) as db:
            if db is None or self._unsaved or self._unsaved_state or self._short_of_space():
                yield None  # (after a full disk, written together at `save_unsaved`)
                return
            try:
                yield db
            except (sqlite3.Error, OSError) as exc:
                if not disk_full(exc):
                    raise
                log.warning("LLM results: the disk is full; kept here until there is room")
                raise _Full from exc

    def _short_of_space(self) -> bool:
        """Whether less than RESERVE_BYTES are free where the store lies (said once)."""
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return False
        if free >= RESERVE_BYTES:
            return False
        log.warning("LLM results: the disk is almost full; kept here until the operation ends")
        return True

    def get(self, key: str) -> str | None:
        with self._sql("reading") as db:
            if key in self._unsaved:
                return self._unsaved[key][4]
            if db is None:
                return None
            row = db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
            return str(row[0]) if row else None
        return None

    def put(self, key: str, stage: str, document: str, model: str, value: str) -> None:
        """Keep one result now (its own transaction: durable when this returns; on a full
        disk, kept in this process until `close`)."""
        size = len(value.encode("utf-8")) + len(key)
        row: Row = (key, stage, document, model, value, size, time.time())
        try:
            with self._writing("writing") as db:
                if db is None:
                    self._keep(row)
                    return
                with db:
                    db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                self._bytes += size
                if self._bytes > self.cap_bytes:
                    self._evict(db)
        except _Full:
            with self._lock:
                self._keep(row)
            return
        faults.reached("result")

    def _keep(self, row: Row) -> None:
        """Keep `row` in this process (the lock held): the disk was full. Not when the store
        is off for another reason (a damaged file): nothing is kept then."""
        if self._db is not None:
            self._unsaved[row[0]] = row

    def save_unsaved(self) -> int:
        """Write what a full disk kept in this process, now that there may be room (the
        operation that met it put its files back); how many results are still unsaved."""
        with self._sql("saving") as db:
            if db is None or not (self._unsaved or self._unsaved_state):
                return len(self._unsaved)
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)",
                        self._unsaved.values(),
                    )
                    for name, value in self._unsaved_state.items():
                        _write_state(db, name, value)
            except (sqlite3.Error, OSError) as exc:
                if not disk_full(exc):
                    raise
                return len(self._unsaved)
            log.info("LLM results: %d kept once there was room again", len(self._unsaved))
            self._unsaved.clear()
            self._unsaved_state.clear()
        return len(self._unsaved)  # (a failure other than a full disk turned the store off)

    def present(self, keys: Iterable[str]) -> set[str]:
        """Which of `keys` are kept."""
        wanted = list(keys)
        found: set[str] = set()
        with self._sql("reading") as db:
            found.update(k for k in wanted if k in self._unsaved)
            if db is None:
                return found
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = db.execute(f"SELECT key FROM results WHERE key IN ({marks})", part)
                found.update(str(row[0]) for row in rows)
        return found

    def forget_documents(self, documents: Iterable[str]) -> None:
        """Drop the results made for `documents` (they are in the memory now)."""
        hashes = [(h,) for h in documents]
        with self._sql("cleaning") as db:
            gone = {h for (h,) in hashes}
            self._unsaved = {k: r for k, r in self._unsaved.items() if r[2] not in gone}
            if db is not None and hashes:
                with db:
                    db.executemany("DELETE FROM results WHERE document = ?", hashes)

    def forget_stage(self, stage: str) -> None:
        with self._sql("cleaning") as db:
            self._unsaved = {k: r for k, r in self._unsaved.items() if r[1] != stage}
            if db is not None:
                with db:
                    db.execute("DELETE FROM results WHERE stage = ?", (stage,))

    def counts(self, stage: str, model: str) -> dict[str, int]:
        """How many results of `stage` made with `model` each document has."""
        with self._sql("reading") as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT document, COUNT(*) FROM results WHERE stage = ? AND model = ? "
                "GROUP BY document",
                (stage, model),
            )
            counts = {str(doc): int(n) for doc, n in rows}
            for _key, kept_stage, document, kept_model, *_rest in self._unsaved.values():
                if (kept_stage, kept_model) == (stage, model):  # (never written: not counted)
                    counts[document] = counts.get(document, 0) + 1
            return counts
        return {}

    def total_bytes(self) -> int:
        with self._sql("reading") as db:
            if db is None:
                return 0
            return int(db.execute("SELECT COALESCE(SUM(bytes), 0) FROM results").fetchone()[0])
        return 0

    # -- small named values (the interrupted add, timings) -------------------------------

    def state(self, name: str) -> Any:
        """The JSON value kept under `name`, or None."""
        with self._sql("reading") as db:
            if name in self._unsaved_state:
                text = self._unsaved_state[name]
                return None if text is None else json.loads(text)
            if db is None:
                return None
            row = db.execute("SELECT value FROM state WHERE name = ?", (name,)).fetchone()
            return json.loads(row[0]) if row else None
        return None

    def set_state(self, name: str, value: Any) -> None:
        """Keep `value` (JSON) under `name`; None removes it."""
        text = None if value is None else json.dumps(value)
        try:
            with self._writing("writing") as db:
                if db is None:
                    if self._db is not None:
                        self._unsaved_state[name] = text
                    return
                with db:
                    _write_state(db, name, text)
        except _Full:
            with self._lock:
                if self._db is not None:
                    self._unsaved_state[name] = text

    def close(self) -> None:
        """Close the store, first writing what a full disk kept in this process; what
        still finds no room is lost, and said so (a rerun pays for it again)."""
        lost = self.save_unsaved()
        if lost:
            log.error(LOST.format(count=plural(lost, "LLM result")))
        with self._lock:
            db, self._db = self._db, None
            self._unsaved.clear()
            self._unsaved_state.clear()
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    # -- keeping it small -------------------------------------------------------------

    def _evict(self, db: sqlite3.Connection) -> None:
        """Past the cap, drop the oldest results down to 90% of it."""
        total = int(db.execute("SELECT COALESCE(SUM(bytes), 0) FROM results").fetchone()[0])
        self._bytes = total
        if total <= self.cap_bytes:
            return
        excess, dropped = total - int(self.cap_bytes * 0.9), 0
        rows = db.execute("SELECT key, bytes FROM results ORDER BY created").fetchall()
        doomed = []
        for key, size in rows:
            if dropped >= excess:
                break
            doomed.append((key,))
            dropped += int(size)
        with db:
            db.executemany("DELETE FROM results WHERE key = ?", doomed)
        self._bytes = total - dropped
        log.info("LLM results: %d oldest dropped (over %d bytes)", len(doomed), self.cap_bytes)

    def _expire(self) -> None:
        with self._sql("cleaning") as db:
            if db is None:
                return
            with db:
                db.execute(
                    "DELETE FROM results WHERE created < ?", (time.time() - MAX_AGE_DAYS * 86400,)
                )
            self._evict(db)


class _Full(Exception):
    """A write met a full disk: what it wrote is kept in this process instead."""


def _write_state(db: sqlite3.Connection, name: str, text: str | None) -> None:
    if text is None:
        db.execute("DELETE FROM state WHERE name = ?", (name,))
    else:
        db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (name, text))
