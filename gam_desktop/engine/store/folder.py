"""The memory folder on disk: its layout, its metadata and a cheap view of its tree.

Layout (see README "The memory folder"):
  .gam_meta.json          counts, sources, model, chunk config, schema version
  .gam/sources/<sha>.txt  the extracted text of every source document: the original
                          wording of each memory is text[span] of its source
  .gam/cache/             rebuildable indexes (ignored by git)
  .gam/cache/results/     LLM results an unfinished add has paid for (store/results.py)
  .gam/serve-queue/       turns gam-serve answered, until saved (ignored by git)
  README.md, <dir>/README.md, <dir>/<title>.md

The view reads names and READMEs only; front matter is read per directory when a
stage needs it, so opening a 10k-memory folder stays cheap.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.models import META_FILE, GamMeta
from gam_desktop.engine.store.gitdir import check_repository
from gam_desktop.engine.store.links import is_absent, is_real_dir, reachable_file
from gam_desktop.engine.store.markdown import README, parse_memory, readme_heading
from gam_desktop.engine.store.naming import RESERVED_FOLDER_NAMES

APP_DIR = ".gam"  # the app's own files: the one place their layout is defined
SOURCES_DIR = f"{APP_DIR}/sources"
CACHE_DIR = f"{APP_DIR}/cache"
RESULTS_DIR = f"{CACHE_DIR}/results"  # paid LLM results, kept until their add is done
LOCK_FILE = f"{APP_DIR}/lock"  # one writer per folder, per operation
APP_LOCK_FILE = f"{APP_DIR}/app.lock"  # one window per memory, while it is open
JOURNAL_FILE = f"{APP_DIR}/journal.json"  # present only while an operation runs
# gam-serve's answered turns not yet written, one JSON file each (a kill loses none)
SERVE_QUEUE_DIR = f"{APP_DIR}/serve-queue"
UNTRACKED = (f"{CACHE_DIR}/", LOCK_FILE, APP_LOCK_FILE, JOURNAL_FILE, f"{SERVE_QUEUE_DIR}/")
# What the memory learned from its user (and the research it did for them) rather than from
# documents: kept out of the document taxonomy (never planned, reorganized or listed in a
# document folder's README).
CONVERSATIONS_DIR = "conversations"  # conversations/<yyyy-mm>/<date>-<slug>.md
FACTS_DIR = "facts"  # facts/<topic>/<statement>.md
DELETED_FACTS_DIR = f"{FACTS_DIR}/.deleted"  # updated and retracted facts, never destroyed
RESEARCH_DIR = "research"  # research/<date>-<slug>.md: saved research reports
PERSONAL_DIRS = (CONVERSATIONS_DIR, FACTS_DIR, RESEARCH_DIR)
assert frozenset(PERSONAL_DIRS) == RESERVED_FOLDER_NAMES  # no document folder takes them


class NotAMemoryError(GamError, ValueError):
    """The folder is not a GAM memory (no .gam_meta.json) and was not made one."""

    title = "This folder is not a memory"
    advice = "Choose an empty folder or an existing memory."


@dataclass
class DirView:
    path: str  # "" for the root, "a/b" below it
    title: str = ""
    description: str = ""
    subdirs: dict[str, DirView] = field(default_factory=dict)
    files: dict[str, str | None] = field(default_factory=dict)  # memory file -> tldr, if read
    # memory file -> its title as a reader sees it and its document's name, where read: a
    # README's description names each part as its title writes it, not as its file name
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)

    def child_path(self, name: str) -> str:
        return f"{self.path}/{name}" if self.path else name

    def walk(self) -> list[DirView]:
        return [self, *(d for sub in self.subdirs.values() for d in sub.walk())]

    # The memories below a folder whose contents were not read (MemoryFolder.shallow_view):
    # then `subdirs` and `files` are empty, not read.
    total: int | None = None

    def memory_count(self) -> int:
        if self.total is not None:
            return self.total
        return len(self.files) + sum(s.memory_count() for s in self.subdirs.values())


_HASH = re.compile(r"[0-9A-Za-z_-]{1,128}")  # a source's name (its text's hash): no path


def _is_span(span: object) -> TypeGuard[list[int]]:
    return isinstance(span, list) and len(span) == 2 and all(type(end) is int for end in span)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def stat_files(root: Path, below: str = "") -> dict[str, os.stat_result]:
    """Every visible Markdown file below `root` (links out, hidden names and linked
    folders left out), or only below its folder `below`, by POSIX path relative to
    `root`, with its stat."""
    seen: dict[str, os.stat_result] = {}
    _walk_markdown(root, root / below if below else root, below, seen)
    return seen


def _walk_markdown(root: Path, folder: Path, rel: str, seen: dict[str, os.stat_result]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or is_absent(root, entry):
            continue
        child = f"{rel}/{entry.name}" if rel else entry.name
        if is_real_dir(entry):
            _walk_markdown(root, Path(entry.path), child, seen)
        elif entry.name.endswith(".md") and entry.is_file():
            seen[child] = entry.stat()


# A folder's listing is trusted by its mtime only once that mtime is older than this: a
# file system stamps times coarsely (a kernel tick; FAT, 2 s), so a name added in the same
# tick as the listing would leave the mtime unchanged (git's "racy" entries).
SETTLED_NS = 3_000_000_000


class MemoryFolder:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        # folder -> (its mtime, the memories directly in it, its subfolders): a listing
        # `_count` need not read again while the folder's names are unchanged.
        self._listings: dict[Path, tuple[int, int, tuple[Path, ...]]] = {}

    @property
    def meta_path(self) -> Path:
        return self.root / META_FILE

    def is_memory(self) -> bool:
        return self.readable(self.meta_path)

    def read_meta(self) -> GamMeta | None:
        if not self.is_memory():
            return None
        return GamMeta.model_validate_json(self.meta_path.read_text(encoding="utf-8"))

    def check_writable(self) -> None:
        """Fail before any LLM call when the folder cannot be written."""
        if (self.root / APP_DIR).is_symlink():  # its lock, journal and cache would land there
            raise PermissionError(
                1,
                f"{self.root / APP_DIR} is a link; the app's own folder is never used through "
                "a link (replace it with a folder)",
            )
        # A .git leading out of the memory (its commits would land there) or a named pipe
        # (every git call would wait for it forever): refused, nothing written.
        check_repository(self.root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / APP_DIR).mkdir(exist_ok=True)
            with tempfile.TemporaryFile(dir=self.root / APP_DIR):
                pass
        except OSError as exc:
            raise PermissionError(
                exc.errno,
                f"the memory folder {self.root} cannot be written "
                f"({exc.strerror}); check its permissions",
            ) from exc

    def source_path(self, content_hash: str) -> Path:
        return self.root / SOURCES_DIR / f"{content_hash}.txt"

    def readable(self, path: Path) -> bool:
        """A regular file inside the memory (a link out of it, or into .git/ or .gam/,
        counts as absent)."""
        return reachable_file(self.root, path) is not None

    def known_sources(self) -> set[str]:
        folder = self.root / SOURCES_DIR
        return {p.stem for p in folder.glob("*.txt")} if folder.is_dir() else set()

    def original_text(self, front: dict[str, Any]) -> str | None:
        """The exact source wording a memory was written from."""
        source_hash = str(front.get("source_hash", ""))
        span = front.get("span")
        if not _HASH.fullmatch(source_hash) or not _is_span(span):
            return None  # a hash of "../../x" would name another file
        path = self.source_path(source_hash)
        if not self.readable(path):
            return None
        return path.read_text(encoding="utf-8")[span[0] : span[1]]

    def load_view(self, personal: bool = False) -> DirView:
        """The document tree; with `personal`, the conversations and facts folders too
        (they are never planned, reorganized, counted or listed in a README)."""
        return self._scan(self.root, "", skip=() if personal else PERSONAL_DIRS)

    def shallow_view(self, path: str = "") -> DirView | None:
        """One folder of the document tree as a tree view first shows it (`path`; "" is the
        top): its memories and README, and its subfolders each with its README and the
        number of memories below it (`total`), what they hold not read. A memory of
        100,000 files opens by counting names, not by reading 2,000 folders' READMEs.
        None when the tree has no such folder."""
        folder = self._document_folder(path) if path else self.root
        try:
            if folder is not None:
                return self._scan(folder, path, skip=() if path else PERSONAL_DIRS, shallow=True)
        except OSError:
            pass
        return None

    def research_view(self) -> DirView | None:
        """The saved research reports (research/<date>-<slug>.md), which the document tree
        leaves out, for the window to list apart; None when there are none."""
        folder = self.root / RESEARCH_DIR
        try:
            if is_real_dir(folder):
                view = self._scan(folder, RESEARCH_DIR, shallow=True)
                return view if view.files else None
        except OSError:
            pass
        return None

    def _document_folder(self, path: str) -> Path | None:
        parts = path.split("/")
        if parts[0] in PERSONAL_DIRS:
            return None
        folder = self.root
        for part in parts:
            folder = folder / part
            if not part or part.startswith(".") or not is_real_dir(folder):
                return None
        return folder

    def _scan(
        self, folder: Path, rel: str, skip: tuple[str, ...] = (), shallow: bool = False
    ) -> DirView:
        view = DirView(path=rel)
        readme_found = False
        with os.scandir(folder) as scanned:
            entries = sorted(scanned, key=_name)
        for entry in entries:
            if entry.name.startswith(".") or entry.name in skip or is_absent(self.root, entry):
                continue
            if is_real_dir(entry):
                child = view.child_path(entry.name)
                view.subdirs[entry.name] = (
                    self._summary(Path(entry.path), child)
                    if shallow
                    else self._scan(Path(entry.path), child)
                )
            elif entry.name == README:
                readme_found = entry.is_file()
            elif entry.name.endswith(".md") and entry.is_file():
                view.files[entry.name] = None
        if readme_found:
            self._describe(view, folder / README)
        return view

    def _summary(self, folder: Path, rel: str) -> DirView:
        """A subfolder in a shallow view: its README's words and its count of memories."""
        view = DirView(path=rel, total=self._count(folder))
        readme = folder / README
        if not is_absent(self.root, readme) and readme.is_file():
            self._describe(view, readme)
        return view

    def _count(self, folder: Path) -> int:
        """The memories below `folder`, as a scan would find them (names only). A folder's
        own listing is remembered with its mtime, which adding, removing or renaming a name
        in it changes and editing a file does not: after 1,000 files edited at once, a
        memory of 10,000 is counted again with a stat a folder, not a listing."""
        mtime = folder.stat().st_mtime_ns
        known = self._listings.get(folder)
        if known is None or known[0] != mtime:
            listed_at = time.time_ns()
            own, subfolders, linked = 0, [], False
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    linked = linked or entry.is_symlink()  # its target may change unseen
                    if name.startswith(".") or (entry.is_symlink() and is_absent(self.root, entry)):
                        continue
                    if is_real_dir(entry):
                        subfolders.append(Path(entry.path))
                    elif name.endswith(".md") and name != README and entry.is_file():
                        own += 1
            known = (mtime, own, tuple(subfolders))
            if not linked and listed_at - mtime > SETTLED_NS:
                self._listings[folder] = known
        return known[1] + sum(self._count(sub) for sub in known[2])

    @staticmethod
    def _describe(view: DirView, readme: Path) -> None:
        text = readme.read_text(encoding="utf-8", errors="replace")
        view.title, view.description = readme_heading(text)

    def read_fronts(self, view: DirView, unread_only: bool = False) -> dict[str, dict[str, Any]]:
        """Front matter of the memories directly in `view` (only those whose tldr is not
        known yet, with `unread_only`); fills in their tldrs."""
        fronts = {}
        for name in [n for n, tldr in view.files.items() if not (unread_only and tldr is not None)]:
            path = self.root / view.path / name
            if not self.readable(path):  # turned into a link out since the scan
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            parsed = parse_memory(text)
            front = dict(parsed.front)
            front.setdefault("title", name.removesuffix(".md"))
            front.setdefault("tldr", parsed.body.strip().split("\n")[0][:200])
            fronts[name] = front
            view.files[name] = str(front["tldr"])
            view.origins[name] = (str(front["title"]), str(front.get("source") or ""))
        return fronts
