"""The LLM results an add paid for, on a full disk: kept in the process while SQLite has no
room (its own "database or disk is full", made here with `max_page_count`), written when
the store closes, after the failed operation put its files back; lost only when there is
still no room then, and said so once. Before, the first full write turned the store off,
and the rerun paid for every call again."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from gam_desktop.engine.store import faults, results
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.results import ResultStore
from tests.documents import topic_document
from tests.engine.test_full_disk_commit import FullDisk

A = '{"memory": "' + "A" * 5000 + '"}'  # each needs pages of its own
B = '{"memory": "' + "B" * 5000 + '"}'


def fill(store: ResultStore) -> None:
    """SQLite's file may grow no more: the next write of a new page fails with SQLITE_FULL."""
    db = store._db
    assert db is not None
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")


def make_room(store: ResultStore) -> None:
    db = store._db
    assert db is not None
    db.execute("PRAGMA max_page_count = 1073741823")


def on_disk(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as db:
        return {str(k): str(v) for k, v in db.execute("SELECT key, value FROM results")}


def test_a_result_the_full_disk_refused_is_read_back_and_written_once_there_is_room(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path / "results.sqlite3")
    store.put("a", "memorize", "doc", "m", A)
    fill(store)
    store.put("b", "memorize", "doc", "m", B)
    store.set_state("pending_add", {"files": ["x.md"]})
    assert store.get("b") == B  # still there for this run
    assert store.present(["a", "b", "c"]) == {"a", "b"}
    assert store.counts("memorize", "m") == {"doc": 2}
    assert store.state("pending_add") == {"files": ["x.md"]}
    assert on_disk(store.path) == {"a": A}
    make_room(store)  # the failed operation put its files back
    store.close()
    assert on_disk(store.path) == {"a": A, "b": B}
    again = ResultStore(store.path)
    assert again.state("pending_add") == {"files": ["x.md"]}
    again.close()


def test_results_that_never_find_room_are_said_lost_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ResultStore(tmp_path / "results.sqlite3")
    fill(store)
    for key in "abc":
        store.put(key, "memorize", "doc", "m", A)
    with caplog.at_level(logging.WARNING, logger=results.__name__):
        store.close()
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert said == [
        "3 LLM results could not be kept: the disk is full; a rerun will ask the LLM again "
        "(free some space first)"
    ]
    assert on_disk(store.path) == {}


def test_results_wait_while_the_disk_is_almost_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below the reserve, results leave the last bytes to the operation's journal and
    files (written first, they took them: the journal then failed), and are written at
    the end."""
    monkeypatch.setattr(results, "RESERVE_BYTES", 1 << 62)  # never that much free
    store = ResultStore(tmp_path / "results.sqlite3")
    store.put("a", "memorize", "doc", "m", "{}")
    assert store.get("a") == "{}" and on_disk(store.path) == {}
    store.close()
    assert on_disk(store.path) == {"a": "{}"}


class FullFile:
    """A store's connection whose file may grow no more (until `full` is False): every
    insert fails as SQLite's does on a full disk. (A limit on its pages would let the
    scripted server's small results in: they fit in the pages' free room.)"""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.full = db, True

    def _check(self, sql: str) -> None:
        if self.full and sql.lstrip().upper().startswith("INSERT"):
            raise sqlite3.OperationalError("database or disk is full")

    def execute(self, sql: str, *args):
        self._check(sql)
        return self.db.execute(sql, *args)

    def executemany(self, sql: str, *args):
        self._check(sql)
        return self.db.executemany(sql, *args)

    def __enter__(self):
        return self.db.__enter__()

    def __exit__(self, *exc):
        return self.db.__exit__(*exc)

    def close(self) -> None:
        self.db.close()


def test_an_add_whose_commit_met_a_full_disk_keeps_its_results_for_the_rerun(
    make_workflow, memory_dir: Path, llm_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The results' file is full from the start, and git then finds the disk full too: the
    add fails and puts its files back, which makes room; the results are written then,
    and the same add run again asks the LLM for no memory."""
    make_workflow().add(text=topic_document({"python": 3}))
    files: list[FullFile] = []
    opened = ResultStore.__init__

    def full_from_the_start(store: ResultStore, *args, **kwargs) -> None:
        opened(store, *args, **kwargs)
        if store._db is not None:
            files.append(FullFile(store._db))
            store._db = files[-1]  # type: ignore[assignment]

    monkeypatch.setattr(ResultStore, "__init__", full_from_the_start)
    disk = FullDisk(monkeypatch)

    def at(point: str) -> None:
        if point == "staged" and not disk.full:
            disk.fill()  # git's objects find no room ...
            for file in files:
                file.full = False  # ... and the files it puts back make some

    assert faults.install(at) is None
    try:
        with pytest.raises(StoreError, match="nothing was changed"):
            make_workflow().add(text=topic_document({"rust": 3}))
    finally:
        faults.install(None)
    assert disk.full, "the commit never met the full disk: the test tested nothing"
    disk.full = False
    monkeypatch.setattr(ResultStore, "__init__", opened)
    asked = len(llm_server.state.tasks())
    report = make_workflow().add(text=topic_document({"rust": 3}))
    assert len(report.memories) == 3
    assert "memorize" not in llm_server.state.tasks()[asked:]  # every summary was kept
    assert report.reused >= 3
