"""Operations on a memory folder that are locked, journaled and committed.

Every operation runs under the writer lock and inside the journal; pending manual
edits are committed first so that each commit holds exactly one operation. Without
git everything still works, uncommitted, and `history_message` says why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from gam_desktop.engine import journal
from gam_desktop.engine.derived import regenerate
from gam_desktop.engine.folder import MemoryFolder
from gam_desktop.engine.gitrepo import GitUnavailable, MemoryRepo
from gam_desktop.engine.history import TRAILER_KIND, History
from gam_desktop.engine.lock import writer_lock
from gam_desktop.engine.models import utc_now

Committer = Callable[[str, dict[str, str]], None]


class InterruptedOperationError(RuntimeError):
    """A previous operation died half-way; the user must choose how to recover first."""


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

    @property
    def repo(self) -> MemoryRepo | None:
        if self._repo is None and self.history_message is None:
            try:
                self._repo = MemoryRepo.open(self.folder.root, self.git_path)
            except GitUnavailable as exc:
                self.history_message = str(exc)
        return self._repo

    @property
    def history(self) -> History | None:
        return History(self.repo) if self.repo is not None else None

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return writer_lock(self.folder, self.lock_timeout, on_wait=self.on_wait)

    def _commit_pending(self, repo: MemoryRepo) -> None:
        # The app's own .gitignore lines go into the operation's commit; anything else
        # dirty is the user's and is committed first, on its own.
        dirty = [path for path in repo.dirty_paths() if path != ".gitignore"]
        if dirty and repo.head() is None:
            repo.commit_all("Started keeping history", {TRAILER_KIND: "snapshot"})
        elif dirty:
            repo.commit_all("Manual edits", {TRAILER_KIND: "manual-edit"})

    @contextlib.contextmanager
    def operation(self, kind: str) -> Iterator[Committer]:
        """Lock, check for an interrupted operation, journal; yields the committer that
        records each applied change set as one commit."""
        with self._lock():
            interrupted = journal.read(self.folder)
            if interrupted is not None:
                raise InterruptedOperationError(
                    f"a previous {interrupted.operation} was interrupted (started "
                    f"{interrupted.started}); recover first: restore the last saved state or "
                    "keep the files as they are (gam-history recover)"
                )
            repo = self.repo
            if repo is not None:
                self._commit_pending(repo)
            head = repo.head() if repo is not None else None
            with journal.recording(self.folder, kind, head, utc_now().isoformat()):
                yield self._committer(repo)

    @staticmethod
    def _committer(repo: MemoryRepo | None) -> Committer:
        def commit(summary: str, trailers: dict[str, str]) -> None:
            if repo is not None:
                repo.commit_all(summary, trailers)

        return commit

    # -- history operations --------------------------------------------------------------

    def _require_history(self) -> History:
        history = self.history
        if history is None:
            raise GitUnavailable(self.history_message or "history is unavailable")
        return history

    def rollback(self, sha: str) -> str:
        history = self._require_history()
        with self._lock():
            return history.rollback(sha, lambda paths: regenerate(self.folder, paths))

    def restore(self, sha: str, summary: str) -> str | None:
        history = self._require_history()
        with self._lock():
            return history.restore(sha, summary)

    def commit_manual_edits(self, timeout: float = 2.0) -> str | None:
        """Commit edits made outside the app (the watcher calls this). If an operation holds
        the folder, give up: that operation commits pending edits before its own."""
        repo = self.repo
        if repo is None:
            return None
        with writer_lock(self.folder, timeout=timeout):
            dirty = repo.dirty_paths()
            if not dirty:
                return None  # already committed (the app's own writes, or another commit)
            noun = "file" if len(dirty) == 1 else "files"
            return repo.commit_all(
                f"Edited {len(dirty)} {noun} outside the app", {TRAILER_KIND: "manual-edit"}
            )

    # -- crash recovery ------------------------------------------------------------------

    def interrupted(self) -> journal.Interrupted | None:
        """The operation a crash left half-done, if any (never one running right now)."""
        try:
            with writer_lock(self.folder, timeout=0):
                return journal.read(self.folder)
        except Exception:  # busy: an operation is running, so nothing was interrupted
            return None

    def recover(self, restore: bool) -> str:
        """Restore the last commit (dropping the half-done writes) or keep the files."""
        with self._lock():
            interrupted = journal.read(self.folder)
            repo = self.repo
            if interrupted is None:
                return "nothing to recover"
            if restore and repo is None:
                raise GitUnavailable(self.history_message or "history is unavailable")
            if restore and repo is not None:
                repo.git("reset", "-q", "--hard", "HEAD")
                repo.git("clean", "-q", "-fd")
                message = "restored the last saved state; the interrupted writes were dropped"
            else:
                if repo is not None:
                    repo.commit_all(
                        f"Kept files after an interrupted {interrupted.operation}",
                        {TRAILER_KIND: "recover"},
                    )
                message = "kept the files as they are"
            journal.clear(self.folder)
            return message
