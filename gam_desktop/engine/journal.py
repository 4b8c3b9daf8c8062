"""The operation journal: how a crash in the middle of an operation is noticed.

`.gam/journal.json` is written when an operation starts (under the writer lock)
and removed when it ends, however it ends. Finding one while holding the lock
means the process that wrote it died mid-operation; the folder may then hold part
of that operation's writes, and the last commit is the state to go back to.

Besides what ran and from which commit, it records what recovery needs without an
LLM: the names the folder held before (so a first build can be undone where there is
no commit to go back to) and, just before a change set is written, which memories it
writes for which source document (so keeping the files can drop half-written ones).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.changeset import ChangeSet, StoreError, atomic_write
from gam_desktop.engine.folder import JOURNAL_FILE, MemoryFolder


@dataclass
class Interrupted:
    operation: str
    started: str
    head: str | None
    pid: int
    preexisting: list[str] | None = None  # top-level names before it started
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # hash -> name, memories


def read(folder: MemoryFolder) -> Interrupted | None:
    path = folder.root / JOURNAL_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Interrupted(
        str(data.get("operation", "?")),
        str(data.get("started", "?")),
        data.get("head"),
        int(data.get("pid", 0)),
        data.get("preexisting"),
        dict(data.get("documents") or {}),
    )


def clear(folder: MemoryFolder) -> None:
    with contextlib.suppress(FileNotFoundError):
        (folder.root / JOURNAL_FILE).unlink()


def _write(folder: MemoryFolder, payload: dict[str, Any]) -> None:
    try:
        atomic_write(folder.root / JOURNAL_FILE, json.dumps(payload))
    except OSError as exc:  # a full disk: refuse to start rather than run unjournaled
        raise StoreError(
            exc.errno,
            f"could not start the operation: {exc.strerror or exc} in {folder.root}; "
            "nothing was changed (free some space and try again)",
        ) from exc


class Recording:
    """The journal of the running operation."""

    def __init__(self, folder: MemoryFolder, payload: dict[str, Any]) -> None:
        self.folder = folder
        self.payload = payload

    def plan(self, changes: ChangeSet) -> None:
        """Note the documents a change set is about to write, before it writes them."""
        documents: dict[str, dict[str, Any]] = self.payload.setdefault("documents", {})
        for path, (source_hash, name) in changes.memory_sources.items():
            entry = documents.setdefault(source_hash, {"name": name, "memories": []})
            entry["memories"].append(path)
        if changes.memory_sources:
            _write(self.folder, self.payload)


@contextlib.contextmanager
def recording(
    folder: MemoryFolder, operation: str, head: str | None, started: str, preexisting: list[str]
) -> Iterator[Recording]:
    payload = {
        "operation": operation,
        "started": started,
        "head": head,
        "pid": os.getpid(),
        "preexisting": preexisting,
    }
    _write(folder, payload)
    try:
        yield Recording(folder, payload)
    finally:
        clear(folder)
