"""A memory folder as the front ends see it: where its parts are, whether a folder may
become one, what it holds (its history, a conversation, the facts' histories), whether a
crash left an operation half-done, and the watcher the window follows it with."""

from __future__ import annotations

import os
from pathlib import Path

from gam_desktop.engine.chats.library import load as load_conversation
from gam_desktop.engine.facts.history import Lineage, lineages
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.journal import Interrupted
from gam_desktop.engine.history.log import History, Operation
from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.research.save import saved_reports
from gam_desktop.engine.store.changeset import atomic_write
from gam_desktop.engine.store.folder import (
    APP_DIR,
    APP_LOCK_FILE,
    CONVERSATIONS_DIR,
    DELETED_FACTS_DIR,
    FACTS_DIR,
    PERSONAL_DIRS,
    RESEARCH_DIR,
    SERVE_QUEUE_DIR,
    DirView,
    MemoryFolder,
)
from gam_desktop.engine.store.gitdir import GIT_DIR
from gam_desktop.engine.store.links import check_writable_path
from gam_desktop.engine.store.location import cannot_create, free_name, unsuitable
from gam_desktop.engine.store.lock import writer_lock
from gam_desktop.engine.store.portable import remove_tree
from gam_desktop.engine.store.watcher import FolderWatcher
from gam_desktop.engine.workflow import Workflow, foreign_content

__all__ = [
    "APP_DIR",
    "APP_LOCK_FILE",
    "CONVERSATIONS_DIR",
    "DELETED_FACTS_DIR",
    "FACTS_DIR",
    "META_FILE",
    "PERSONAL_DIRS",
    "RESEARCH_DIR",
    "SERVE_QUEUE_DIR",
    "DirView",
    "FolderWatcher",
    "MemoryFolder",
    "atomic_write",
    "cannot_create",
    "check_writable_path",
    "fact_lineages",
    "foreign_content",
    "free_name",
    "interrupted_operation",
    "last_operation",
    "load_conversation",
    "needs_recovery",
    "open_history",
    "remove_tree",
    "removed_by",
    "saved_reports",
    "unsuitable",
]


def open_history(root: Path, git_path: str | None = None) -> History:
    """The history of the memory at `root`, on a repository of its own: open one on each
    thread that reads it (a GitPython repository is not thread-safe). GitUnavailable when no
    git is found (`git_path`: the one chosen in Settings)."""
    return History(MemoryRepo.open(root, git_path))


def last_operation(root: Path, git_path: str | None = None) -> Operation | None:
    """The newest operation of the memory at `root` (what Edit ▸ Undo would roll back), None
    when it has none. It never makes a repository, as opening one does: a recovery that
    took the memory back to before its first build must not find one made again."""
    if not os.path.lexists(root / GIT_DIR):
        return None
    return next(iter(open_history(root, git_path).operations(0, 1)), None)


def removed_by(root: Path, path: str, git_path: str | None = None) -> Operation | None:
    """The operation that last removed `path` from the memory at `root` (a rollback, say),
    None when none did; like `last_operation`, it never makes a repository."""
    if not os.path.lexists(root / GIT_DIR):
        return None
    return open_history(root, git_path).removed_by(path)


def interrupted_operation(folder: MemoryFolder) -> Interrupted | None:
    """The operation whose journal is in `folder`: one a crash left half-done, or one
    running right now (`needs_recovery` tells them apart); None when there is none."""
    return journal.read(folder)


def needs_recovery(folder: MemoryFolder) -> bool:
    """Whether a crash left an operation half-done in `folder` (never one running now: its
    writer holds the lock). Every write is refused until it is recovered."""
    if journal.read(folder) is None:
        return False
    try:
        with writer_lock(folder, timeout=0):
            return journal.read(folder) is not None
    except Exception:  # busy (an operation is running) or not writable: not interrupted
        return False


def fact_lineages(workflow: Workflow) -> list[Lineage]:
    """Every current fact of the memory with its history, and every fact that ended with
    nothing after it (taken back or forgotten) with its own."""
    return lineages(workflow.facts(), workflow.facts(deleted=True))
