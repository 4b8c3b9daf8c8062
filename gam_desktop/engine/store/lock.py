"""One writer per memory folder at a time, across processes.

A file lock in `.gam/lock`: a second writer (another app window, a `gam-add` in a
terminal) waits up to `timeout` seconds, then gets a clear error. The lock is
taken for the whole operation, LLM calls included, so that two adds never plan
against the same stale state.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store.folder import LOCK_FILE, MemoryFolder
from gam_desktop.engine.store.links import LinkedPathError


class FolderBusyError(GamError, RuntimeError):
    """Another operation holds the memory folder."""

    title = "The memory is busy"
    advice = "Another operation is still writing it; try again when it has finished."


class LinkedLockError(LinkedPathError):
    """The lock file is a link (or not a file at all): the lock is never taken through it."""

    title = "The memory's lock file cannot be used"
    advice = "Delete the file named in the message (the app makes it again), then try again."


def _not_a_lock(path: Path) -> LinkedLockError:
    if path.is_symlink():
        try:
            target = f" to {os.readlink(path)}"
        except OSError:
            target = ""
        return LinkedLockError(
            errno.ELOOP,
            f"the memory's lock file {path} is a link{target}, and the app never writes "
            f"through a link. Delete the link {path} (only the link: the app keeps nothing "
            "in it and makes a plain lock file again), then try again",
        )
    return LinkedLockError(
        errno.EEXIST,
        f"the memory's lock file {path} is not a plain file. Move or delete {path} (the app "
        "keeps nothing there but its lock and makes it again), then try again",
    )


def check_lock_file(folder: MemoryFolder) -> None:
    """Refuse before any work (any LLM call) a lock file the operation could not take."""
    _check_lock_file(folder.root / LOCK_FILE)


def _check_lock_file(path: Path) -> None:
    """Refuse a lock file that is a link (to a file elsewhere, a loop, nothing) or not a
    regular file: some filelock versions open it following the link, truncating its target
    or creating one outside the memory; newer ones fail with "Too many levels of symbolic
    links", naming nothing to do."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise _not_a_lock(path)


@contextlib.contextmanager
def writer_lock(
    folder: MemoryFolder, timeout: float = 600.0, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    folder.check_writable()
    path = folder.root / LOCK_FILE
    _check_lock_file(path)
    lock = FileLock(path, thread_local=False)
    try:
        _acquire(lock, path, 0)
    except Timeout:
        if on_wait:
            on_wait()
        try:
            _acquire(lock, path, timeout)
        except Timeout as exc:
            raise FolderBusyError(
                f"another GAM operation is still writing {folder.root}; "
                "try again when it has finished"
            ) from exc
    try:
        yield
    finally:
        lock.release()


def _acquire(lock: FileLock, path: Path, timeout: float) -> None:
    """`lock.acquire`, a link made meanwhile (between the check and the open) told as such."""
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise _not_a_lock(path) from exc
        raise
