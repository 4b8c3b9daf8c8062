"""Undoing operations and reorganizing folders from the History panel and the tree.

A mixin of MainWindow (it uses the window's workflow, tasks, history_source, task_workflow,
confirm, tell, show_error, _run and _after_change). No git on the GUI thread: what a rollback
would change is read on a worker before asking.
"""

from __future__ import annotations

from gam_desktop.engine.history.log import FileChange, Operation


class HistoryActions:
    """Roll back, undo a rollback, restore to before an operation, reorganize a folder."""

    def roll_back(self, operation: Operation) -> None:
        """Ask, with what the rollback would change (read on a worker thread), then run it."""
        source = self.history_source()
        if source is None or self.tasks.running("rollback-plan"):
            return
        self.tasks.start(
            "rollback-plan",
            lambda w, c: source.open().changes(operation.sha),
            on_success=lambda changes: self._confirm_rollback(operation, changes),
            on_failure=self.show_error,
        )

    def _confirm_rollback(self, operation: Operation, changes: list[FileChange]) -> None:
        counts: dict[str, int] = {}
        for change in changes:
            counts[change.status] = counts.get(change.status, 0) + 1
        effect = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        verb = "Undo the rollback of" if operation.kind == "rollback" else "Roll back"
        if not self.confirm(
            f"{verb} this operation?",
            f"“{operation.summary}”\n\nIts changes to {len(changes)} files "
            f"({effect}) will be reversed as a new operation, which you can "
            "undo in turn.",
        ):
            return
        self._run(
            "rollback",
            lambda w, c: self.task_workflow(c).rollback(operation.sha),
            "Rolling back…",
            lambda sha: self._after_change(f"Rolled back: {operation.summary}"),
        )

    def restore_before(self, operation: Operation) -> None:
        if not self.confirm(
            "Restore the whole memory?",
            f"The memory will be made exactly as it was before “"
            f"{operation.summary}”. Later operations are undone too; all of "
            "it stays in the history.",
        ):
            return
        self._run(
            "rollback",
            lambda w, c: self.task_workflow(c).restore_before(operation.sha),
            "Restoring…",
            lambda sha: self._after_change(f"Restored to before: {operation.summary}"),
        )

    def plan_reorganization(self, path: str) -> None:
        def show_plan(plan) -> None:
            if not plan.moved_files:
                self.tell("Nothing to reorganize", f"{path}/ is already well organized.")
                return
            moves = "\n".join(f"• {old} → {new}" for old, new in plan.moved_files[:25])
            more = (
                f"\n… and {len(plan.moved_files) - 25} more" if len(plan.moved_files) > 25 else ""
            )
            if self.confirm(
                f"Reorganize {path}/?",
                f"{len(plan.moved_files)} memories would move into "
                f"{len(plan.new_directories)} new folders:\n{moves}{more}",
            ):
                self._run(
                    "reorganize",
                    lambda w, c: self.task_workflow(c).reorganize(path),
                    f"Reorganizing {path}/…",
                    lambda op: self._after_change(
                        f"Reorganized {path}/: {len(op.moved_files)} memories moved"
                    ),
                )

        self._run(
            "reorganize",
            lambda w, c: self.task_workflow(c).reorganize(path, dry_run=True),
            f"Planning {path}/…",
            show_plan,
        )
