"""File operations that hold on every file system the app meets, where os and shutil alone
do not.

- Windows deletes no read-only file (Git for Windows makes every object it writes
  read-only) and no file another program holds open (an editor, the search indexer,
  Defender, a sync client, another git): `remove_tree` clears the read-only bit and tries
  again, on Windows a few times while a file is held, and raises naming what stayed
  instead of leaving half a folder behind without a word.
- A case-insensitive file system (Windows, macOS) reads `projects/x.md` as
  `Projects/x.md`: a rename that changes only case finds its target "already there", and
  some file systems ignore a rename of a name onto itself. `rename_case` renames each name
  whose case changes through a temporary name.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gam_desktop.engine.errors import GamError

T = TypeVar("T")
# Pauses between tries while another program holds a file: on Windows only, where such
# holds are common and short (elsewhere an open file never stops a delete or a rename).
HELD_PAUSES = (0.1, 0.25, 0.5, 1.0, 2.0)
WINDOWS_SHARING_VIOLATION = 32  # ERROR_SHARING_VIOLATION: "used by another process"
_sleep = time.sleep  # the tests record the pauses instead of waiting them


class FolderNotRemoved(GamError, OSError):
    """A folder (with what is left in it) could not be removed; str() names what stayed."""

    title = "A folder could not be removed"
    advice = (
        "Close the programs that may have a file of it open (an editor, a git client, a "
        "terminal inside it), then try again."
    )


def held_pauses() -> tuple[float, ...]:
    """The pauses to retry after, read when needed (the tests simulate Windows)."""
    return HELD_PAUSES if os.name == "nt" else ()


def is_held(exc: BaseException) -> bool:
    """Whether `exc` is how Windows refuses a file that is read-only or open elsewhere."""
    return isinstance(exc, PermissionError)


def retry_while_held(action: Callable[[], T], held: Callable[[BaseException], bool] = is_held) -> T:
    """`action`, tried again after each of `held_pauses()` while it fails with an error
    that `held` says comes from a file another program holds; its last error after that."""
    for pause in held_pauses():
        try:
            return action()
        except Exception as exc:
            if not held(exc):
                raise
            _sleep(pause)
    return action()


def why(exc: OSError) -> str:
    """An OSError in a person's words, naming a file held open as such."""
    if getattr(exc, "winerror", None) == WINDOWS_SHARING_VIOLATION:
        return "it is open in another program"
    if isinstance(exc, PermissionError):
        return "it is read-only, open in another program, or not yours to change"
    return exc.strerror or str(exc)


# -- removing a folder --------------------------------------------------------------------


def remove_tree(path: Path) -> None:
    """Remove the folder `path` and everything in it, read-only files too (their bit is
    cleared, as Windows requires); FolderNotRemoved, naming what stayed, when it is still
    there afterwards. Nothing happens when it does not exist."""
    stuck: list[str] = []

    def again(function: Callable[..., Any], failed: str, error: Any) -> None:
        # onerror (before 3.12) hands over sys.exc_info(), onexc (3.12+) the exception
        exc = error[1] if isinstance(error, tuple) else error
        if isinstance(exc, FileNotFoundError):
            return  # removed meanwhile
        if function not in (os.unlink, os.remove, os.rmdir):
            stuck.append(f"{failed} ({why(exc)})")  # a listing failed: nothing to retry
            return
        try:
            _make_writable(failed)
            retry_while_held(lambda: function(failed))
        except OSError as last:
            if last.errno != errno.ENOTEMPTY:  # (a folder is left by what stayed in it)
                stuck.append(f"{failed} ({why(last)})")

    if not os.path.lexists(path):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=again)
    else:
        shutil.rmtree(path, onerror=again)
    if os.path.lexists(path):
        left = "; ".join(stuck[:3]) + (f"; and {len(stuck) - 3} more" if len(stuck) > 3 else "")
        raise FolderNotRemoved(errno.EACCES, f"{path} could not be removed: {left or 'it stayed'}")


def _make_writable(path: str) -> None:
    """Clear a file's read-only bit (what Windows checks before a delete); never through
    a link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if not stat.S_ISLNK(mode):
        os.chmod(path, stat.S_IMODE(mode) | stat.S_IWRITE | stat.S_IREAD)


# -- renaming that changes only case ------------------------------------------------------


def is_case_only(source: Path, target: Path) -> bool:
    """Whether `target` is `source` itself under a name that differs only in case: on a
    case-insensitive file system both name one entry (on others they are two, or the
    target does not exist)."""
    if str(source) == str(target) or str(source).casefold() != str(target).casefold():
        return False
    try:
        return os.path.samefile(source, target)
    except OSError:
        return False


def rename_case(root: Path, source: Path, target: Path) -> None:
    """Give `source` (under `root`) the case of `target`: each name on the way whose case
    differs is renamed through a temporary name, folders too (`Projects/x.md` →
    `projects/x.md` renames the folder `Projects`)."""
    here = root
    wanted = target.relative_to(root).parts
    for have, want in zip(source.relative_to(root).parts, wanted, strict=True):
        current = here / _name_on_disk(here, have)
        if current.name != want:
            _through_temporary(current, here / want)
        here = here / want


def _name_on_disk(folder: Path, name: str) -> str:
    """`name` as the folder lists it (its case on disk), or as given if it is not there."""
    try:
        names = os.listdir(folder)
    except OSError:
        return name
    if name in names:
        return name
    return next((n for n in names if n.casefold() == name.casefold()), name)


def _through_temporary(current: Path, wanted: Path) -> None:
    aside = current.with_name(f".{current.name}.{uuid.uuid4().hex[:8]}.renaming")
    retry_while_held(lambda: os.rename(current, aside))
    try:
        retry_while_held(lambda: os.rename(aside, wanted))
    except OSError:
        os.rename(aside, current)  # back as it was
        raise
