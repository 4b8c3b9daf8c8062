"""git work on files another program holds: on Windows tried again, then said plainly.

On Windows a file open in another program cannot be deleted or replaced, and git fails on
it ("unable to unlink old 'notes/x.md'"); while another git works in the same repository (a
git GUI, an editor's git integration) it holds `.git/index.lock`, and ours fails with
"Unable to create '…/.git/index.lock': File exists". Such holds are mostly short: the step
is tried again after growing pauses (`store.portable.HELD_PAUSES`, Windows only); if it
still fails, the error says which file is held and by what kind of program.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from typing import TypeVar

from gam_desktop.engine.history.gitrepo import GitFailed
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.portable import retry_while_held, why

T = TypeVar("T")
INDEX_LOCK = re.compile(r"Unable to create '([^']*index\.lock)'", re.IGNORECASE)
UNLINK = re.compile(r"unable to unlink(?: old)? '([^']+)'", re.IGNORECASE)


class HeldByAnotherProgram(GitFailed):
    """git could not change a file of the memory that another program holds; str() names
    the file and says what to do."""

    title = "Another program is using the memory's files"
    advice = ""

    def __init__(self, said: str) -> None:
        StoreError.__init__(self, errno.EBUSY, f"{said}; close it, then try again")


def _said(exc: BaseException) -> str:
    """Everything the failure said along its causes (GitFailed keeps git's last line only;
    GitPython's error, its cause, has all of git's stderr)."""
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 10:
        parts += [str(getattr(seen, "stderr", "") or ""), str(seen)]
        seen = seen.__cause__
    return "\n".join(parts)


def holder(exc: BaseException) -> str | None:
    """Which file another program holds, in words, when that is why `exc` happened."""
    text = _said(exc)
    if found := INDEX_LOCK.search(text):
        return (
            f"{found.group(1)} is held by another git (a git program, an editor's git "
            "integration, or a git command still running in the memory folder)"
        )
    if found := UNLINK.search(text):
        return f"'{found.group(1)}' is open in another program, which keeps git from changing it"
    if isinstance(exc, PermissionError):
        return f"{exc.filename or 'a file of the memory'}: {why(exc)}"
    return None


def retry_git(action: Callable[[], T]) -> T:
    """`action` (git work: a commit, a rollback), tried again on Windows while another
    program holds a file it needs; HeldByAnotherProgram naming the file when it still
    fails for that reason."""
    try:
        return retry_while_held(action, lambda exc: holder(exc) is not None)
    except (GitFailed, PermissionError) as exc:
        said = holder(exc)
        if said is None:
            raise
        raise HeldByAnotherProgram(said) from exc
