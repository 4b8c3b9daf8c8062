"""Watching a memory folder for edits made outside the app (watchdog).

Editors save in bursts (temp file, rename, chmod), so events are coalesced: each
one restarts a short timer and the batch is reported when the folder has been
quiet for `delay` seconds. `.git/`, `.gam/`, hidden and temporary files are
ignored; a rename reports its destination; the app's own writes are recognised
by content (OWN_WRITES) and dropped.

Notifications can be lost: Windows' ReadDirectoryChangesW drops every change when its
buffer overflows and watchdog says nothing (gorakhargosh/watchdog#1019), and network
folders may notify nothing at all. So every `rescan_every` seconds the watcher also asks
`rescan` (git status, in practice) which files changed, and reports those like events.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
import warnings
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from gam_desktop.engine.store.links import PRIVATE
from gam_desktop.engine.store.ownwrites import OWN_WRITES, OwnWrites, path_key

log = logging.getLogger(__name__)
# watchdog's inotify backend warns when git re-creates a folder inside .git/ that it already
# watched; the events there are dropped by is_interesting anyway.
warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
_TEMP_SUFFIXES = ("~", ".tmp", ".swp", ".swx", ".part", ".crdownload")


def relative_parts(root: Path, path: Path) -> tuple[str, ...] | None:
    """`path`'s parts below `root` (NFC), compared as APFS and NTFS compare names: an
    event path in NFD or in another case than the one the folder was opened with is still
    inside. None when it is not below `root`."""
    above, parts = root.parts, path.parts
    if len(parts) <= len(above):
        return None
    if [path_key(p) for p in parts[: len(above)]] != [path_key(p) for p in above]:
        return None
    return tuple(unicodedata.normalize("NFC", p) for p in parts[len(above) :])


def is_interesting(root: Path, raw: str | bytes) -> bool:
    path = Path(raw.decode() if isinstance(raw, bytes) else raw)
    parts = relative_parts(root, path)
    if not parts or any(p in PRIVATE or p.startswith(".") for p in parts):
        return False
    name = parts[-1]
    return not (name.endswith(_TEMP_SUFFIXES) or name == "4913" or name.startswith("#"))


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: FolderWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if event.is_directory and event.event_type == "modified":
            return  # a folder's mtime changing says nothing new
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw and is_interesting(self.watcher.root, raw):
                self.watcher.touch(Path(raw.decode() if isinstance(raw, bytes) else raw))


class FolderWatcher:
    """Reports sets of changed paths (relative, POSIX) after the folder goes quiet."""

    def __init__(
        self,
        root: str | Path,
        on_change: Callable[[list[str]], None],
        delay: float = 0.4,
        own_writes: OwnWrites = OWN_WRITES,
        rescan: Callable[[], list[str]] | None = None,
        rescan_every: float = 0.0,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_change = on_change
        self.delay = delay
        self.own_writes = own_writes
        self.rescan = rescan
        self.rescan_every = rescan_every
        self._stopping = threading.Event()
        self._rescanner: threading.Thread | None = None
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        if self._observer is not None:
            return
        self._observer = Observer()
        self._observer.schedule(_Handler(self), str(self.root), recursive=True)
        self._observer.daemon = True
        self._observer.start()
        if self.rescan is not None and self.rescan_every > 0:
            self._stopping.clear()
            self._rescanner = threading.Thread(target=self._rescan_loop, daemon=True)
            self._rescanner.start()

    def _rescan_loop(self) -> None:
        """What notifications missed, as if they had reported it (through `touch`, so
        it is coalesced and handled on the same path as events)."""
        assert self.rescan is not None
        while not self._stopping.wait(self.rescan_every):
            try:
                missed = self.rescan()
            except Exception:  # a failing rescan must not kill the watcher
                log.exception("rescanning the folder failed")
                continue
            with self._lock:  # already waiting to be reported: not a new change
                fresh = [self.root / rel for rel in missed if self.root / rel not in self._pending]
            for path in fresh:
                if is_interesting(self.root, str(path)):
                    self.touch(path)

    def stop(self) -> None:
        self._stopping.set()
        if self._rescanner is not None:
            self._rescanner.join(timeout=5)
            self._rescanner = None
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._pending.clear()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    @property
    def running(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def touch(self, path: Path) -> None:
        with self._lock:
            self._pending.add(path)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            pending, self._pending, self._timer = self._pending, set(), None
        changed = sorted(
            {
                "/".join(parts)
                for p in pending
                if not self.own_writes.is_own(p) and (parts := relative_parts(self.root, p))
            }
        )
        if changed:
            try:
                self.on_change(changed)
            except Exception:  # a failing listener must not kill the watcher
                log.exception("handling outside edits failed")
