"""All writes of one operation, applied together or not at all.

The builder computes every LLM result first and describes the outcome as a
ChangeSet; nothing touches the folder until `apply`. If applying fails part way
(disk full, a read-only folder, a file locked by another program), every step
already taken is undone, so a failed operation leaves the folder as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gam_desktop.engine.ownwrites import OWN_WRITES

# Fault injection for the crash-recovery tests: the process dies after this many writes
# of a change set, as a power cut or a kill would leave it. Unset in normal use.
_EXIT_AFTER_WRITES = int(os.environ.get("GAM_FAULT_EXIT_AFTER_WRITES", "0") or 0)
_writes_done = 0


def _maybe_die() -> None:
    global _writes_done
    _writes_done += 1
    if _EXIT_AFTER_WRITES and _writes_done >= _EXIT_AFTER_WRITES:
        os._exit(137)


class StoreError(OSError):
    """Writing the memory folder failed; the folder was restored to how it was."""


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write via a temp file in the same folder and os.replace, so readers never see
    half a file and a crash leaves either the old or the new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        OWN_WRITES.note(path.resolve(), payload)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass
class ChangeSet:
    """Relative POSIX paths under the memory root."""

    writes: dict[str, str | bytes] = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    def apply(self, root: Path) -> None:
        undo: list[Callable[[], None]] = []
        try:
            for old, new in self.moves:
                _move(root, old, new, undo)
            for rel, data in self.writes.items():
                _write(root, rel, data, undo)
            for rel in self.deletes:
                _delete(root, rel, undo)
            _prune_empty_dirs(
                root, {p for pair in self.moves for p in pair[:1]} | set(self.deletes)
            )
        except OSError as exc:
            for step in reversed(undo):
                with contextlib.suppress(OSError):
                    step()
            raise StoreError(
                exc.errno,
                f"could not write the memory folder ({exc.strerror or exc}); nothing was changed",
            ) from exc


def _make_dirs(root: Path, rel_dir: Path, undo: list[Callable[[], None]]) -> None:
    missing = []
    current = root / rel_dir
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir()
        OWN_WRITES.note_directory(folder.resolve())
        undo.append(lambda f=folder: f.rmdir())


def _write(root: Path, rel: str, data: str | bytes, undo: list[Callable[[], None]]) -> None:
    target = root / rel
    _make_dirs(root, Path(rel).parent, undo)
    previous = target.read_bytes() if target.is_file() else None
    atomic_write(target, data)
    _maybe_die()
    if previous is None:
        undo.append(lambda: target.unlink())
    else:
        undo.append(lambda: atomic_write(target, previous))


def _move(root: Path, old: str, new: str, undo: list[Callable[[], None]]) -> None:
    source, target = root / old, root / new
    if target.exists():
        raise FileExistsError(17, "target exists", str(target))
    _make_dirs(root, Path(new).parent, undo)
    shutil.move(source, target)
    OWN_WRITES.note_deleted(source.resolve())
    OWN_WRITES.note(target.resolve(), target.read_bytes())
    undo.append(lambda: shutil.move(target, source))


def _delete(root: Path, rel: str, undo: list[Callable[[], None]]) -> None:
    target = root / rel
    if not target.is_file():
        return
    previous = target.read_bytes()
    target.unlink()
    OWN_WRITES.note_deleted(target.resolve())
    undo.append(lambda: atomic_write(target, previous))


def _prune_empty_dirs(root: Path, vacated: set[str]) -> None:
    """Remove folders left empty (or holding only a README) by moves and deletes."""
    parents = sorted({Path(p).parent for p in vacated}, key=lambda p: len(p.parts), reverse=True)
    for rel_dir in parents:
        folder = root / rel_dir
        while folder != root and folder.is_dir():
            remaining = [c for c in folder.iterdir() if c.name != "README.md"]
            if remaining:
                break
            for child in folder.iterdir():
                child.unlink()
                OWN_WRITES.note_deleted(child.resolve())
            folder.rmdir()
            OWN_WRITES.note_deleted(folder.resolve())
            folder = folder.parent
