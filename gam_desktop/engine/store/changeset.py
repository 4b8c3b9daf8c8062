"""All writes of one operation, applied together or not at all.

The builder computes every LLM result first and describes the outcome as a
ChangeSet; nothing touches the folder until `apply`. If applying fails part way
(disk full, a read-only folder, a file locked by another program), every step
already taken is undone, so a failed operation leaves the folder as it was.

Undoing needs no space: a file replaced or deleted keeps a second name under
.gam/cache/undo (a hard link, made before the change) and a folder emptied away is moved
there, so putting either back is a rename. On a full disk, writing the old bytes again
would fail like the change did (and .gam_meta.json stayed changed after "nothing was
changed").
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.store import faults
from gam_desktop.engine.store.folder import APP_DIR, CACHE_DIR
from gam_desktop.engine.store.links import LinkedPathError, check_writable_path
from gam_desktop.engine.store.markdown import README
from gam_desktop.engine.store.ownwrites import OWN_WRITES
from gam_desktop.engine.store.portable import is_case_only, rename_case

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
    keep_journal = False  # the operation's journal goes: nothing is left to recover


class PutBackError(StoreError):
    """Writing failed, and some of what was already written could not be put back: the
    folder is part changed. The operation's journal stays, so the next one asks for
    recovery (which puts the last saved state back) instead of committing the app's
    half-undone writes as the person's "Manual edits"."""

    title = "The memory folder was left part changed"
    advice = (
        "Free some space or close the program holding the file, then reopen the memory (or "
        "run gam-history recover --restore) to put back its last saved state."
    )
    keep_journal = True

    def __init__(self, code: int | None, what: str, failed: list[str]) -> None:
        """`what` failed (said without "nothing was changed"); `failed`: what Applied.undo
        could not put back."""
        more = f"; and {len(failed) - 3} more" if len(failed) > 3 else ""
        super().__init__(
            code or errno.EIO,
            f"{what}, and could not put everything back: {'; '.join(failed[:3])}{more}. "
            "Recover before the next change: reopen the memory, or run gam-history recover "
            "--restore",
        )


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
                _move(root, old, new, applied)
            for rel in sorted(self.writes, key=_write_order):
                _write(root, rel, self.writes[rel], applied)
            for rel in self.deletes:
                _delete(root, rel, applied)
            applied.paths = self.targets()
            applied.paths |= _prune_empty_dirs(
                root,
                {p for pair in self.moves for p in pair[:1]} | set(self.deletes),
                applied,
            )
        except OSError as exc:
            failed = applied.undo()
            if failed:
                what = f"could not write the memory folder ({exc.strerror or exc})"
                raise PutBackError(exc.errno, what, failed) from exc
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


UNDO_DIR = f"{CACHE_DIR}/undo"  # the old versions an applied change set may put back
NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


@dataclass
class Applied:
    """The undo steps of an applied change set: used when a later step of the same
    operation (its commit) fails, so that the operation still changes nothing. Once the
    change is final, `discard` drops the old versions kept for it (so does forgetting the
    Applied: callers that never undo need not say so)."""

    steps: list[Callable[[], None]] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)  # every file written, moved or deleted
    # The old versions kept under UNDO_DIR (files, and folders emptied away), and the
    # folders made to hold them: removed by `discard` or once put back.
    kept: list[Path] = field(default_factory=list)
    made: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        weakref.finalize(self, _forget, self.kept, self.made)

    def undo(self) -> list[str]:
        """Put everything back; returns what could not be (each as "<path> (<reason>)"),
        whose old version, if any, stays under UNDO_DIR."""
        failed = []
        for step in reversed(self.steps):
            try:
                step()
            except OSError as exc:
                failed.append(f"{exc.filename or '?'} ({exc.strerror or exc})")
        self.steps.clear()
        if failed:  # what could not go back is never removed
            self.kept[:] = [p for p in self.kept if not os.path.lexists(p)]
        _forget(self.kept, self.made)
        return failed

    def discard(self) -> None:
        """The change is final (committed): the old versions are no longer needed."""
        self.steps.clear()
        _forget(self.kept, self.made)


def _forget(kept: list[Path], made: list[Path]) -> None:
    for path in kept:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                retry_sharing(path.rmdir)
            elif os.path.lexists(path):
                retry_sharing(path.unlink)
    kept.clear()
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            retry_sharing(folder.rmdir)
    made.clear()


def clear_undo(root: Path) -> None:
    """Remove old versions a process that died left under UNDO_DIR (called when no
    operation runs and none awaits recovery; its journal says what to put back, from git)."""
    with contextlib.suppress(LinkedPathError, OSError):
        folder = check_writable_path(root, UNDO_DIR)
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _undo_folder(root: Path, applied: Applied) -> Path | None:
    """UNDO_DIR, made if missing (before anything is changed: if there is no space for it,
    nothing was); None when a link leads there (nothing is written through links)."""
    try:
        folder = check_writable_path(root, UNDO_DIR)
    except LinkedPathError:
        return None
    missing = []
    current = folder
    while current != root and not current.is_dir():
        missing.append(current)
        current = current.parent
    for made in reversed(missing):
        made.mkdir()
        applied.made.append(made)
    return folder


def _aside(folder: Path) -> Path:
    return folder / f"{os.getpid()}-{uuid.uuid4().hex}"


def _keep_old(root: Path, target: Path, applied: Applied) -> Path | None:
    """A second name for the file `target` under UNDO_DIR before it is replaced: a hard
    link (no data copied), or a copy where the file system has no hard links (FAT, exFAT,
    some shares). Made before the change, so that a full disk stops the change, never its
    undo. None when UNDO_DIR cannot be used (a link)."""
    folder = _undo_folder(root, applied)
    if folder is None:
        return None
    kept = _aside(folder)
    try:
        os.link(target, kept)
    except OSError as exc:
        if exc.errno in NO_SPACE:
            raise
        try:
            shutil.copy2(target, kept)  # no space for it: the change stops here, undone
        except BaseException:
            kept.unlink(missing_ok=True)
            raise
    applied.kept.append(kept)
    return kept


def _move_old(root: Path, target: Path, applied: Applied) -> Path | None:
    """Move `target` (a file, or an empty folder) under UNDO_DIR, as deleting it would
    remove it: a rename, put back by a rename. None when it cannot be moved there (a link
    leads to UNDO_DIR, or another file system: then it is deleted as before)."""
    folder = _undo_folder(root, applied)
    if folder is None:
        return None
    kept = _aside(folder)
    try:
        retry_sharing(lambda: os.rename(target, kept))
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            return None
        raise
    applied.kept.append(kept)
    return kept


def _put_back(kept: Path, target: Path) -> None:
    """Rename the old version `kept` back to `target` (no space needed)."""
    data = kept.read_bytes() if kept.is_file() else None
    try:
        retry_sharing(lambda: os.replace(kept, target))
    except OSError as exc:
        if exc.errno != errno.EXDEV or data is None:  # a mount inside the memory: copied
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        atomic_write(target, data)
        kept.unlink()
    if data is None:
        OWN_WRITES.note_directory(target.resolve())
    else:
        OWN_WRITES.note(target.resolve(), data)


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


def _write(root: Path, rel: str, data: str | bytes, applied: Applied) -> None:
    target = check_writable_path(root, rel)
    _make_dirs(root, Path(rel).parent, applied.steps)
    if not target.is_file():
        atomic_write(target, data)
        applied.steps.append(lambda: retry_sharing(target.unlink))
    elif (kept := _keep_old(root, target, applied)) is not None:
        try:
            atomic_write(target, data)
        except BaseException:
            applied.kept.remove(kept)
            kept.unlink(missing_ok=True)
            raise
        applied.steps.append(functools.partial(_put_back, kept, target))
    else:  # UNDO_DIR is a link: the old bytes in memory (putting them back needs space)
        previous = target.read_bytes()
        atomic_write(target, data)
        applied.steps.append(lambda: atomic_write(target, previous))
    faults.reached("write")


def _move(root: Path, old: str, new: str, applied: Applied) -> None:
    source, target = check_writable_path(root, old), check_writable_path(root, new)
    case_only = is_case_only(source, target)  # Projects/x.md -> projects/x.md on NTFS, APFS
    if target.exists() and not case_only:
        raise FileExistsError(17, "target exists", str(target))
    _make_dirs(root, Path(new).parent, applied.steps)
    if case_only:
        retry_sharing(lambda: rename_case(root, source, target))
        applied.steps.append(lambda: rename_case(root, target, source))
    else:
        retry_sharing(lambda: shutil.move(source, target))
        applied.steps.append(lambda: _move_back(target, source))
    OWN_WRITES.note_deleted(source.resolve())
    OWN_WRITES.note(target.resolve(), target.read_bytes())
    faults.reached("write")


def _move_back(target: Path, source: Path) -> None:
    source.parent.mkdir(parents=True, exist_ok=True)  # pruned meanwhile, maybe
    retry_sharing(lambda: shutil.move(target, source))


def _delete(root: Path, rel: str, applied: Applied) -> None:
    target = check_writable_path(root, rel)
    if not target.is_file():
        return
    kept = _move_old(root, target, applied)
    if kept is not None:
        applied.steps.append(functools.partial(_put_back, kept, target))
    else:
        previous = target.read_bytes()
        retry_sharing(target.unlink)
        applied.steps.append(lambda: atomic_write(target, previous))
    OWN_WRITES.note_deleted(target.resolve())


def _remove_dir(root: Path, folder: Path, applied: Applied) -> None:
    """Remove the emptied `folder`: moved under UNDO_DIR (making it again would need
    space), or removed where it cannot be moved there."""
    kept = _move_old(root, folder, applied)
    if kept is None:
        retry_sharing(folder.rmdir)
        applied.steps.append(functools.partial(folder.mkdir, parents=True, exist_ok=True))
        return
    if any(kept.iterdir()):  # something was saved in it meanwhile: it stays where it was
        _put_back(kept, folder)
        applied.kept.remove(kept)
        raise OSError(errno.ENOTEMPTY, "Directory not empty", str(folder))
    applied.steps.append(functools.partial(_put_back, kept, folder))


def _prune_empty_dirs(root: Path, vacated: set[str], applied: Applied) -> set[str]:
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
                _delete(root, child.relative_to(root).as_posix(), applied)
                removed.add(child.relative_to(root).as_posix())
            _remove_dir(root, folder, applied)
            OWN_WRITES.note_deleted(folder.resolve())
            folder = folder.parent
    return removed
