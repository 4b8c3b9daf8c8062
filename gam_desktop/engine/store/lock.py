"""One writer per memory folder at a time, across processes.

A file lock in `.gam/lock`: a second writer (another app window, a `gam-add` in a
terminal) waits up to `timeout` seconds, then gets a clear error. The lock is
taken for the whole operation, LLM calls included, so that two adds never plan
against the same stale state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from filelock import FileLock, Timeout

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store.folder import LOCK_FILE, MemoryFolder


class FolderBusyError(GamError, RuntimeError):
    """Another operation holds the memory folder."""

    title = "The memory is busy"
    advice = "Another operation is still writing it; try again when it has finished."


@contextlib.contextmanager
def writer_lock(
    folder: MemoryFolder, timeout: float = 600.0, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    folder.check_writable()
    lock = FileLock(folder.root / LOCK_FILE, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait:
            on_wait()
        try:
            lock.acquire(timeout=timeout)
        except Timeout as exc:
            raise FolderBusyError(
                f"another GAM operation is still writing {folder.root}; "
                "try again when it has finished"
            ) from exc
    try:
        yield
    finally:
        lock.release()
