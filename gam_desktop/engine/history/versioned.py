"""Operations on a memory folder that are locked, journaled and committed.

Every writing operation runs under the writer lock and inside the journal; manual edits
pending when it writes are committed first, on their own, so that each commit holds
exactly one operation.
A change set and its commit succeed together or not at all: when git cannot record
it (a full disk), the files are put back. Files another program changed while the
operation ran are never overwritten. Without git everything still works,
uncommitted, and `history_message` says why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.gitrepo import GitUnavailable, MemoryRepo, UnsafeHistory
from gam_desktop.engine.history.held import retry_git, stale_locks
from gam_desktop.engine.history.log import TRAILER_KIND, History
from gam_desktop.engine.history.recovery import clear_git_leftovers, keep_files, restore_last_saved
from gam_desktop.engine.models import META_FILE, utc_now
from gam_desktop.engine.store.changes import OUTSIDE_EDIT, RESTORE, ROLLBACK, Changes
from gam_desktop.engine.store.changeset import ChangeSet, PutBackError, StoreError, clear_undo
from gam_desktop.engine.store.derived import regenerate
from gam_desktop.engine.store.folder import APP_DIR, JOURNAL_FILE, MemoryFolder, stat_files
from gam_desktop.engine.store.gitdir import (
    UnsafeRepositoryError,
    kind_of,
    left_out,
    special_files,
)
from gam_desktop.engine.store.lock import check_lock_file, writer_lock
from gam_desktop.engine.store.markdown import README, merge_readme
from gam_desktop.engine.textutil import plural

log = logging.getLogger(__name__)


class InterruptedOperationError(GamError, RuntimeError):
    """A previous operation died half-way; the user must choose how to recover first."""

    title = "An earlier operation was interrupted"
    advice = (
        "Restore the last saved state or keep the files as they are: reopen the memory to be "
        "asked, or run gam-history recover."
    )


def _when(started: str) -> str:
    """An ISO time from the journal as a person reads it, in local time: "on 3 Nov 2025 at
    14:05" (the GUI shows the journal's time in its locale itself)."""
    try:
        moment = datetime.fromisoformat(started).astimezone()
    except ValueError:
        return started
    return f"on {moment.day} {moment:%b %Y} at {moment:%H:%M}"


def _must_recover(interrupted: journal.Interrupted) -> InterruptedOperationError:
    return InterruptedOperationError(
        f"a previous {interrupted.operation} was interrupted (it began "
        f"{_when(interrupted.started)}) and must be recovered first"
    )


class ConcurrentEditError(StoreError):
    """Another program changed a file this operation was about to replace."""


StatKey = tuple[int, int, int]

# A folder whose files are timed by a clock this far from this machine's is on another
# machine (a network drive): the start of an operation is taken by that clock.
CLOCK_SKEW_NS = 1_000_000_000


def _stat_key(path: Path) -> StatKey | None:
    try:
        return _key(path.stat(follow_symlinks=False))
    except OSError:
        return None


def _key(stat: os.stat_result) -> StatKey:
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class Transaction:
    """What a running operation writes through: each change set is checked against
    outside edits, journaled, applied and committed, or (on failure) undone."""

    def __init__(
        self,
        folder: MemoryFolder,
        repo: MemoryRepo | None,
        recording: journal.Recording,
        started_ns: int,
    ) -> None:
        self.folder = folder
        self.repo = repo
        self.recording = recording
        # What the folder looked like when the operation started: a file that differs
        # later was changed by someone else while the LLM was thinking. With git, what git
        # says differs from the last commit when a change set is written, saved after the
        # start (a look at every file costs ~150 ms at 100,000 files: one per write, none
        # at the start). Without, every file's stat (a walk: a second at 100,000 files).
        self.started_ns = started_ns
        self._refreshed = False  # the first status may rewrite the index's stale file times
        self.baseline: dict[str, StatKey | None] = {}
        if repo is None:
            self.baseline = {rel: _key(stat) for rel, stat in stat_files(folder.root).items()}
            self.baseline[META_FILE] = _stat_key(folder.meta_path)
        self.commits: list[str] = []  # the commits this operation made, oldest first
        # Named pipes, sockets and devices in the memory, which git cannot record: left out
        # of its commits, one line each (`store.gitdir.left_out`), after each commit.
        self.left_out: list[str] = []
        self._steps: list[Changes] = []  # without git: what each change set did

    def write(
        self,
        changes: ChangeSet,
        summary: str,
        trailers: dict[str, str],
        committing: Callable[[], None] | None = None,
    ) -> None:
        """Apply `changes` and commit them as one operation; `committing()` is called
        between the two (a progress bar names the commit, which takes seconds in a big
        memory)."""
        differs = self._differs()
        self._keep_outside_edits(changes, differs)
        moved_by_others = self._structure_changed(changes, differs)
        self.recording.plan(changes)
        root = self.folder.root
        existed = set()
        if self.repo is None:  # no commit will say what was added: note what is there now
            existed = {p for p in changes.targets() if (root / p).exists()}
        applied = [changes.apply(root)]
        try:
            if moved_by_others:  # memories added or deleted meanwhile: listings follow them
                applied.append(regenerate(self.folder, _readmes_above(moved_by_others)))
            if self.repo is not None:
                if committing is not None:
                    committing()
                paths = set().union(*(a.paths for a in applied))
                # On failure the index is put back as it was (commit_all)
                repo = self.repo  # (another git's index.lock: retried on Windows)
                sha = retry_git(lambda: repo.commit_all(summary, trailers, paths=paths))
                self.commits += [sha] if sha else []
        except BaseException as exc:  # a full disk, a cancel, a bug: the files go back
            # Putting back renames the old versions kept aside (applying made them): it
            # needs no space, so a full disk cannot leave the app's writes behind.
            failed = [what for done in reversed(applied) for what in done.undo()]
            if failed:  # part changed: said so, and the journal stays for recovery
                what = str(getattr(exc, "strerror", None) or exc)
                what = what.removesuffix("; nothing was changed")
                raise PutBackError(getattr(exc, "errno", None), what, failed) from exc
            raise
        for done in applied:  # committed: the old versions are no longer needed
            done.discard()
        self.recording.done()
        written = set().union(*(a.paths for a in applied))
        if self.repo is None:
            self._steps.append(_applied(root, changes, written, existed))
            for rel in written:  # the app's own writes (with git: committed)
                self.baseline[rel] = _stat_key(root / rel)
        else:
            self._say_left_out()

    def _say_left_out(self) -> None:
        """What the memory holds that its commits could not record, said once each."""
        try:
            found = special_files(self.folder.root)
        except UnsafeRepositoryError:  # appeared meanwhile: the next operation refuses it
            return
        for rel, kind in found:
            line = left_out(rel, kind)
            if line not in self.left_out:
                log.warning("%s", line)
                self.left_out.append(line)

    def _differs(self) -> dict[str, str] | None:
        """What git says differs from the last commit (one look at every file), or None
        without git. A folder made a link meanwhile is refused here, naming it, before
        anything is written or committed (git could record nothing under it)."""
        if self.repo is None:
            return None
        self.repo.refuse_linked_folders()
        differs = self.repo.status(refresh=not self._refreshed)
        self._refreshed = True
        return differs

    def changes(self, kind: str) -> Changes:
        """What this operation changed: from its commits' name-status, or without git
        from the change sets it applied."""
        if self.repo is not None:
            return History(self.repo).committed(kind, self.commits)
        return Changes.combined(kind, self._steps)

    def _structure_changed(self, changes: ChangeSet, differs: dict[str, str] | None) -> set[str]:
        """Memories someone else added or deleted since the operation started (`differs`:
        what git says differs from the last commit, or None without git)."""
        ours = changes.targets()
        if differs is not None:
            added_or_deleted = {
                p for p, code in differs.items() if code == "??" or {"A", "D"} & set(code)
            }
            # One saved before the operation began was there when it looked (committed first)
            moved = {p for p in added_or_deleted if _listed(p) and not self._saved_before_start(p)}
        else:
            now = set(stat_files(self.folder.root))
            # The baseline also holds what stat_files (visible Markdown only) never lists: the
            # meta file, and the documents' text an earlier change set of this operation wrote
            # under .gam/sources (taken for memories deleted meanwhile, they had every README
            # and the meta file recomputed from every memory's front matter, once per write).
            before = {rel for rel, key in self.baseline.items() if key is not None and _listed(rel)}
            moved = now ^ before
        return {p for p in moved - ours if not p.endswith(f"/{README}") and p != README}

    def _keep_outside_edits(self, changes: ChangeSet, differs: dict[str, str] | None) -> None:
        """Commit edits made meanwhile as their own operation; a README edited meanwhile
        keeps the person's title and description; any other file edited meanwhile that
        this change set would replace stops the operation before it writes anything."""
        root = self.folder.root
        targets = {
            rel for rel in {*changes.writes, *changes.deletes} if not rel.startswith(f"{APP_DIR}/")
        }
        if differs is not None:
            changed = sorted(targets & differs.keys())
            # Edited before the operation began: the person's, committed below, then replaced
            # like any file (the operation read it as it is now).
            before = {rel for rel in changed if self._saved_before_start(rel)}
        else:
            before = set()
            changed = sorted(
                rel for rel in targets if _stat_key(root / rel) != self.baseline.get(rel)
            )
        readmes = [
            rel for rel in changed if rel.rsplit("/", 1)[-1] == README and rel in changes.writes
        ]
        others = [rel for rel in changed if rel not in readmes and rel not in before]
        if others:
            if self.repo is not None:  # theirs recorded, so trying again does not meet it
                _commit_pending(self.repo, differs)
            raise ConcurrentEditError(
                16,
                f"'{others[0]}' was changed by another program while this operation ran; "
                "nothing was written, so nothing of yours was lost. Try again.",
            )
        if self.repo is not None:
            _commit_pending(self.repo, differs)
        for rel in readmes:
            if not (root / rel).is_file():  # deleted meanwhile: nothing of theirs to keep
                continue
            theirs = (root / rel).read_text(encoding="utf-8", errors="replace")
            ours = changes.writes[rel]
            changes.writes[rel] = merge_readme(
                ours if isinstance(ours, str) else ours.decode(), theirs
            )

    def _saved_before_start(self, rel: str) -> bool:
        """Whether `rel` was last saved before the operation began (a deleted file cannot
        say when: it counts as deleted meanwhile). Times are the folder's clock's (see
        `_folder_clock`); one that keeps them to seconds (FAT) may count a file saved
        just after the start as before: it is then replaced, its bytes kept in its own
        commit."""
        try:
            stat = (self.folder.root / rel).stat(follow_symlinks=False)
        except OSError:
            return False
        # And its inode's change time: a copy, a move or a sync that kept an old file time
        # (cp -p, a file manager, Syncthing) still changed the file now.
        return max(stat.st_mtime_ns, stat.st_ctime_ns) < self.started_ns


def _folder_clock(folder: MemoryFolder, local_ns: int) -> int:
    """When the operation began, by the clock that times the folder's files: the journal
    just written says it. A network drive's server may be a minute off this machine's
    clock: then its time. Otherwise this machine's, which orders a file saved just before
    the start before it (a file's time may be a coarse tick of the same clock)."""
    try:
        written = (folder.root / JOURNAL_FILE).stat().st_mtime_ns
    except OSError:
        return local_ns
    return written if abs(written - local_ns) > CLOCK_SKEW_NS else local_ns


def _listed(rel: str) -> bool:
    """Whether `stat_files` lists `rel`: a Markdown file with no hidden part."""
    return rel.endswith(".md") and not any(part.startswith(".") for part in rel.split("/"))


def _applied(root: Path, changes: ChangeSet, written: set[str], existed: set[str]) -> Changes:
    """What one applied change set did (used without git, where no commit says it):
    `written` is every path it and the listings it refreshed touched, `existed` which of
    its targets were there before."""
    moved = frozenset(changes.moves)
    rest = written - {p for pair in moved for p in pair}
    now = {p for p in rest if (root / p).exists()}
    return Changes(
        "step",
        added=frozenset(p for p in now if p in changes.targets() and p not in existed),
        modified=frozenset(p for p in now if p not in changes.targets() or p in existed),
        removed=frozenset(rest - now),
        moved=moved,
    )


def _readmes_above(paths: set[str]) -> list[str]:
    """The README of every folder holding one of `paths`, and of every folder above it
    (their counts change), plus the meta file."""
    readmes = {README}
    for path in paths:
        parts = path.split("/")[:-1]
        readmes |= {"/".join([*parts[:i], README]) for i in range(1, len(parts) + 1)}
    return [*sorted(readmes), META_FILE]


def _commit_pending(
    repo: MemoryRepo, differs: dict[str, str] | None = None, refresh: bool = False
) -> None:
    """Anything dirty (`differs`, or what git says now) is the user's and is committed
    first, on its own."""
    dirty = differs if differs is not None else repo.status(refresh=refresh)
    if not dirty:
        return
    summary, kind = (
        ("Started keeping history", "snapshot")
        if repo.head() is None
        else ("Manual edits", "manual-edit")
    )
    # (another git's lock file: retried on Windows, then named with what to do)
    retry_git(lambda: repo.commit_dirty(summary, {TRAILER_KIND: kind}, dirty))


@dataclass(frozen=True)
class RecordedEdits:
    """Edits the watcher saw, once recorded: the commit made for them (None when there was
    nothing to commit or no git), which paths really were outside edits, what changed on
    disk (the commit's files, and the other paths seen), the last commit afterwards, and
    one line for each path seen that git cannot record (a named pipe, a socket, a device),
    left out of the commit while the rest is recorded."""

    commit: str | None
    outside: list[str]
    changes: Changes
    head: str | None = None
    left_out: list[str] = field(default_factory=list)


class VersionedFolder:
    def __init__(
        self,
        folder: MemoryFolder,
        git_path: str | None = None,
        lock_timeout: float = 600.0,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        self.folder = folder
        self.git_path = git_path
        self.lock_timeout = lock_timeout
        self.on_wait = on_wait
        self._repo: MemoryRepo | None = None
        self.history_message: str | None = None  # why history is off, when it is
        self._refusal: UnsafeRepositoryError | None = None  # why nothing may be written

    @property
    def repo(self) -> MemoryRepo | None:
        if self._repo is not None and not (self.folder.root / ".git").exists():
            self._repo = None  # removed (undoing a first build, or by hand): make it anew
        if self._repo is None and self.history_message is None:
            try:
                self._repo = MemoryRepo.open(self.folder.root, self.git_path)
            except GitUnavailable as exc:
                self.history_message = str(exc)
                if isinstance(exc, UnsafeHistory):  # every writing operation is refused
                    self._refusal = exc.refusal
        return self._repo

    def _refuse_if_unsafe(self) -> None:
        """A repository leading out of the memory, or one git would wait on forever: no
        operation writes the memory (not even without history)."""
        if os.path.lexists(self.folder.root / ".git"):
            _ = self.repo  # opened: its configuration checked
        if self._refusal is not None:
            raise self._refusal

    @property
    def history(self) -> History | None:
        return History(self.repo) if self.repo is not None else None

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return writer_lock(self.folder, self.lock_timeout, on_wait=self.on_wait)

    @contextlib.contextmanager
    def operation(self, kind: str) -> Iterator[Transaction]:
        """Lock, refuse while an interrupted operation awaits recovery, journal; yields
        the Transaction the operation writes through (which commits edits pending when it
        writes). A rollback or a restore, which git writes itself, commits them first."""
        with self._lock():
            interrupted = journal.read(self.folder)
            if interrupted is not None:
                raise _must_recover(interrupted)
            clear_undo(self.folder.root)  # old versions a process that died kept aside
            # Before the repository is opened (which may `git init`): undoing a first
            # build removes the repository only if the build made it.
            new_repository = not (self.folder.root / ".git").exists()
            repo = self.repo
            self._refuse_if_unsafe()
            if repo is not None and kind in (ROLLBACK, RESTORE):  # git needs a clean tree
                _commit_pending(repo, refresh=True)  # (stale file times refreshed too)
            started_ns = time.time_ns()
            head = repo.head() if repo is not None else None
            started = utc_now().isoformat()
            with journal.recording(self.folder, kind, head, started, new_repository) as recording:
                started_ns = _folder_clock(self.folder, started_ns)
                yield Transaction(self.folder, repo, recording, started_ns)

    # -- history operations --------------------------------------------------------------

    def _require_history(self) -> History:
        history = self.history
        if history is None:
            raise GitUnavailable(self.history_message or "history is unavailable")
        return history

    def rollback(self, sha: str) -> Changes:
        """Undo one operation as a new commit; returns what that commit changed."""
        history = self._require_history()

        def once() -> str:  # git's own deletes: a file held open is retried on Windows
            with self.operation(ROLLBACK), self._reset_on_failure(history.repo):
                return history.rollback(sha, lambda paths: regenerate(self.folder, paths))

        return history.committed(ROLLBACK, [retry_git(once)])

    def restore(self, sha: str, summary: str) -> Changes:
        """Make the folder as it was at `sha`, as a new commit (none when it already is)."""
        history = self._require_history()

        def once() -> str | None:  # as rollback: a file held open is retried on Windows
            with self.operation(RESTORE), self._reset_on_failure(history.repo):
                return history.restore(sha, summary)

        new = retry_git(once)
        return history.committed(RESTORE, [new] if new else [])

    @staticmethod
    @contextlib.contextmanager
    def _reset_on_failure(repo: MemoryRepo) -> Iterator[None]:
        """A rollback or restore that could not be committed leaves the last commit."""
        try:
            yield
        except StoreError:
            repo.git("revert", "--quit", check=False)
            repo.git("reset", "-q", "--hard", "HEAD", check=False)
            raise

    def commit_manual_edits(self, paths: list[str], timeout: float = 30.0) -> RecordedEdits:
        """Commit edits made outside the app (the watcher calls this with the paths it saw).
        Says which of `paths` really were outside edits: paths already committed were
        written by the app (this process or another, a rollback too). If an operation
        holds the folder past `timeout`, FolderBusyError: it commits pending edits itself."""
        seen = Changes.seen(OUTSIDE_EDIT, self.folder.root, paths)
        memory = self.folder.is_memory()
        # No longer a memory (its first build rolled back, or restored to before it): the
        # repository that recorded that is still there, and still tells the app's own
        # writes from a person's; only a folder without one has no repository to make.
        if not memory and not (self.folder.root / ".git").is_dir():
            return RecordedEdits(None, paths, seen)
        repo = self.repo
        if repo is None:
            return RecordedEdits(None, paths, seen)
        with writer_lock(self.folder, timeout=timeout):
            if journal.read(self.folder) is not None:  # an interrupted operation's files:
                return RecordedEdits(None, [], seen, repo.head())  # recovery decides
            dirty = set(repo.dirty_paths())  # (without what git cannot record)
            outside = [p for p in paths if p in dirty or any(d.startswith(f"{p}/") for d in dirty)]
            if not memory:  # not a memory: edits there are not recorded
                return RecordedEdits(None, outside, seen, repo.head())
            unrecorded = [
                left_out(p, kind) for p in sorted(paths) if (kind := kind_of(self.folder.root / p))
            ]
            for line in unrecorded:
                log.warning("%s", line)
            sha = None
            if dirty:
                summary = f"Edited {plural(len(dirty), 'file')} outside the app"
                sha = retry_git(
                    lambda: repo.commit_dirty(summary, {TRAILER_KIND: "manual-edit"}, dirty)
                )
            if sha is None:
                return RecordedEdits(None, outside, seen, repo.head(), unrecorded)
            committed = History(repo).committed(OUTSIDE_EDIT, [sha])
            return RecordedEdits(sha, outside, committed.merged(seen), sha, unrecorded)

    # -- crash recovery ------------------------------------------------------------------

    def check_recovered(self) -> None:
        """Refuse before any work (any LLM call) when a crash left an operation to recover;
        an operation running now is no reason (`operation` waits for it). Nor a lock file
        that cannot be taken (a link), nor a folder of the memory made a link (git could
        record no change while it is): said now, not after the LLM calls."""
        check_lock_file(self.folder)
        self._refuse_if_unsafe()
        if os.path.lexists(self.folder.root / ".git") and self.repo is not None:
            self.repo.refuse_linked_folders()
            if stale := stale_locks(self.folder.root / ".git"):  # a git killed mid-commit
                raise stale[0]
        interrupted = self.interrupted()
        if interrupted is not None:
            raise _must_recover(interrupted)

    def interrupted(self) -> journal.Interrupted | None:
        """The operation a crash left half-done, if any (never one running right now)."""
        try:
            with writer_lock(self.folder, timeout=0):
                return journal.read(self.folder)
        except Exception:  # busy: an operation is running, so nothing was interrupted
            return None

    def recover(self, restore: bool) -> str:
        """Restore the last commit (dropping the half-done writes) or keep the files,
        made consistent (READMEs and counts recomputed, half-written documents dropped)."""
        with self._lock():
            interrupted = journal.read(self.folder)
            if interrupted is None:
                return "nothing to recover"
            repo = self.repo
            if repo is not None:
                clear_git_leftovers(repo)
            if restore:
                if repo is None and interrupted.head is not None:
                    raise GitUnavailable(self.history_message or "history is unavailable")
                message = restore_last_saved(self.folder, repo, interrupted)
            else:
                message = keep_files(self.folder, repo, interrupted)
            journal.clear(self.folder)
            clear_undo(self.folder.root)
            return message
