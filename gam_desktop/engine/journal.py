"""The operation journal: how a crash in the middle of an operation is noticed.

`.gam/journal.json` is written when an operation starts (under the writer lock)
and removed when it ends, however it ends. Finding one while holding the lock
means the process that wrote it died mid-operation; the folder may then hold part
of that operation's writes, and the last commit is the state to go back to.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from gam_desktop.engine.changeset import atomic_write
from gam_desktop.engine.folder import JOURNAL_FILE, MemoryFolder


@dataclass
class Interrupted:
    operation: str
    started: str
    head: str | None
    pid: int


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
    )


def clear(folder: MemoryFolder) -> None:
    with contextlib.suppress(FileNotFoundError):
        (folder.root / JOURNAL_FILE).unlink()


@contextlib.contextmanager
def recording(
    folder: MemoryFolder, operation: str, head: str | None, started: str
) -> Iterator[None]:
    payload = {"operation": operation, "started": started, "head": head, "pid": os.getpid()}
    atomic_write(folder.root / JOURNAL_FILE, json.dumps(payload))
    try:
        yield
    finally:
        clear(folder)
