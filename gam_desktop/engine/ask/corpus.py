"""The text of every Markdown file in a memory, kept in memory and refreshed by stat.

grep and BM25 would otherwise read 10,000 files per call. `refresh()` walks the
tree once and re-reads only files whose size or mtime changed; the watcher (or
anyone who knows better) can `mark_stale()` so the next look walks the tree again.

Two resolutions of every memory are searchable: the memory itself and its original
wording (the span of its source text in .gam/sources, named by its front matter).
The original is kept under `<memory path>#original`, so a hit on it says which memory
it belongs to; a summary that dropped a fact does not hide it from search.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gam_desktop.engine.store.folder import SOURCES_DIR, stat_files
from gam_desktop.engine.store.links import resolve_within

ORIGINAL = "#original"  # suffix of the key of a memory's original text
_SOURCE_HASH = re.compile(r"^source_hash:\s*'?([0-9a-f]{64})'?\s*$", re.MULTILINE)
_TITLE = re.compile(r"^title:\s*(.+)$", re.MULTILINE)
_SOURCE = re.compile(r"^source:\s*(.+)$", re.MULTILINE)
_SPAN = re.compile(r"^span:\s*\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*$", re.MULTILINE)


def memory_of(key: str) -> str:
    """The memory file a corpus key belongs to (itself, or the memory of an original)."""
    return key.removesuffix(ORIGINAL)


def is_original(key: str) -> bool:
    return key.endswith(ORIGINAL)


def document_of(memory_text: str) -> str | None:
    """The source document a memory's front matter names ("acme-oncall.md"), if any."""
    found = _SOURCE.search(memory_text[: memory_text.find("\n---", 3)])
    return found.group(1).strip("'\" ") if found and memory_text.startswith("---") else None


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
        self._sources: dict[str, str] = {}  # source hash -> text (content-addressed: final)

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
                if memory_of(rel) not in seen:
                    del self.files[rel]
                    changed += 1
            for rel, stat in seen.items():
                known = self.files.get(rel)
                if known and known.mtime_ns == stat.st_mtime_ns and known.size == stat.st_size:
                    continue
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
                self.files[rel] = CorpusFile(stat.st_mtime_ns, stat.st_size, text)
                original = self._original(text)
                if original:
                    self.files[rel + ORIGINAL] = CorpusFile(
                        stat.st_mtime_ns, stat.st_size, original
                    )
                else:
                    self.files.pop(rel + ORIGINAL, None)
                changed += 1
            if changed:
                self.generation += 1
            self.refreshed_at = time.monotonic()
            return changed

    def _original(self, memory_text: str) -> str | None:
        """The memory's original wording, from the span its front matter names (read with
        two regular expressions: parsing YAML for 10,000 files would cost seconds)."""
        front = memory_text[: memory_text.find("\n---", 3)] if memory_text.startswith("---") else ""
        digest, span = _SOURCE_HASH.search(front), _SPAN.search(front)
        if not digest or not span:
            return None
        source = self._sources.get(digest.group(1))
        if source is None:
            path = self.root / SOURCES_DIR / f"{digest.group(1)}.txt"
            if resolve_within(self.root, path) is None:  # missing, or a link out
                return None
            source = path.read_text(encoding="utf-8", errors="replace")
            self._sources[digest.group(1)] = source
        original = source[int(span.group(1)) : int(span.group(2))]
        if not original:
            return None
        # Contextual retrieval: the passage is indexed under its memory's title and source,
        # or a middle section that never names its company would not be found by the name.
        title, name = _TITLE.search(front), _SOURCE.search(front)
        header = " — ".join(m.group(1).strip("'\" ") for m in (name, title) if m)
        return f"[{header}]\n{original}" if header else original

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
