"""The memory's repository as git would use it: refused when it leads elsewhere or would
make git wait forever.

A memory is untrusted ground (it may arrive as a zip or through a synced folder). Its
`.git` may lead out of it: a link, a `gitdir:` file, a `commondir`, a link inside it (refs,
objects, logs) or objects borrowed through `objects/info/alternates`; every commit would
then land in another repository. And a named pipe where git or the app opens a file (HEAD,
the index, a rules file: `.gitignore`, `.gitattributes`, `.git/info/exclude`, a nested
repository's HEAD) makes the call wait forever for a writer that never comes. Such a
memory is refused, naming the file: nothing is written to it (`MemoryFolder.check_writable`)
and its history stays off (history/gitrepo.py). Read from disk: git is never run here.

Those places all have a hidden name (a part starting with "."). A named pipe, socket or
device under a visible name (`topic/x.md`, saved there by another program) is where notes
live: git never opens it (its status lists no such file, and one that replaced a note is
"modified" by its type alone) and the app reads only regular files there, but git refuses
to stage it ("unsupported file type"), so one staged failed the whole commit. It is left
out of the history instead, by name (`special_files`, `left_out`), and the rest committed.

Every folder is listed (the memory's and its repository's, to find a named pipe anywhere),
a listing remembered with its folder's time as `MemoryFolder._count` does: a memory of
100,000 files is checked again with a stat a folder.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

from gam_desktop.engine.errors import GamError

GIT_DIR = ".git"
# Files git reads in the memory's folders (a link to one is read through by older gits).
RULES_FILES = frozenset({".gitignore", ".gitattributes", ".gitmodules", ".mailmap"})
SETTLED_NS = 3_000_000_000  # as store.folder: a listing younger than this is not kept
_ALTERNATES = f"{GIT_DIR}/objects/info/alternates"


class UnsafeRepositoryError(GamError, PermissionError):
    """The memory's repository leads out of it, or holds what would make git wait forever;
    nothing was written. str() names the file."""

    title = "This memory's history cannot be used"
    advice = (
        "Remove or replace what the message names in the memory folder (or remove its .git "
        "folder to start a new history), then try again."
    )

    def __str__(self) -> str:  # the words alone, not "[Errno 1] ..."
        return self.strerror or super().__str__()


def check_repository(root: Path) -> None:
    """Refuse (UnsafeRepositoryError) a memory whose `.git` is not a folder of its own, or
    which holds a link in `.git` or a named pipe, socket or device under a hidden name
    (where git or the app would open it)."""
    dot_git = root / GIT_DIR
    try:
        mode: int | None = os.lstat(dot_git).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISLNK(mode):
        raise _refused(dot_git, "is a link: its commits would land wherever it leads")
    if mode is not None and not stat.S_ISDIR(mode):
        raise _refused(
            dot_git,
            "is not a folder (a 'gitdir:' file points git at a repository elsewhere)",
        )
    _walk(root, root)
    if mode is not None:
        _check_pointers(root, dot_git)


def _check_pointers(root: Path, git_dir: Path) -> None:
    """The files of a repository folder that send git to another one."""
    if os.path.lexists(git_dir / "commondir"):
        raise _refused(git_dir / "commondir", "points git at another repository")
    alternates = root / _ALTERNATES
    if os.path.lexists(alternates) and read_regular(alternates, 4096).strip():
        raise _refused(alternates, "makes git read objects from another repository")


class _Listing:
    """A folder's entries that matter here, with the folder's time when they were listed:
    its subfolders, its first problem, and the named pipes, sockets and devices it holds
    under a visible name (left out of the history, not refused)."""

    __slots__ = ("folders", "mtime", "problem", "special")

    def __init__(
        self,
        mtime: int,
        folders: tuple[Path, ...],
        problem: str | None,
        special: tuple[Path, ...] = (),
    ) -> None:
        self.mtime, self.folders, self.problem = mtime, folders, problem
        self.special = special


# By memory and folder: whether a folder is hidden depends on the memory it is read for.
_listings: dict[tuple[Path, Path], _Listing] = {}
_listings_lock = threading.Lock()


def _walk(root: Path, top: Path) -> list[Path]:
    """Every folder below `top` checked (UnsafeRepositoryError at the first problem); the
    named pipes, sockets and devices found under visible names."""
    pending: list[Path] = [top]
    special: list[Path] = []
    while pending:
        folder = pending.pop()
        listing = _listing(root, folder)
        if listing.problem:
            raise UnsafeRepositoryError(1, listing.problem)
        pending.extend(listing.folders)
        special.extend(listing.special)
    return special


def special_files(root: Path) -> list[tuple[str, str]]:
    """The named pipes, sockets and devices the memory holds under visible names, as
    (relative POSIX path, what it is), sorted: git cannot record them, so they are left
    out of its history (`left_out`). UnsafeRepositoryError when the memory is refused."""
    root = Path(root)
    found = _walk(root, root)
    named = ((path.relative_to(root).as_posix(), kind_of(path)) for path in found)
    return sorted((rel, kind) for rel, kind in named if kind)  # (gone meanwhile: not said)


def kind_of(path: Path) -> str:
    """What a file that is not a regular one is, in words ("a named pipe (FIFO)"); "" for a
    regular file, a folder, a link or nothing (lstat: a link is never followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return ""


def left_out(rel: str, kind: str) -> str:
    """The line that says a file is left out of the memory's history, and why."""
    return (
        f"{rel} is {kind}, not a file: left out of the memory's history (the rest is "
        "recorded); remove it, or replace it with a file, to record it"
    )


def _listing(root: Path, folder: Path) -> _Listing:
    try:
        mtime = os.lstat(folder).st_mtime_ns
    except OSError:
        return _Listing(0, (), None)  # gone meanwhile: nothing in it to refuse
    with _listings_lock:
        known = _listings.get((root, folder))
    if known is not None and known.mtime == mtime:
        return known
    listed_at = time.time_ns()
    listing, linked = _list(root, folder, mtime)
    if not linked and listed_at - mtime > SETTLED_NS:  # a link's target may change unseen
        with _listings_lock:
            _listings[root, folder] = listing
    return listing


def _list(root: Path, folder: Path, mtime: int) -> tuple[_Listing, bool]:
    """The folder's subfolders and its first problem; whether it holds a link checked
    through (whose target may change without the folder's time)."""
    git_dir = root / GIT_DIR
    in_git = folder == git_dir or git_dir in folder.parents
    # .git/info holds rules only git reads (the app never writes through a link there, and
    # a linked attributes file turns history off: gitrepo._ensure_private_rules).
    rules = folder == git_dir / "info"
    # Every file git or the app opens has a hidden name or lies in a hidden folder (.git,
    # a nested .git, .gam, .gam_meta.json, the rules files): a pipe there is refused.
    hidden = folder != root and any(p.startswith(".") for p in folder.relative_to(root).parts)
    folders: list[Path] = []
    special: list[Path] = []
    linked = False
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink():
                    if in_git and not rules:
                        return _problem(mtime, entry, "is a link inside .git"), False
                    if rules or entry.name.casefold() in RULES_FILES:  # git reads through it
                        linked = True
                        if _special_target(Path(entry.path)):
                            return _problem(mtime, entry, "links to what is not a file"), True
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif not entry.is_file(follow_symlinks=False):
                    if hidden or entry.name.startswith("."):
                        return _problem(mtime, entry, _kind(Path(entry.path))), False
                    special.append(Path(entry.path))  # where notes live: left out
    except OSError:
        pass  # unreadable: git cannot read it either
    return _Listing(mtime, tuple(folders), None, tuple(special)), linked


def _problem(mtime: int, entry: os.DirEntry[str], what: str) -> _Listing:
    return _Listing(mtime, (), str(_refused(Path(entry.path), what)))


def _kind(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "is not a regular file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO): git would wait for it forever"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "is not a file"


def _special_target(link: Path) -> bool:
    """Whether `link` leads to a named pipe, a socket or a device (git opening it may wait
    forever); a link to nothing, a loop, a folder or a file is not."""
    try:
        mode = link.stat().st_mode
    except OSError:
        return False  # git cannot open it either
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _refused(path: Path, what: str) -> UnsafeRepositoryError:
    return UnsafeRepositoryError(1, f"{path} {what}; nothing is written to this memory")


def read_regular(path: Path, limit: int = -1) -> str:
    """The text of the regular file at `path` (its first `limit` bytes), "" when it is
    missing or not one: opened without waiting (a named pipe put there is not read) and
    without following a link."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return ""
        return file.read(limit).decode("utf-8", errors="replace")
