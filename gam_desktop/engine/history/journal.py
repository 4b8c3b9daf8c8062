"""The operation journal: how a crash in the middle of an operation is noticed.

`.gam/journal.json` is written when an operation starts (under the writer lock)
and removed when it ends, however it ends. Finding one while holding the lock
means the process that wrote it died mid-operation; the folder may then hold part
of that operation's writes, and the last commit is the state to go back to.

Besides what ran and from which commit, it records what recovery needs without an
LLM: whether the operation made the repository (so undoing a first build removes it)
and, just before a change set is written, its files (to put back on restore) and which
memories it writes for which source document (so keeping can drop half-written ones).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.store.changeset import ChangeSet, StoreError, atomic_write
from gam_desktop.engine.store.folder import CACHE_DIR, JOURNAL_FILE, MemoryFolder
from gam_desktop.engine.store.gitdir import read_regular
from gam_desktop.engine.store.links import LinkedPathError, check_writable_path

SPACE_PROBE = f"{CACHE_DIR}/journal-space.probe"  # ignored by git, like the rest of the cache


@dataclass
class Interrupted:
    operation: str
    started: str
    head: str | None
    pid: int
    new_repository: bool = False  # it made .git (a first build): restoring removes it
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # hash -> name, memories
    # The change set that was being written when it died: what restoring must put back.
    writes: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)


def read(folder: MemoryFolder) -> Interrupted | None:
    path = folder.root / JOURNAL_FILE
    try:  # never a named pipe put there (it would wait forever), nor through a link
        data = json.loads(read_regular(path))
    except (OSError, ValueError):
        return None
    plan = data.get("plan") or {}
    return Interrupted(
        str(data.get("operation", "?")),
        str(data.get("started", "?")),
        data.get("head"),
        int(data.get("pid", 0)),
        bool(data.get("new_repository")),
        dict(plan.get("documents") or {}),
        [str(p) for p in plan.get("writes", [])],
        [(str(a), str(b)) for a, b in plan.get("moves", [])],
        [str(p) for p in plan.get("deletes", [])],
    )


def clear(folder: MemoryFolder) -> None:
    with contextlib.suppress(FileNotFoundError):
        (folder.root / JOURNAL_FILE).unlink()


def check_space(folder: MemoryFolder) -> None:
    """Refuse, as an operation would, when its journal could not be written (a full disk):
    checked before an add's LLM calls, which nothing could keep, are paid for."""
    try:
        probe = check_writable_path(folder.root, SPACE_PROBE)
    except LinkedPathError:
        return  # the cache is a link: nothing is written there, the operation will tell
    _write(folder, {"probe": True}, SPACE_PROBE)
    with contextlib.suppress(OSError):
        probe.unlink()


def _write(folder: MemoryFolder, payload: dict[str, Any], rel: str = JOURNAL_FILE) -> None:
    try:
        atomic_write(check_writable_path(folder.root, rel), json.dumps(payload))
    except OSError as exc:  # a full disk: refuse to start rather than run unjournaled
        raise StoreError(
            exc.errno,
            f"could not write the operation's journal: {exc.strerror or exc} in {folder.root}; "
            "nothing was changed (free some space and try again)",
        ) from exc


class Recording:
    """The journal of the running operation."""

    def __init__(self, folder: MemoryFolder, payload: dict[str, Any]) -> None:
        self.folder = folder
        self.payload = payload

    def plan(self, changes: ChangeSet) -> None:
        """Note what a change set is about to write, before it writes it: its files (to
        put back on restore) and the memories of each document (to judge them on keep)."""
        documents: dict[str, dict[str, Any]] = {}
        for path, (source_hash, name) in changes.memory_sources.items():
            entry = documents.setdefault(source_hash, {"name": name, "memories": []})
            entry["memories"].append(path)
        self.payload["plan"] = {
            "writes": sorted(changes.writes),
            "moves": [list(pair) for pair in changes.moves],
            "deletes": list(changes.deletes),
            "documents": documents,
        }
        _write(self.folder, self.payload)

    def done(self) -> None:
        """The change set is written and recorded: nothing of it is left to recover."""
        if self.payload.pop("plan", None) is not None:
            # Already committed: a journal left with the plan only restores what HEAD has.
            with contextlib.suppress(StoreError):
                _write(self.folder, self.payload)


@contextlib.contextmanager
def recording(
    folder: MemoryFolder, operation: str, head: str | None, started: str, new_repository: bool
) -> Iterator[Recording]:
    payload = {
        "operation": operation,
        "started": started,
        "head": head,
        "pid": os.getpid(),
        "new_repository": new_repository,
    }
    _write(folder, payload)
    try:
        yield Recording(folder, payload)
    except BaseException as exc:
        if not getattr(exc, "keep_journal", False):  # kept: the folder was left part changed
            clear(folder)
        raise
    clear(folder)
