"""git work on files another program holds: on Windows tried again, then said plainly.

On Windows a file open in another program cannot be deleted or replaced, and git fails on
it ("unable to unlink old 'notes/x.md'"); while another git works in the same repository (a
git GUI, an editor's git integration) it holds `.git/index.lock` (or a branch's
`refs/heads/main.lock`), and ours fails with "Unable to create '…/.git/index.lock': File
exists". Such holds are mostly short: the step is tried again after growing pauses
(`store.portable.HELD_PAUSES`, Windows only); if it still fails, the error says which file
is held and by what kind of program.

A git killed mid-commit (a crash, a kill -9, a power cut) leaves its lock file behind, and
no git ever runs to remove it: the message names the file and says that deleting it is
safe when no other git runs; one older than STALE_AFTER that no program has open is said
to be stale, and is refused before an operation's LLM calls (`stale_locks`).
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gam_desktop.engine.history.gitrepo import GitFailed
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.portable import retry_while_held, why
from gam_desktop.engine.textutil import plural

T = TypeVar("T")
GIT_LOCK = re.compile(r"Unable to create '([^']*\.lock)'", re.IGNORECASE)
UNLINK = re.compile(r"unable to unlink(?: old)? '([^']+)'", re.IGNORECASE)
# git holds a lock file for the moment it writes the index or a ref (a second at most, in
# a memory); one this old is no running git's, unless a program has it open.
STALE_AFTER = 120.0
PROC = Path("/proc")  # Linux: which programs have a file open (elsewhere: not known)


class HeldByAnotherProgram(GitFailed):
    """git could not change a file of the memory that another program holds (or that one
    which stopped left behind); str() names the file and says what to do."""

    title = "Another program is using the memory's files"
    advice = ""

    def __init__(self, said: str) -> None:
        StoreError.__init__(self, errno.EBUSY, said)


class StaleGitLock(HeldByAnotherProgram):
    """A lock file of git's that no running git holds: left by one that stopped."""

    title = "A git program that stopped left a lock file"


def _said(exc: BaseException) -> str:
    """Everything the failure said along its causes (GitFailed keeps git's last line only;
    GitPython's error, its cause, has all of git's stderr)."""
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 10:
        parts += [str(getattr(seen, "stderr", "") or ""), str(seen)]
        seen = seen.__cause__
    return "\n".join(parts)


def open_elsewhere(path: Path) -> bool | None:
    """Whether a running program has `path` open: read from /proc (Linux; the programs
    of other users cannot be looked into, and are not the memory's git); None where no
    /proc tells it."""
    if not (PROC / "self" / "fd").is_dir():
        return None
    try:
        wanted = os.path.realpath(path)
    except OSError:
        return None
    for process in PROC.iterdir():
        if not process.name.isdigit():
            continue
        try:
            descriptors = list((process / "fd").iterdir())
        except OSError:  # gone meanwhile, or another user's
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(descriptor) == wanted:
                    return True
            except OSError:
                continue
    return False


def _age(path: Path) -> float | None:
    try:
        return max(0.0, time.time() - path.stat().st_mtime)
    except OSError:
        return None


def lock_error(path: Path | str) -> HeldByAnotherProgram:
    """The error naming a git lock file that stopped git: held by another git (wait for it;
    if none runs, deleting it is safe), or stale (old, and no program has it open)."""
    path = Path(path)
    age = _age(path)
    opened = open_elsewhere(path) if age is not None and age >= STALE_AFTER else True
    if age is None or opened:
        return HeldByAnotherProgram(
            f"{path} is held by another git (a git program, an editor's git integration, or "
            "a git command still running in the memory folder): close it or let it finish, "
            "then try again. If no other git program is running, one that stopped (a crash, "
            f"a kill) left it, and deleting {path} is safe"
        )
    minutes = plural(int(age // 60), "minute")
    if opened is None:  # no way to know here which programs have it open
        return StaleGitLock(
            f"{path} is {minutes} old, and git holds such a file for a moment only: a git "
            "program that stopped (a crash, a kill) most likely left it. If no other git "
            f"program is running, deleting {path} is safe; then try again"
        )
    return StaleGitLock(
        f"{path} is a stale lock file: it is {minutes} old and no program has it open, so "
        f"a git program that stopped (a crash, a kill) left it. Delete {path}, then try again"
    )


def stale_locks(git_dir: Path) -> list[StaleGitLock]:
    """The lock files a commit needs free (the index's, HEAD's, its branch's) that are
    stale, each as its error: refused before an operation's LLM calls, which its commit
    could not record. One another git may hold right now is no reason (it is gone soon)."""
    candidates = [git_dir / "index.lock", git_dir / "HEAD.lock"]
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        head = ""
    if head.startswith("ref: refs/"):
        candidates.append(git_dir / f"{head.removeprefix('ref: ')}.lock")
    errors = (lock_error(path) for path in candidates if path.is_file())
    return [error for error in errors if isinstance(error, StaleGitLock)]


def _lock_said(exc: BaseException) -> HeldByAnotherProgram | None:
    found = GIT_LOCK.search(_said(exc))
    return lock_error(found.group(1)) if found else None


def holder(exc: BaseException) -> str | None:
    """Which file another program holds (or one that stopped left), in words with what to
    do, when that is why `exc` happened."""
    if (lock := _lock_said(exc)) is not None:
        return lock.strerror
    text = _said(exc)
    if found := UNLINK.search(text):
        return (
            f"'{found.group(1)}' is open in another program, which keeps git from changing "
            "it; close it, then try again"
        )
    if isinstance(exc, PermissionError):
        return f"{exc.filename or 'a file of the memory'}: {why(exc)}; close it, then try again"
    return None


def retry_git(action: Callable[[], T]) -> T:
    """`action` (git work: a commit, a rollback), tried again on Windows while another
    program holds a file it needs; HeldByAnotherProgram naming the file when it still
    fails for that reason."""
    try:
        return retry_while_held(action, lambda exc: holder(exc) is not None)
    except (GitFailed, PermissionError) as exc:
        lock = _lock_said(exc)
        if lock is not None:
            raise lock from exc
        said = holder(exc)
        if said is None:
            raise
        raise HeldByAnotherProgram(said) from exc
