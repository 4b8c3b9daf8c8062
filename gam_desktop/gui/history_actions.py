"""Undoing operations and reorganizing folders, asked for in the History panel and the tree.

No git on the GUI thread: what a rollback would change is read on a worker before asking.
"""

from __future__ import annotations

from collections.abc import Callable

from gam_desktop.engine.api import (
    FileChange,
    Operation,
    ReorganizeOperation,
    plural,
    restore_summary,
    rollback_summary,
)
from gam_desktop.gui import words
from gam_desktop.gui.history_panel import rollback_label
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import TaskRunner


class HistoryActions:
    """Roll back, undo a rollback, restore to before an operation, reorganize a folder."""

    def __init__(
        self,
        session: MemorySession,
        tasks: TaskRunner,
        prompter: Prompter,
        review: Callable[[ReorganizeOperation], bool],
    ) -> None:
        """`review(plan)`: show a reorganization's plan; True when the person applies it."""
        self.session = session
        self.tasks = tasks
        self.prompter = prompter
        self.review = review

    def roll_back(self, operation: Operation) -> None:
        """Ask, with what the rollback would change (read on a worker thread), then run it."""
        source = self.session.history_source()
        if source is None or self.tasks.running("rollback-plan"):
            return
        self.tasks.start(
            "rollback-plan",
            lambda w, c: source.open().changes(operation.sha),
            on_success=lambda changes: self._confirm_rollback(operation, changes),
            on_failure=self.prompter.show_error,
        )

    def _confirm_rollback(self, operation: Operation, changes: list[FileChange]) -> None:
        counts: dict[str, int] = {}
        for change in changes:
            counts[change.status] = counts.get(change.status, 0) + 1
        effect = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        doing = rollback_label(operation).removesuffix("…")  # as the History's button says
        if not self.prompter.confirm(
            "Roll back this operation?" if doing == "Roll back" else f"{doing}?",
            f"“{words.counted_notes(operation.summary)}”\n\nIts changes to "
            f"{plural(len(changes), 'file')} "
            f"({effect}) will be reversed as a new operation, which you can "
            "undo in turn.",
            buttons=(doing, "Cancel"),
        ):
            return
        self.session.write(
            "rollback",
            lambda workflow: workflow.rollback(operation.sha),
            "Rolling back…",
            lambda _sha: rollback_summary(operation),
        )

    def restore_before(self, operation: Operation) -> None:
        if not self.prompter.confirm(
            "Restore the whole memory?",
            f"The memory will be made exactly as it was before “"
            f"{words.counted_notes(operation.summary)}”. Later operations are undone too; all of "
            "it stays in the history.",
            buttons=("Restore", "Cancel"),
        ):
            return
        self.session.write(
            "rollback",
            lambda workflow: workflow.restore_before(operation.sha),
            "Restoring…",
            lambda _sha: restore_summary(operation),
        )

    def plan_reorganization(self, path: str) -> None:
        """Show what reorganizing `path` would move (planned on a worker), then carry out
        that plan as shown (no second LLM call, so no other plan than the one seen)."""
        self.session.read(
            "reorganize",
            lambda workflow: workflow.plan_reorganization(path),
            f"Planning {path}/…",
            lambda plan: self._confirm_reorganization(path, plan),
        )

    def _confirm_reorganization(self, path: str, plan: ReorganizeOperation) -> None:
        if not plan.moved_files:
            self.prompter.tell("Nothing to reorganize", f"{path}/ is already well organized.")
            return
        if not self.review(plan):  # the planning's last words ("5 would move") must go
            self.session.status.emit(f"Reorganization of {path}/ not applied; nothing changed")
            return
        self.session.write(
            "reorganize",
            lambda workflow: workflow.reorganize(plan=plan),
            f"Reorganizing {path}/…",
            lambda op: f"Reorganized {path}/: {plural(len(op.moved_files), 'note')} moved",
        )
