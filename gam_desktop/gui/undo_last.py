"""Edit ▸ Undo (Ctrl+Z): the memory's last operation rolled back through the History's own
rollback (`HistoryActions.roll_back`: what it would change, read on a worker, then asked,
the answer's buttons saying what they do). There was no Ctrl+Z for a rollback.

Which operation is the last is read on a task thread (no git on the GUI thread) when a
memory opens and after every change; the menu item names it ("Undo “Added 3 documents”")
and is off, with a tooltip saying why, while there is nothing to undo. In a text box Ctrl+Z
stays the box's own (Qt gives the focused editor the shortcut first).
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from gam_desktop.engine.api import Operation, interrupted_operation, last_operation
from gam_desktop.gui import words
from gam_desktop.gui.history_actions import HistoryActions
from gam_desktop.gui.history_panel import ROLLBACK
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import TaskRunner

TASK = "undo-last"  # reading which operation is the last
LABEL = "&Undo"
SHOWN = 48  # characters of the operation's summary in the menu item
NO_MEMORY = "Nothing to undo: no memory is open"
NO_HISTORY = "Nothing to undo: history is off for this memory (git was not found)"
NOTHING_YET = "Nothing to undo yet: this memory has no operation in its history"


def undo_label(operation: Operation | None) -> str:
    """The menu item's words: "Undo “Added 3 documents”" (cut with "…" when long)."""
    if operation is None:
        return LABEL
    summary = " ".join(words.counted_notes(operation.summary).replace("&", "&&").split())
    if len(summary) > SHOWN:
        summary = summary[: SHOWN - 1].rstrip() + "…"
    return f"{LABEL} “{summary}”"


class UndoLast(QObject):
    """Keeps `action` (Edit ▸ Undo) on the open memory's last operation."""

    def __init__(
        self,
        session: MemorySession,
        tasks: TaskRunner,
        actions: HistoryActions,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = tasks
        self.actions = actions
        self.last: Operation | None = None
        self.action: QAction | None = None
        self._why_not = NO_MEMORY
        self._generation = 0  # bumped at every read: an older answer is dropped
        session.opened.connect(lambda _root, _folder: self.refresh())
        session.memory_changed.connect(lambda _changes: self.refresh())

    def attach(self, action: QAction) -> None:
        """Show the last operation on `action` (the menu's; it calls `undo`)."""
        self.action = action
        self._show()

    def refresh(self) -> None:
        """Read which operation is the last one now (on a task thread)."""
        self._generation += 1
        generation = self._generation
        source, workflow = self.session.history_source(), self.session.workflow
        if source is None or workflow is None or interrupted_operation(workflow.folder):
            self._found(generation, None)  # (a journal: a crash's recovery comes first)
            return
        self.tasks.start(
            TASK,
            lambda _worker, _cancel: last_operation(source.root, source.git_path),
            on_success=lambda operation: self._found(generation, operation),
            on_failure=lambda _error: self._found(generation, None),
        )

    def _found(self, generation: int, operation: Operation | None) -> None:
        if generation != self._generation:
            return  # the memory changed again meanwhile: a newer read follows
        self.last = operation
        if self.session.workflow is None:
            self._why_not = NO_MEMORY
        elif self.session.history_source() is None:
            self._why_not = NO_HISTORY
        else:
            self._why_not = NOTHING_YET
        self._show()

    def _show(self) -> None:
        action, last = self.action, self.last
        if action is None:
            return
        action.setEnabled(last is not None)
        action.setText(undo_label(last))
        if last is None:
            action.setToolTip(self._why_not)
        else:
            undone = "rollback" if last.kind == ROLLBACK else "operation"
            action.setToolTip(
                f"Roll back the last {undone}, “{words.counted_notes(last.summary)}”, as "
                "History's Roll back "
                "does (you are asked first; the undo can itself be undone)"
            )

    def undo(self) -> None:
        """Ctrl+Z: the last operation rolled back, asked first (as from History)."""
        if self.last is not None and self.action is not None and self.action.isEnabled():
            self.actions.roll_back(self.last)
