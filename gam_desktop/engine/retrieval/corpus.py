"""The Markdown files of a memory, known by stat; their text read when asked.

The corpus keeps what each file was when last seen (its size and mtime), not its text:
at 100,000 memories the texts (memories and their original wording) are 300 MB. Texts
are read when asked and the last few megabytes of them kept. `refresh()` walks the tree
(or stats only the paths it is given: what the watcher or an operation says changed);
the search index (search.py) compares the stats with those it indexed and re-reads only
files that changed, so grep and BM25 never read 100,000 files per call.

Two resolutions of every memory are searchable: the memory itself and its original
wording (the span of its source text in .gam/sources, named by its front matter).
The original is reached under `<memory path>#original`, so a hit on it says which memory
it belongs to; a summary that dropped a fact does not hide it from search. Originals are
reached through their memory: they are not listed by iteration.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from gam_desktop.engine.retrieval.sandbox import read_regular_text
from gam_desktop.engine.store.folder import SOURCES_DIR, stat_files
from gam_desktop.engine.store.links import is_absent, is_real_dir, resolve_within
from gam_desktop.engine.store.markdown import front_value

ORIGINAL = "#original"  # suffix of the key of a memory's original text
TEXT_CACHE_CHARS = 32_000_000  # the texts kept after reading (memories and sources)
# A memory file is read (and indexed, searched) up to this many characters, as `cat` reads
# only what it shows: a note is a few thousand, a long conversation a few hundred thousand;
# a 400 MB file another program put in the folder took gigabytes to index whole (issue 36).
READ_LIMIT = 8_000_000
LOGGED_GENERATIONS = 64  # the last changes the search index can catch up with, path by path
LOGGED_CHANGES = 5_000  # a change of more files is logged as "many": compare them all
_SOURCE_HASH = re.compile(r"[0-9a-f]{64}")
_SPAN = re.compile(r"\[\s*(\d{1,15})\s*,\s*(\d{1,15})\s*\]")
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t]*$", re.MULTILINE)


def memory_of(key: str) -> str:
    """The memory file a corpus key belongs to (itself, or the memory of an original)."""
    return key.removesuffix(ORIGINAL)


def is_original(key: str) -> bool:
    return key.endswith(ORIGINAL)


def document_of(memory_text: str) -> str | None:
    """The source document a memory's front matter names ("acme-refunds.md"), if any."""
    return front_value(memory_text, "source")


def reader_name(document: str) -> str:
    """A document's file name as a reader names it: "acme-refunds.md" is "Acme refunds"."""
    words = re.sub(r"[-_\s]+", " ", document.rsplit(".", 1)[0]).strip()
    return words[:1].upper() + words[1:] if words else document


def title_of(path: str, text: str) -> str:
    """A file's title: its front matter's (a fact's statement), a README's heading, else
    its name. Read as one line (`front_value`): parsing the YAML of 10,000 files would
    cost seconds."""
    title = front_value(text, "title") or front_value(text, "statement")
    if title:
        return title
    if path.rsplit("/", 1)[-1] == "README.md":
        heading = _HEADING.search(text[:2000])
        if heading:
            return heading.group(1)
    return _name(path)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _span_of(memory_text: str) -> tuple[str, int, int] | None:
    """The content hash of a memory's source and the span of it the memory covers."""
    digest, span = front_value(memory_text, "source_hash"), front_value(memory_text, "span")
    if digest is None or span is None or not _SOURCE_HASH.fullmatch(digest):
        return None
    found = _SPAN.fullmatch(span)
    return (digest, int(found.group(1)), int(found.group(2))) if found else None


class CorpusFile:
    """A file as last seen (size, mtime); its text is read from the folder when asked."""

    __slots__ = ("_corpus", "_key", "mtime_ns", "size")

    def __init__(self, mtime_ns: int, size: int, corpus: Corpus, key: str) -> None:
        self.mtime_ns, self.size, self._corpus, self._key = mtime_ns, size, corpus, key

    @property
    def text(self) -> str:
        return self._corpus.text(self._key) or ""


class Texts(Mapping[str, CorpusFile]):
    """The corpus's files at one moment, by key: the memory files (iterated) and their
    originals (looked up by key, which reads the memory's front matter)."""

    def __init__(self, corpus: Corpus, files: dict[str, CorpusFile]) -> None:
        self._corpus, self._files = corpus, files

    def __getitem__(self, key: str) -> CorpusFile:
        if is_original(key):
            memory = self._files.get(memory_of(key))
            if memory is not None and self._corpus.text(key) is not None:
                return CorpusFile(memory.mtime_ns, memory.size, self._corpus, key)
        elif key in self._files:
            return self._files[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class Corpus:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.files: dict[str, CorpusFile] = {}  # POSIX path relative to root -> memory file
        self.generation = 0  # bumped whenever a file appeared, changed or went away
        self.refreshed_at = float("-inf")
        # True while a watcher reports every outside edit (and operations their own): then
        # only a change reported makes the next look walk the tree, not passing time.
        self.watched: Callable[[], bool] = lambda: False
        self._lock = threading.RLock()
        self._texts: OrderedDict[str, str | None] = OrderedDict()  # recently read texts
        self._cached_chars = 0
        self._log: list[tuple[int, frozenset[str] | None]] = []  # (generation, what changed)
        self._sorted: list[str] | None = None  # the paths in order, made when asked
        self._walk_seconds = 0.0  # how long the last walk of the tree took

    def refresh_if_stale(self, max_age: float = 2.0) -> None:
        """Refresh unless that was done in the last `max_age` seconds, or ten times as long
        as a walk of the tree takes (a question's tool calls share one walk instead of one
        each; at 100,000 files a walk takes most of a second), or, while watched, unless
        a change was reported."""
        stale = self.refreshed_at == float("-inf")
        age = max(max_age, 10 * self._walk_seconds) if max_age else 0
        if stale or (time.monotonic() - self.refreshed_at > age and not self.watched()):
            self.refresh()

    def refresh(self, paths: Iterable[str] | None = None) -> int:
        """Re-stat the tree, or only `paths` (files or folders, relative); forget the text
        of what changed. Returns how many files changed."""
        with self._lock:
            if paths is None or self.refreshed_at == float("-inf"):
                started = time.monotonic()
                seen, scope = stat_files(self.root), None
                self._walk_seconds = time.monotonic() - started
            else:
                seen, scope = self._stat_paths(paths)
            changed = self._gone(seen, scope)
            for rel in changed:
                del self.files[rel]
            for rel, stat in seen.items():
                known = self.files.get(rel)
                if known and known.mtime_ns == stat.st_mtime_ns and known.size == stat.st_size:
                    continue
                if known is None:
                    self._sorted = None
                self.files[rel] = CorpusFile(stat.st_mtime_ns, stat.st_size, self, rel)
                changed.append(rel)
            for rel in changed:
                self._forget(rel)
            if changed:
                self._note(changed)
            if paths is None or scope is None:
                self.refreshed_at = time.monotonic()
            return len(changed)

    def _note(self, changed: list[str]) -> None:
        """A new generation, and what changed in it (a walk's thousands: not listed)."""
        self.generation += 1
        listed = frozenset(changed) if len(changed) <= LOGGED_CHANGES else None
        self._log = [*self._log[-(LOGGED_GENERATIONS - 1) :], (self.generation, listed)]

    def changed_since(self, generation: int) -> set[str] | None:
        """The paths that changed after `generation`, or None when that is not known (too
        long ago, or too many): then compare every file."""
        with self._lock:
            if generation == self.generation:
                return set()
            later = [listed for g, listed in self._log if g > generation]
            if len(later) != self.generation - generation or any(x is None for x in later):
                return None
            return set().union(*later)  # type: ignore[arg-type]

    def _gone(self, seen: dict[str, os.stat_result], scope: set[str] | None) -> list[str]:
        """The files known before and not seen now, among those looked at (`scope`: the
        paths stat'ed, files or folders; None: the whole tree)."""
        if scope is None:
            gone = [rel for rel in self.files if rel not in seen]
        else:
            gone = [rel for rel in scope if rel in self.files and rel not in seen]
            for folder in (rel for rel in scope if rel not in self.files):
                gone += [r for r in self.below(folder) if r not in seen]  # moved or deleted
        if gone:
            self._sorted = None
        return gone

    def _stat_paths(self, paths: Iterable[str]) -> tuple[dict[str, os.stat_result], set[str]]:
        """The Markdown files at or below `paths` as the walk would find them, and the
        paths themselves (what was looked at: files there and not seen are gone)."""
        seen: dict[str, os.stat_result] = {}
        scope = {p.strip("/") for p in paths if p.strip("/")}
        for rel in scope:
            parts = rel.split("/")
            path = self.root.joinpath(*parts)
            if any(part.startswith(".") for part in parts) or is_absent(self.root, path):
                continue  # hidden, or a link out: absent, as in a walk
            if any(not is_real_dir(self.root.joinpath(*parts[:i])) for i in range(1, len(parts))):
                continue  # gone, or inside a linked folder (never walked into)
            if is_real_dir(path):
                seen.update(stat_files(self.root, rel))
            elif rel.endswith(".md") and path.is_file():
                seen[rel] = path.stat()
        return seen, scope

    def mark_stale(self) -> None:
        """Something changed: the next refresh_if_stale walks the tree again (re-reading
        only files whose size or mtime changed)."""
        self.refreshed_at = float("-inf")

    def under(self, prefix: str) -> list[tuple[str, CorpusFile]]:
        """(key, file) of the files below the folder `prefix` ("" for all) and their
        originals, sorted by key (this reads each memory's front matter: meant for a
        folder, not the whole memory)."""
        texts = self.snapshot()
        found = []
        for rel in self.below(prefix):
            if rel in texts:
                found.append((rel, texts[rel]))
                if rel + ORIGINAL in texts:
                    found.append((rel + ORIGINAL, texts[rel + ORIGINAL]))
        return sorted(found, key=lambda pair: pair[0])

    def below(self, prefix: str) -> list[str]:
        """The paths of the files below the folder `prefix` ("" for all), sorted."""
        with self._lock:
            if self._sorted is None:
                self._sorted = sorted(self.files)
            paths = self._sorted
        prefix = prefix.strip("/")
        if not prefix:
            return paths
        start = bisect.bisect_left(paths, f"{prefix}/")
        return paths[start : bisect.bisect_left(paths, f"{prefix}0", start)]  # "0" follows "/"

    def stats(self, paths: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every file as last seen (or of those of `paths` that are
        there), by path."""
        with self._lock:
            files = self.files
            if paths is None:
                return {rel: (f.mtime_ns, f.size) for rel, f in files.items()}
            return {rel: (f.mtime_ns, f.size) for rel in paths if (f := files.get(rel))}

    def snapshot(self) -> Texts:
        """The file table at this moment: the watcher's thread may be refreshing it. A
        corpus never read is read first (a new process's table is empty until then)."""
        with self._lock:
            if self.refreshed_at == float("-inf"):
                self.refresh()
            return Texts(self, dict(self.files))

    # -- texts --------------------------------------------------------------------------

    def text(self, key: str, fresh: bool = False) -> str | None:
        """The text of a memory file or of a memory's original (None: no such file, or a
        memory without an original), read from the folder unless read lately (or always,
        with `fresh`: what the index reads, so that a read in flight while the file changed
        never leaves it the old text)."""
        with self._lock:
            if key in self._texts and not fresh:
                self._texts.move_to_end(key)
                return self._texts[key]
        if is_original(key):
            memory = self.text(memory_of(key), fresh)
            text = self._original(memory) if memory is not None else None
        else:
            text = self._read(self.root / key, READ_LIMIT)
        self._keep(key, text, replace=fresh)
        return text

    def _read(self, path: Path, limit: int = -1) -> str | None:
        try:
            # (-1: whole; a file swapped for a named pipe since the walk: None, not waited on)
            return read_regular_text(path, limit)
        except OSError:  # gone meanwhile (the next refresh notices)
            return None

    def _keep(self, key: str, text: str | None, replace: bool = False) -> None:
        with self._lock:
            if key in self._texts:
                if not replace:
                    return
                self._cached_chars -= len(self._texts.pop(key) or "") + 64
            self._texts[key] = text
            self._cached_chars += len(text or "") + 64
            while self._cached_chars > TEXT_CACHE_CHARS and len(self._texts) > 1:
                _, old = self._texts.popitem(last=False)
                self._cached_chars -= len(old or "") + 64

    def _forget(self, rel: str) -> None:
        for key in (rel, rel + ORIGINAL):
            if key in self._texts:
                self._cached_chars -= len(self._texts.pop(key) or "") + 64

    def _original(self, memory_text: str) -> str | None:
        """The memory's original wording, from the span its front matter names (its lines
        read alone: parsing YAML for 10,000 files would cost seconds)."""
        found = _span_of(memory_text)
        if found is None:
            return None
        digest, start, end = found
        source = self._source(digest)
        original = source[start:end] if source else ""
        if not original:
            return None
        # Contextual retrieval: the passage is indexed under its memory's title and source,
        # or a middle section that never names its company would not be found by the name.
        named = (front_value(memory_text, "source"), front_value(memory_text, "title"))
        header = " — ".join(value for value in named if value)
        return f"[{header}]\n{original}" if header else original

    def source_of(self, memory: str) -> tuple[str, str, int, int] | None:
        """Where a memory's original wording comes from: its document's name and content
        hash, and the span of that document it covers (None: no such span)."""
        text = self.text(memory) or ""
        name, found = front_value(text, "source"), _span_of(text)
        if not name or found is None:
            return None
        return name, *found

    def source(self, digest: str) -> str | None:
        """A source document's whole text, by its content hash."""
        return self._source(digest) if re.fullmatch(r"[0-9a-f]{64}", digest) else None

    def _source(self, digest: str) -> str | None:
        """A source document's text (content-addressed: it never changes once written)."""
        key = f"{SOURCES_DIR}/{digest}"
        with self._lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return self._texts[key]
        path = self.root / SOURCES_DIR / f"{digest}.txt"
        # Only a file of .gam/sources itself: a link from there into .git, or a .gam/sources
        # that is a link, is absent like a link out of the folder.
        resolved = resolve_within(self.root, path)
        inside = resolved is not None and resolved.parent == self.root / SOURCES_DIR
        text = self._read(path) if inside else None
        if text is not None:  # missing now, maybe written by the operation running
            self._keep(key, text)
        return text
