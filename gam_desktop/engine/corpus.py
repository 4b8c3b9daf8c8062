"""The text of every Markdown file in a memory, kept in memory and refreshed by stat.

grep and BM25 would otherwise read 10,000 files per call. `refresh()` walks the
tree once and re-reads only files whose size or mtime changed; the watcher (or
anyone who knows better) can `mark_stale()` so the next look walks the tree again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gam_desktop.engine.folder import stat_files


@dataclass
class CorpusFile:
    mtime_ns: int
    size: int
    text: str
    lower: str = ""  # kept so grep tests a whole file with one substring search

    def __post_init__(self) -> None:
        self.lower = self.lower or self.text.lower()


class Corpus:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.files: dict[str, CorpusFile] = {}  # POSIX path relative to root -> file
        self.generation = 0  # bumped whenever the set of texts changed
        self.refreshed_at = float("-inf")
        self._lock = threading.Lock()

    def refresh_if_stale(self, max_age: float = 2.0) -> None:
        """Refresh unless that was done in the last `max_age` seconds: a question's tool
        calls share one walk of the tree instead of one each (90 ms at 10k files)."""
        if time.monotonic() - self.refreshed_at > max_age:
            self.refresh()

    def refresh(self) -> int:
        """Re-stat the tree; re-read changed files. Returns how many changed."""
        with self._lock:
            seen = stat_files(self.root)
            changed = 0
            for rel in list(self.files):
                if rel not in seen:
                    del self.files[rel]
                    changed += 1
            for rel, stat in seen.items():
                known = self.files.get(rel)
                if known and known.mtime_ns == stat.st_mtime_ns and known.size == stat.st_size:
                    continue
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
                self.files[rel] = CorpusFile(stat.st_mtime_ns, stat.st_size, text)
                changed += 1
            if changed:
                self.generation += 1
            self.refreshed_at = time.monotonic()
            return changed

    def mark_stale(self) -> None:
        """Something changed: the next refresh_if_stale walks the tree again (re-reading
        only files whose size or mtime changed)."""
        self.refreshed_at = float("-inf")

    def under(self, prefix: str) -> list[tuple[str, CorpusFile]]:
        """(path, file) of files below `prefix` ("" for all), sorted by path."""
        prefix = prefix.strip("/")
        return sorted(
            (rel, f)
            for rel, f in self.snapshot().items()
            if not prefix or rel == prefix or rel.startswith(prefix + "/")
        )

    def snapshot(self) -> dict[str, CorpusFile]:
        """A copy of the file table: the watcher's thread may be refreshing it meanwhile."""
        with self._lock:
            return dict(self.files)
