"""One window per memory: a lock file in the memory's .gam folder, held for as long as a
window has the memory open (another window, or another app instance, is refused)."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from gam_desktop.engine.store.folder import APP_DIR, APP_LOCK_FILE, MemoryFolder


class FolderInUse(RuntimeError):
    """The memory is open in another GAM Desktop window."""


class AppLock:
    """The lock of the memory this window has open, if any."""

    def __init__(self) -> None:
        self.lock: FileLock | None = None

    def hold(self, folder: MemoryFolder) -> None:
        """Take `folder`'s lock (and let go of the previous memory's); FolderInUse when
        another window holds it, OSError when the folder cannot be written."""
        folder.root.mkdir(parents=True, exist_ok=True)
        (folder.root / APP_DIR).mkdir(exist_ok=True)
        path = folder.root / APP_LOCK_FILE
        if self.lock is not None and Path(self.lock.lock_file) == path:
            return  # this window holds it already (re-opening after Settings, say)
        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout as exc:
            raise FolderInUse(
                f"{folder.root} is open in another GAM Desktop window. Switch "
                "to that window, or close it first."
            ) from exc
        if self.lock is not None:
            self.lock.release()
        self.lock = lock

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
