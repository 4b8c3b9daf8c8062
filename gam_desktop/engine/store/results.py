"""The LLM results a build has paid for, kept in the memory until it no longer needs them.

One SQLite file, `.gam/cache/results/results.sqlite3` (under the cache folder: never in
git, and the folder may be deleted at any time, costing only calls). SQLite in WAL mode
because each result is written on its own as it arrives, from several worker threads,
and must survive a `kill -9` right after: a committed transaction is in the WAL file
before `put` returns (synchronous=NORMAL: a power cut may lose the last few, a crash of
the process none). Two processes on one memory (the app and `gam-add`) may share it.

It stores text by key and knows nothing of prompts: `build.resume` makes the keys. Every
failure here (a full disk, a locked or damaged file) is logged and treated as "not
kept": the cache saves money, it must never stop a build.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gam_desktop.engine.store import faults
from gam_desktop.engine.store.folder import RESULTS_DIR, MemoryFolder
from gam_desktop.engine.store.links import LinkedPathError, check_writable_path

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


class ResultStore:
    """Results by key; thread-safe (one connection behind a lock). `document` tags a result
    with the source document it was made for ("" when it belongs to none)."""

    def __init__(self, path: Path, cap_bytes: int = CAP_BYTES) -> None:
        self.path = path
        self.cap_bytes = cap_bytes
        self._lock = threading.Lock()
        self._bytes = 0  # what the results take, as this process last counted
        self._db: sqlite3.Connection | None = None
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

    def get(self, key: str) -> str | None:
        with self._sql("reading") as db:
            if db is None:
                return None
            row = db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
            return str(row[0]) if row else None
        return None

    def put(self, key: str, stage: str, document: str, model: str, value: str) -> None:
        """Keep one result now (its own transaction: durable when this returns)."""
        with self._sql("writing") as db:
            if db is None:
                return
            size = len(value.encode("utf-8")) + len(key)
            with db:
                db.execute(
                    "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, stage, document, model, value, size, time.time()),
                )
            self._bytes += size
            if self._bytes > self.cap_bytes:
                self._evict(db)
        faults.reached("result")

    def present(self, keys: Iterable[str]) -> set[str]:
        """Which of `keys` are kept."""
        wanted = list(keys)
        found: set[str] = set()
        with self._sql("reading") as db:
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
            if db is not None and hashes:
                with db:
                    db.executemany("DELETE FROM results WHERE document = ?", hashes)

    def forget_stage(self, stage: str) -> None:
        with self._sql("cleaning") as db:
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
            return {str(doc): int(n) for doc, n in rows}
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
            if db is None:
                return None
            row = db.execute("SELECT value FROM state WHERE name = ?", (name,)).fetchone()
            return json.loads(row[0]) if row else None
        return None

    def set_state(self, name: str, value: Any) -> None:
        """Keep `value` (JSON) under `name`; None removes it."""
        with self._sql("writing") as db:
            if db is None:
                return
            with db:
                if value is None:
                    db.execute("DELETE FROM state WHERE name = ?", (name,))
                else:
                    db.execute(
                        "INSERT OR REPLACE INTO state VALUES (?, ?)", (name, json.dumps(value))
                    )

    def close(self) -> None:
        with self._lock:
            db, self._db = self._db, None
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
