"""What the app itself wrote, by content hash, so the watcher can tell it from a person.

Timing is unreliable (a slow disk, a busy machine); content is not: an event for a
file whose bytes hash to what the app last wrote there is the app's own.
"""

from __future__ import annotations

import hashlib
import threading
import time
import unicodedata
from pathlib import Path

_DELETED = "deleted"
_DIRECTORY = "directory"
_KEEP_SECONDS = 300.0


def path_key(path: str | Path) -> str:
    """A path as case-insensitive, normalization-insensitive file systems (APFS, NTFS)
    compare it: macOS reports events in NFD and in the case on disk, while the app holds
    the NFC path the person typed."""
    return unicodedata.normalize("NFC", str(path)).casefold()


class OwnWrites:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, float]] = {}

    def note(self, path: Path, data: bytes) -> None:
        self._put(path, hashlib.sha256(data).hexdigest())

    def note_deleted(self, path: Path) -> None:
        self._put(path, _DELETED)

    def note_directory(self, path: Path) -> None:
        self._put(path, _DIRECTORY)

    def _put(self, path: Path, value: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._entries[path_key(path)] = (value, now)
            if len(self._entries) > 50_000:  # forget old entries, keep memory bounded
                self._entries = {
                    k: v for k, v in self._entries.items() if now - v[1] < _KEEP_SECONDS
                }

    def is_own(self, path: Path) -> bool:
        """Whether the file is exactly as the app left it (or gone, as the app left it)."""
        with self._lock:
            entry = self._entries.get(path_key(path))
        if entry is None:
            return False
        if entry[0] == _DIRECTORY:
            return path.is_dir()
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return entry[0] == _DELETED
        except OSError:
            return False
        return entry[0] == hashlib.sha256(data).hexdigest()


OWN_WRITES = OwnWrites()
