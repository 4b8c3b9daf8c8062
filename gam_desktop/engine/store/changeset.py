"""All writes of one operation, applied together or not at all.

The builder computes every LLM result first and describes the outcome as a
ChangeSet; nothing touches the folder until `apply`. If applying fails part way
(disk full, a read-only folder, a file locked by another program), every step
already taken is undone, so a failed operation leaves the folder as it was.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.store import faults
from gam_desktop.engine.store.folder import APP_DIR
from gam_desktop.engine.store.links import check_writable_path
from gam_desktop.engine.store.markdown import README
from gam_desktop.engine.store.ownwrites import OWN_WRITES

T = TypeVar("T")
# Windows refuses to replace, delete or move a file while any program holds it open (the
# app's watcher or search, the indexer, Defender, OneDrive) with a PermissionError; such
# holds last milliseconds, so the step is retried briefly instead of undoing the operation.
SHARING_RETRIES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8) if os.name == "nt" else ()


def retry_sharing(action: Callable[[], T]) -> T:
    for pause in SHARING_RETRIES:
        try:
            return action()
        except PermissionError:
            time.sleep(pause)
    return action()


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Read once, at import (single-threaded): os.umask can only be read by setting it, which
# would race with threads creating files later.
_UMASK = _current_umask()


def _file_mode(path: Path) -> int:
    """The mode a replaced file keeps, or what the user's umask gives a new one."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o666 & ~_UMASK


class StoreError(GamError, OSError):
    """Writing the memory folder failed; the folder was restored to how it was."""

    title = "The memory folder could not be written"
    advice = "Nothing was changed. Check the free disk space and the folder's permissions."


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write via a temp file in the same folder and os.replace, so readers never see
    half a file and a crash leaves either the old or the new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _file_mode(path))  # mkstemp makes 0600; a memory is the user's files
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        retry_sharing(lambda: os.replace(tmp, path))
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
    # memory path -> (source hash, source name) of new memories: the journal records them
    # so that recovery after a crash can tell a document written whole from a partial one.
    memory_sources: dict[str, tuple[str, str]] = field(default_factory=dict)

    def targets(self) -> set[str]:
        """Every path this change set creates, replaces, moves or deletes."""
        return {*self.writes, *self.deletes, *(p for pair in self.moves for p in pair)}

    def apply(self, root: Path) -> Applied:
        """Write everything, or (on any OSError) nothing; the result can undo it all."""
        applied = Applied()
        try:
            for old, new in self.moves:
                _move(root, old, new, applied.steps)
            for rel in sorted(self.writes, key=_write_order):
                _write(root, rel, self.writes[rel], applied.steps)
            for rel in self.deletes:
                _delete(root, rel, applied.steps)
            applied.paths = self.targets()
            applied.paths |= _prune_empty_dirs(
                root,
                {p for pair in self.moves for p in pair[:1]} | set(self.deletes),
                applied.steps,
            )
        except OSError as exc:
            applied.undo()
            raise StoreError(
                exc.errno,
                f"could not write the memory folder ({exc.strerror or exc}); nothing was changed",
            ) from exc
        return applied


def _write_order(rel: str) -> int:
    """Source texts first, then memories, then what is derived from them (READMEs, the
    meta file): a crash part-way never leaves a memory whose original text is missing."""
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith(f"{APP_DIR}/"):
        return 0
    return {README: 2, META_FILE: 3}.get(name, 1)


@dataclass
class Applied:
    """The undo steps of an applied change set: used when a later step of the same
    operation (its commit) fails, so that the operation still changes nothing."""

    steps: list[Callable[[], None]] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)  # every file written, moved or deleted

    def undo(self) -> None:
        for step in reversed(self.steps):
            with contextlib.suppress(OSError):
                step()
        self.steps.clear()


def _make_dirs(root: Path, rel_dir: Path, undo: list[Callable[[], None]]) -> None:
    missing = []
    current = check_writable_path(root, rel_dir.as_posix()) if rel_dir.parts else root
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir()
        OWN_WRITES.note_directory(folder.resolve())
        undo.append(folder.rmdir)


def _write(root: Path, rel: str, data: str | bytes, undo: list[Callable[[], None]]) -> None:
    target = check_writable_path(root, rel)
    _make_dirs(root, Path(rel).parent, undo)
    previous = target.read_bytes() if target.is_file() else None
    atomic_write(target, data)
    faults.reached("write")
    if previous is None:
        undo.append(lambda: retry_sharing(target.unlink))
    else:
        undo.append(lambda: atomic_write(target, previous))


def _move(root: Path, old: str, new: str, undo: list[Callable[[], None]]) -> None:
    source, target = check_writable_path(root, old), check_writable_path(root, new)
    if target.exists():
        raise FileExistsError(17, "target exists", str(target))
    _make_dirs(root, Path(new).parent, undo)
    retry_sharing(lambda: shutil.move(source, target))
    OWN_WRITES.note_deleted(source.resolve())
    OWN_WRITES.note(target.resolve(), target.read_bytes())
    undo.append(lambda: _move_back(target, source))
    faults.reached("write")


def _move_back(target: Path, source: Path) -> None:
    source.parent.mkdir(parents=True, exist_ok=True)  # pruned meanwhile, maybe
    retry_sharing(lambda: shutil.move(target, source))


def _delete(root: Path, rel: str, undo: list[Callable[[], None]]) -> None:
    target = check_writable_path(root, rel)
    if not target.is_file():
        return
    previous = target.read_bytes()
    retry_sharing(target.unlink)
    OWN_WRITES.note_deleted(target.resolve())
    undo.append(lambda: atomic_write(target, previous))


def _prune_empty_dirs(root: Path, vacated: set[str], undo: list[Callable[[], None]]) -> set[str]:
    """Remove folders left empty (or holding only a README) by moves and deletes; returns
    the files removed with them (relative paths)."""
    removed: set[str] = set()
    parents = sorted({Path(p).parent for p in vacated}, key=lambda p: len(p.parts), reverse=True)
    for rel_dir in parents:
        folder = root / rel_dir
        while folder != root and folder.is_dir():
            remaining = [c for c in folder.iterdir() if c.name != "README.md"]
            if remaining:
                break
            for child in folder.iterdir():
                _delete(root, child.relative_to(root).as_posix(), undo)
                removed.add(child.relative_to(root).as_posix())
            retry_sharing(folder.rmdir)
            OWN_WRITES.note_deleted(folder.resolve())
            undo.append(functools.partial(folder.mkdir, parents=True, exist_ok=True))
            folder = folder.parent
    return removed
