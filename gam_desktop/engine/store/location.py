"""Where a memory may live: the rule the app applies before a folder becomes a memory.

A memory commits every file in its folder to its own history and writes its notes beside
them, so some folders are refused outright, with the reason said in words: the home folder
(and the folders holding it), a drive root, the system's folders (and what is inside the
ones the system owns), and a folder inside another memory or inside a git repository (two
histories over the same files). A new memory also needs a usable name and a free place: a
new or empty folder, never one already holding files.

Pure functions of the paths and what is on disk: they read, never write (the folder is made
only once the person confirms, by the caller), and they never run git.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path, PurePath

from gam_desktop.engine.models import META_FILE

# The system owns these and everything inside them: no memory there, at any depth.
_SYSTEM_TREES_POSIX = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sbin",
    "/snap",
    "/sys",
    "/usr",
    "/Applications",
    "/Library",
    "/System",
    "/private/etc",
    "/cores",
)
# Shared or scratch folders: not themselves a memory, though a folder inside them may be.
_SYSTEM_TOPS_POSIX = (
    "/home",
    "/media",
    "/mnt",
    "/opt",
    "/root",
    "/run",
    "/run/media",
    "/srv",
    "/tmp",
    "/var",
    "/var/tmp",
    "/Users",
    "/Volumes",
    "/private",
    "/private/tmp",
    "/private/var",
)
_NAME_CHARACTERS = '/\\:*?"<>|'
_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|clock\$|com\d|lpt\d)(\..*)?$", re.IGNORECASE)
_MAX_NAME_BYTES = 200
# What an empty folder may still hold: the app's private folder and the files operating
# systems drop everywhere (and a git repository without history: `user_content`).
_NOT_CONTENT = frozenset({".gam", ".DS_Store", "Thumbs.db", "desktop.ini"})
_ELSEWHERE = "Choose a folder in your home folder or on a data drive."
DEFAULT_NAME = "GAM Memory"


def unsuitable(folder: Path) -> str | None:
    """Why `folder` cannot become a memory, in a sentence; None when it can. Whether it
    exists does not matter (links are followed: a link to /usr is /usr). An existing memory
    is not asked about: opening one is always fine."""
    target = _resolved(folder)
    home = _home()
    if home is not None and _same(target, home):
        return (
            "This is your home folder: a memory would record everything in it. "
            "Choose or create a folder inside it instead."
        )
    # The system's folders first: /tmp, /run, /proc or /var are often mounted file systems
    # (tmpfs on Fedora and Arch), and "the root of a drive" would misname them.
    system = _system_folder(target)
    if system is not None:
        where = "This is" if _same(system, target) else f"This is inside {system}, which is"
        return f"{where} a system folder: it is no place for your notes. {_ELSEWHERE}"
    if _is_drive_root(target):
        return (
            f"{target} is the root of a drive: a memory would record everything on it. "
            "Choose a folder on the drive instead."
        )
    if home is not None and _inside(home, target):
        return (
            f"{target} holds your home folder (and perhaps other people's): a memory would "
            "record everything in it. Choose a folder inside your home folder instead."
        )
    memory = _enclosing(target, lambda parent: (parent / META_FILE).is_file())
    if memory is not None:
        return (
            f"This is inside the memory {memory}: a memory cannot hold another one. "
            "Choose a folder outside it."
        )
    repository = _enclosing(target, lambda parent: (parent / ".git").exists())
    if repository is not None:
        return (
            f"This is inside the git repository {repository}: the memory keeps a history of "
            "its own, which would be tangled with that repository's. Choose a folder "
            "outside it."
        )
    return None


def cannot_create(location: Path, name: str) -> str | None:
    """Why a new memory called `name` cannot be made in the folder `location`, in a
    sentence; None when `location / name` may be created (or is an empty folder)."""
    problem = bad_name(name)
    if problem is not None:
        return problem
    if not location.is_absolute():
        return "Type the location's full path, or choose it with Browse…"
    if not location.exists():
        return f"There is no folder {location}."
    if not location.is_dir():
        return f"{location} is a file, not a folder."
    target = location / name.strip()
    refused = unsuitable(target)
    if refused is not None:
        return refused
    if target.is_file() or (target.exists() and not target.is_dir()):
        return f"There is already a file called “{name.strip()}” there. Choose another name."
    if (target / META_FILE).is_file():
        return f"{target} is already a memory: open it instead, or choose another name."
    if target.is_dir() and holds_files(target):
        return (
            f"A folder called “{name.strip()}” is already there and holds files. "
            "Choose another name (an existing folder is opened, not created)."
        )
    if not os.access(location, os.W_OK):
        return f"You cannot create folders in {location}. Choose another location."
    return None


def bad_name(name: str) -> str | None:
    """Why `name` cannot name a memory's folder on every OS; None when it can."""
    name = name.strip()
    if not name:
        return "Type a name for the memory."
    if name in {".", ".."}:
        return "Type a name for the memory (not “.” or “..”)."
    if any(c in _NAME_CHARACTERS for c in name):
        return f"A name cannot contain any of {' '.join(_NAME_CHARACTERS)}"
    if any(ord(c) < 32 for c in name):
        return "A name cannot contain control characters."
    if name.startswith("."):
        return "A name cannot start with a dot (the folder would be hidden)."
    if name.endswith("."):
        return "A name cannot end with a dot (Windows drops it)."
    if _WINDOWS_RESERVED.match(name):
        return f"“{name}” is a name Windows keeps for itself. Choose another."
    if len(name.encode("utf-8")) > _MAX_NAME_BYTES:
        return "That name is too long. Choose a shorter one."
    return None


def free_name(location: Path, base: str = DEFAULT_NAME) -> str:
    """`base`, or `base 2`, `base 3`…: the first whose folder in `location` is free (absent
    or empty), to suggest for a new memory."""
    for number in range(1, 1000):
        name = base if number == 1 else f"{base} {number}"
        target = location / name
        if not target.exists() or (target.is_dir() and not holds_files(target)):
            return name
    return base


def user_content(folder: Path) -> list[str]:
    """The names of the person's things in an existing folder, sorted: everything but the
    app's private folder (.gam), the files operating systems drop everywhere and a git
    repository with no commit and nothing staged (an earlier start that stopped after `git
    init`). Dotfiles, a repository with history and a .git file (a worktree or a submodule)
    are theirs. The one rule for "is this folder empty": a new memory may be made in a
    folder without any (`cannot_create`, `free_name`), and making a folder with some a memory
    needs the person's consent (`workflow.foreign_content`). Raises OSError when the folder
    cannot be listed."""
    names = sorted(entry.name for entry in folder.iterdir() if entry.name not in _NOT_CONTENT)
    return [name for name in names if not (name == ".git" and _no_history(folder / name))]


def holds_files(folder: Path) -> bool:
    """Whether an existing folder holds any of the person's things (`user_content`)."""
    try:
        return bool(user_content(folder))
    except OSError:
        return True  # unreadable: not known to be empty


def _no_history(git_dir: Path) -> bool:
    """A repository's folder with no branch, no packed refs and no index: nothing of the
    person's is in it. (Read from disk: git is never run here.)"""
    try:
        return git_dir.is_dir() and not (
            any((git_dir / "refs" / "heads").rglob("*"))
            or (git_dir / "index").exists()
            or (git_dir / "packed-refs").exists()
        )
    except OSError:
        return False  # unreadable: not known to be empty


def _home() -> Path | None:
    try:
        return _resolved(Path.home())
    except (RuntimeError, KeyError, OSError):  # no HOME and no user database entry
        return None


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):  # a link loop, an unreachable drive
        return Path(os.path.abspath(path))


def _is_drive_root(path: Path) -> bool:
    if path.parent == path:  # "/", "C:\\", "\\\\server\\share\\"
        return True
    try:
        return path.is_dir() and os.path.ismount(path)  # a mounted drive, /Volumes/USB
    except OSError:
        return False


def _system_folder(path: Path) -> PurePath | None:
    """The system folder `path` is, or the system tree it is inside; None otherwise."""
    trees, tops = _system_folders()
    for tree in trees:
        if _same(tree, path) or _inside(path, tree):
            return tree
    return next((top for top in tops if _same(top, path)), None)


def _system_folders() -> tuple[list[PurePath], list[PurePath]]:
    if os.name != "nt":
        return [PurePath(p) for p in _SYSTEM_TREES_POSIX], [PurePath(p) for p in _SYSTEM_TOPS_POSIX]
    env = os.environ  # case-insensitive on Windows
    drive = env.get("SYSTEMDRIVE", "C:") + "\\"
    trees = [
        env.get("SYSTEMROOT") or env.get("WINDIR") or drive + "Windows",
        env.get("PROGRAMFILES") or drive + "Program Files",
        env.get("PROGRAMFILES(X86)") or drive + "Program Files (x86)",
        env.get("PROGRAMW6432") or drive + "Program Files",
        env.get("PROGRAMDATA") or drive + "ProgramData",
    ]
    tops = [drive + "Users", drive + "Users\\Public"]
    return [PurePath(p) for p in trees], [PurePath(p) for p in tops]


def _key(path: PurePath) -> tuple[str, ...]:
    """Compared without case: macOS and Windows file systems ignore it by default."""
    return tuple(part.casefold() for part in path.parts)


def _same(a: PurePath, b: PurePath) -> bool:
    return _key(a) == _key(b)


def _inside(path: PurePath, folder: PurePath) -> bool:
    inner, outer = _key(path), _key(folder)
    return len(inner) > len(outer) and inner[: len(outer)] == outer


def _enclosing(path: Path, test: Callable[[Path], bool]) -> Path | None:
    """The nearest folder above `path` (not `path` itself) that passes `test`."""
    for parent in path.parents:
        try:
            if test(parent):
                return parent
        except OSError:  # an unreadable folder on the way up: nothing known about it
            continue
    return None
