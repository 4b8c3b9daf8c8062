"""The memory's history: its operations log, undoing one operation (a rollback), making the
memory as it was before one, and finishing an operation a crash interrupted. Each of those
writes reports what it changed."""

from __future__ import annotations

from gam_desktop.engine.history.journal import Interrupted
from gam_desktop.engine.history.log import History, NothingToUndo, restore_summary
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.store.changes import RECOVER, Changes


class HistoryOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context

    @property
    def log(self) -> History | None:
        """The operations log; None when git is unavailable (`message` then says why)."""
        return self.context.versioned.history

    @property
    def message(self) -> str | None:
        return self.context.versioned.history_message

    def rollback(self, sha: str) -> str:
        """Undo one operation as a new commit (returned); RollbackConflict when later ones
        collide."""
        changes = self.context.versioned.rollback(sha)
        self.context.changed(changes)
        assert changes.commit is not None  # History.rollback raised NothingToUndo otherwise
        return changes.commit

    def restore_before(self, sha: str) -> str | None:
        """Make the whole memory as it was just before operation `sha` (a new commit)."""
        versioned = self.context.versioned
        history = versioned._require_history()
        operation = history.get(sha)
        parent = history.repo.git("rev-parse", "--verify", "-q", f"{sha}^", check=False).strip()
        if not parent:
            raise NothingToUndo(f"'{operation.summary}' is the first operation; nothing before it")
        changes = versioned.restore(parent, restore_summary(operation))
        self.context.changed(changes)
        return changes.commit

    def interrupted(self) -> Interrupted | None:
        return self.context.versioned.interrupted()

    def recover(self, restore: bool) -> str:
        """Finish an interrupted operation: restore the last commit or keep the files. What
        it changed is not listed (the files the crash left are not known), so the change it
        reports touches everything."""
        message = self.context.versioned.recover(restore)
        self.context.changed(Changes(RECOVER, everything=True))
        return message
