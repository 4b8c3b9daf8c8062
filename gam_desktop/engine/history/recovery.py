"""Recovering from an operation a crash interrupted, without the LLM.

Restore puts back exactly what the interrupted change set touched (the journal lists it
before anything is written): tracked files from the last commit, new files removed.
Nothing else is touched, so a note the person saved meanwhile, or a link out of the
memory (never committed, by design), survives. A rollback or restore (git's own writes)
is reset to the last commit.

Keep makes the files consistent: a document the interrupted operation was adding is
kept only if it was written whole, its source text and every one of its memories; a
partial one is removed (memories and source text), so that adding it again gives it
whole instead of leaving duplicates or a document the app believes it has. Memories
that were there before are never touched. Every README and the meta file are then
recomputed from what is on disk.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import PurePosixPath
from typing import Any

from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.held import retry_git
from gam_desktop.engine.history.journal import Interrupted
from gam_desktop.engine.history.log import TRAILER_KIND
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.derived import regenerate_all
from gam_desktop.engine.store.folder import SOURCES_DIR, MemoryFolder
from gam_desktop.engine.store.portable import remove_tree
from gam_desktop.engine.textutil import plural

SHA256 = re.compile(r"[0-9a-f]{64}")
GIT_OPERATIONS = ("rollback", "restore")  # written by git itself, not by a change set


def clear_git_leftovers(repo: MemoryRepo) -> None:
    """A process killed inside git may leave its lock file, a half-written shared index
    and a half-done revert. A lock file another program holds open (Windows) is tried
    again, then named."""
    lock = repo.root / ".git" / "index.lock"
    with contextlib.suppress(FileNotFoundError):
        retry_git(lock.unlink)
    for unfinished in (repo.root / ".git").glob("sharedindex_*"):  # a split index half-written
        unfinished.unlink(missing_ok=True)
    repo.git("revert", "--quit", check=False)


def restore_last_saved(
    folder: MemoryFolder, repo: MemoryRepo | None, interrupted: Interrupted
) -> str:
    if repo is not None and interrupted.operation in GIT_OPERATIONS:
        repo.git("reset", "-q", "--hard", "HEAD")  # staged new files go too; others stay
        return "restored the last saved state; the interrupted writes were dropped"
    planned = _safe({*interrupted.writes, *interrupted.deletes, *_flat(interrupted.moves)})
    if repo is not None and repo.head() is not None:
        repo.git("reset", "-q")  # whatever the dead process staged
        tracked = set(repo.git("ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0"))
        gone = set(repo.git("ls-files", "--deleted", "-z").split("\0")) - {""}
        near = {str(PurePosixPath(p).parent) for p in planned}  # pruned READMEs too
        back = {p for p in planned if p in tracked} | {
            p for p in gone if str(PurePosixPath(p).parent) in near
        }
        repo.checkout_from_head(back)
        ChangeSet(deletes=sorted(planned - tracked)).apply(folder.root)
        _commit_theirs_apart(repo, interrupted)
        return "restored the last saved state; the interrupted writes were dropped"
    ChangeSet(deletes=sorted(planned)).apply(folder.root)  # a first build: all of it was new
    if interrupted.new_repository and repo is not None:
        # Made by the build itself. Git for Windows' objects are read-only: cleared and
        # removed, or FolderNotRemoved (a stub .git left behind failed every git call).
        remove_tree(folder.root / ".git")
    return "restored the folder as it was before the first build"


def keep_files(folder: MemoryFolder, repo: MemoryRepo | None, interrupted: Interrupted) -> str:
    if repo is not None:
        _take_ours(repo)
        if interrupted.operation not in GIT_OPERATIONS:
            repo.git("reset", "-q")  # what the dead process staged is its own, not theirs
            _commit_theirs_apart(repo, interrupted)
    dropped = drop_partial_documents(folder, interrupted.documents)
    regenerate_all(folder)
    if repo is not None:
        # Always a commit: whether the recomputed files differ from the last commit can
        # depend on the clock (`updated_at` has whole seconds), and the person should see
        # in the history that the interrupted operation was dealt with either way.
        repo.commit_all(
            f"Kept files after an interrupted {interrupted.operation}",
            {TRAILER_KIND: "recover"},
            always=True,
        )
    message = (
        f"kept the files as they are ({plural(folder.load_view().memory_count(), 'note')}); "
        "folder READMEs and counts were recomputed"
    )
    for name, written, planned in dropped:
        message += f"; removed '{name}' ({written} of {plural(planned, 'note')} had been written): "
        message += "add it again"
    return message


def drop_partial_documents(
    folder: MemoryFolder, documents: dict[str, dict[str, Any]]
) -> list[tuple[str, int, int]]:
    """Remove the documents of `documents` (source hash -> name, planned memories) that
    were not written whole; returns (name, memories written, memories planned) of each."""
    changes, dropped = ChangeSet(), []
    for source_hash, entry in documents.items():
        planned = [str(p) for p in entry.get("memories", [])]
        memories = {p for p in planned if p.endswith(".md") and not p.startswith(".gam/")}
        if not SHA256.fullmatch(source_hash) or _safe(memories) != set(planned):
            continue  # not what the app writes: a damaged or crafted journal deletes nothing
        present = [p for p in planned if folder.readable(folder.root / p)]
        source = folder.source_path(source_hash)
        if len(present) == len(planned) and folder.readable(source):
            continue
        changes.deletes += present
        if source.is_file():
            changes.deletes.append(f"{SOURCES_DIR}/{source_hash}.txt")
        dropped.append((str(entry.get("name") or source_hash[:12]), len(present), len(planned)))
    if changes.deletes:
        changes.apply(folder.root)
    return dropped


def _commit_theirs_apart(repo: MemoryRepo, interrupted: Interrupted) -> None:
    """Edits the person had pending when the operation began (it commits them only when it
    writes) are committed on their own, as they would have been: undoing the kept files
    must not undo them. The paths it planned to write are its own."""
    planned = _safe({*interrupted.writes, *interrupted.deletes, *_flat(interrupted.moves)})
    theirs = [path for path in repo.status() if path not in planned]
    if theirs and repo.head() is not None:
        repo.commit_dirty("Manual edits", {TRAILER_KIND: "manual-edit"}, theirs)


def _take_ours(repo: MemoryRepo) -> None:
    """A rollback killed mid-revert leaves conflict markers in READMEs and the meta file
    (they are recomputed next); its half-applied revert is otherwise kept as it is."""
    conflicted = repo.git("diff", "--name-only", "-z", "--diff-filter=U").split("\0")
    conflicted = [p for p in conflicted if p]
    if conflicted:
        repo.git("checkout", "--ours", "--", *conflicted, check=False)
        repo.git("add", "--", *conflicted, check=False)


def _safe(paths: set[str]) -> set[str]:
    """The paths that are plainly inside the memory (a crafted journal names others)."""
    return {p for p in paths if _plain(PurePosixPath(p.replace("\\", "/")))}


def _plain(path: PurePosixPath) -> bool:
    parts = path.parts
    return (
        bool(parts)
        and not path.is_absolute()
        and ".." not in parts
        and parts[0] != ".git"
        and (":" not in parts[0])
    )


def _flat(moves: list[tuple[str, str]]) -> set[str]:
    return {path for pair in moves for path in pair}
