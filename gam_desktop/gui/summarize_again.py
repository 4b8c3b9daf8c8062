"""Memory ▸ Summarize again: the memories written without the LLM (its calls kept failing
during their add; `fallback: true`) summarized again with it, in their place, as one
operation with its progress and Cancel in the status bar (`Workflow.summarize_again`).

How many there are is counted on a task thread (it reads every memory's file) when a memory
opens and after every change to it; the menu item says so ("Summarize again (3 notes)")
and is off while there are none. No memory logic here: the engine finds, summarizes and
writes.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.api import (
    PERSONAL_DIRS,
    CancelToken,
    Changes,
    notes_in,
    plural,
)
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import Worker

TASK = "summarize-again"  # the operation (status bar, Cancel)
COUNT_TASK = "fallbacks"  # counting them (quiet)
MENU_LABEL = "Summarize &again"


def label(count: int) -> str:
    """The menu item's words: "Summarize again (3 notes)", "Summarize again" with none."""
    return f"{MENU_LABEL} ({plural(count, 'note')})" if count else MENU_LABEL


class SummarizeAgain(QObject):
    """Signals: counted(n) each time the open memory's memories written without the LLM
    have been counted (0 when no memory is open)."""

    counted = Signal(int)

    def __init__(
        self, session: MemorySession, prompter: Prompter, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.prompter = prompter
        self.count = 0
        self._counting: Path | None = None  # the memory being counted, while it is
        self._stale = False  # it changed while it was counted: count again
        self._left_after_run = False  # say what is left once counted after a run
        session.opened.connect(lambda _root, _folder: self._opened())
        session.memory_changed.connect(self._changed)

    # -- how many ------------------------------------------------------------------------

    def _opened(self) -> None:
        """Another memory: none known until it is counted. Summarizing again in the one
        before stops (nothing written, what it summarized kept for the next time), so that
        what it would write is never announced to the new memory's views."""
        self.cancel()
        self.count = 0
        self.counted.emit(0)
        self.recount()

    def _changed(self, changes: Changes) -> None:
        """Counted again when a memory of the document tree may have changed (not for a
        chat turn, a fact or a research report)."""
        if changes.everything or any(_in_tree(path) for path in changes.paths):
            self.recount()

    def recount(self) -> None:
        """Count the open memory's memories written without the LLM, on a task thread."""
        if self.session.workflow is None:
            return
        if self._counting is not None:
            self._stale = True
            return
        workflow = self.session.task_workflow()
        self._counting = workflow.folder.root

        def job(_worker: Worker, _cancel: CancelToken) -> int:
            return len(workflow.fallback_memories())

        self.session.operations.tasks.start(
            COUNT_TASK,
            job,
            on_success=lambda count: self._counted(workflow.folder.root, count),
            on_failure=lambda _error: self._counted(workflow.folder.root, None),
            on_cancel=lambda: self._counted(workflow.folder.root, None),
            cancel=workflow.cancel,
        )

    def _counted(self, root: Path, count: int | None) -> None:
        self._counting = None
        current = self.session.workflow
        if self._stale or current is None or current.folder.root != root:
            self._stale = False  # changed, or another memory opened: what it holds now
            self.recount()
            return
        if count is None:  # not readable now (the watcher's next change counts again)
            return
        self.count = count
        self.counted.emit(count)
        if self._left_after_run and count:
            self.session.status.emit(
                f"{plural(count, 'note')} {'is' if count == 1 else 'are'} still written "
                "without the LLM (it failed again); try Memory ▸ Summarize again later"
            )
        self._left_after_run = False

    # -- summarizing again ---------------------------------------------------------------

    def run(self) -> None:
        """Memory ▸ Summarize again: one operation, its progress in the status bar, Cancel
        stops it with nothing written (what was summarized is kept for the next time)."""
        if self.session.workflow is None or self.session.operations.running(TASK):
            return
        busy = f"Summarizing {plural(self.count, 'note')} again…" if self.count else ""
        reasons: list[str] = []  # this run's errors, filled on the task's thread
        self.session.write(
            TASK,
            lambda workflow: workflow.summarize_again(failed_because=reasons),
            busy or "Summarizing again…",
            _said,
            lambda changes: self._done(changes, reasons),
            cancellable=True,
            said_on_cancel=lambda: (
                "Cancelled; the memory was not changed (the summaries made so far are kept "
                "for the next time)"
            ),
        )

    def _done(self, changes: Changes, reasons: list[str]) -> None:
        if notes_in(changes):
            self._left_after_run = True  # said once they are counted again
            return
        if self.count and self.session.workflow is not None:
            self._failed_again(reasons)

    def _failed_again(self, reasons: list[str]) -> None:
        """Nothing was summarized again: said with this run's error (it said only "The LLM
        failed again", then the error kept in the notes, from the add that wrote them) and
        what to do about it."""
        why = f"The LLM's error this time: {reasons[0].rstrip('. ')}.\n\n" if reasons else ""
        self.prompter.tell(
            "Nothing was summarized again",
            f"The LLM failed again for {plural(self.count, 'note')} written without it; "
            f"they are kept as they were.\n\n{why}Check the LLM (Edit ▸ Settings… ▸ Test "
            "connection), then choose Memory ▸ Summarize again.",
        )

    def cancel(self) -> bool:
        """The status bar's Cancel: stops summarizing again, if that is what runs."""
        tasks = self.session.operations.running(TASK)
        for task in tasks:
            task.cancel.cancel()
        return bool(tasks)


def _in_tree(path: str) -> bool:
    """Whether `path` may be a memory of the document tree."""
    top = path.split("/", 1)[0]
    return path.endswith(".md") and top not in PERSONAL_DIRS and not top.startswith(".")


def _said(changes: Changes) -> str:
    written = len(notes_in(changes))
    if written:
        return f"Summarized again: {plural(written, 'note')}"
    return "Nothing was summarized again"
