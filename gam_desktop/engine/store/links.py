"""The one rule for links in a memory folder, shared by every scan, read and write.

A memory is untrusted ground: a person (or a document's zip) may leave a symlink to
/etc/passwd or a whole folder elsewhere, or a link loop. The engine treats a link
whose target leaves the memory root (or cannot be resolved: a loop, a dangling link)
as absent: never listed, read, committed or sent to the LLM. Nothing is ever written
through a link: a write whose path crosses a linked folder is refused.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePosixPath

from gam_desktop.engine.errors import GamError

PRIVATE = frozenset({".git", ".gam"})  # never reached through a link


class LinkedPathError(GamError, OSError):
    """A write would have gone through a link; nothing was written."""

    title = "Nothing is written through links"
    advice = "Remove or rename the link in the memory folder, then try again."


class LinkedFolderError(LinkedPathError):
    """A folder holding the memory's recorded files was replaced by a link (moved away by
    another program, or linked to .git): git cannot record what it held, and nothing is
    written through it. str() names the link and what to do."""

    title = "A folder of the memory is a link"
    advice = ""  # str() says it, naming the link


def linked_folder_error(root: Path, rel: str) -> LinkedFolderError:
    """The refusal naming the folder `rel` (relative to `root`) that is now a link."""
    link = root / rel
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    resolved = resolve_within(root, link)
    if resolved is not None and is_private(root, resolved):
        where = f"{target} (the memory's own {resolved.relative_to(root).parts[0]} folder)"
    else:
        where = target
    return LinkedFolderError(
        errno.ELOOP,
        f"'{rel}/' is a link to {where}, and the memory's history holds files in that "
        f"folder: git cannot record them, and nothing is written through a link. Replace "
        f"the link '{link}' with a folder (move its files back into it), or remove it, then "
        "try again",
    )


def resolve_within(root: Path, path: Path) -> Path | None:
    """`path` with every link resolved, if that stays inside `root` (a resolved
    absolute path); None for a link out, a loop or a dangling link."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a loop (RuntimeError before 3.13) or a dangling link
        return None
    return resolved if resolved == root or root in resolved.parents else None


def is_private_name(name: str) -> bool:
    """`.git` or `.gam` as a case-insensitive file system (APFS, NTFS) reads the name:
    any case, and on Windows with trailing dots or spaces (".GIT", ".git.")."""
    return name.casefold().rstrip(". ") in PRIVATE or name.casefold() in PRIVATE


def is_private(root: Path, path: Path) -> bool:
    """Whether `path` (resolved, inside `root`) is .git/.gam or inside them: by name in
    any case, and by identity (a Windows short name such as GIT~1, a mount of it)."""
    parts = path.relative_to(root).parts
    if not parts:
        return False
    if any(is_private_name(part) for part in parts):
        return True
    top = root / parts[0]
    return any(_same_file(top, root / name) for name in PRIVATE)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # b does not exist (no .gam yet), or a vanished meanwhile
        return False


def is_absent(root: Path, entry: os.DirEntry[str] | Path) -> bool:
    """Whether a scanned entry must be treated as not there: a link that leaves the
    memory (or loops, or dangles, or leads into .git/ or .gam/). Links that stay inside
    are kept for reading, but callers never descend into a linked folder (the real folder
    is scanned anyway)."""
    if not entry.is_symlink():
        return False
    target = resolve_within(root, Path(entry.path if isinstance(entry, os.DirEntry) else entry))
    # Inside, but into the repository or the app's files (`notes.md -> .git/config` would
    # send a remote's token to the LLM): as absent as a link out.
    return target is None or is_private(root, target)


def crosses_link(root: Path, path: Path) -> bool:
    """Whether `path` (under `root`) or a folder on the way to it is a link, or its way
    climbs with '..' (which may undo a link's step)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return True
    current = root
    for part in parts:
        current = current / part
        if part == ".." or current.is_symlink():
            return True
    return False


def reachable_file(root: Path, path: Path) -> Path | None:
    """`path` resolved, when it is a regular file the engine may read: inside `root`, and
    not .git/ or .gam/ reached through a link (`.gam/sources/x.txt -> ../../.git/config`
    is as absent as `notes.md -> .git/config`); None otherwise."""
    target = resolve_within(root, path)
    if target is None or not target.is_file():
        return None
    if is_private(root, target) and crosses_link(root, path):
        return None
    return target


def is_real_dir(entry: os.DirEntry[str] | Path) -> bool:
    """A folder to descend into: a real directory, never a link to one."""
    if isinstance(entry, os.DirEntry):
        return entry.is_dir(follow_symlinks=False)
    return entry.is_dir() and not entry.is_symlink()


def check_writable_path(root: Path, rel: str) -> Path:
    """The absolute path for writing `rel` under `root`, refused if it or any folder on
    the way is a link (the write would land wherever the link points)."""
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or ".." in parts or ":" in parts[0]:
        raise LinkedPathError(22, f"'{rel}' is not a path inside the memory", rel)
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise LinkedPathError(
                40,
                f"'{current.relative_to(root).as_posix()}' is a link; nothing is written "
                "through links (remove or rename it)",
                str(current),
            )
    return current
