"""Research mode in the chat: `Workflow.research` as a task, its steps live, Stop, and
saving the report into the memory (its own commit, `Workflow.save_research`).

A report that arrives after the person moved to another conversation or memory is dropped:
nothing was written, and it belongs to the question on screen no more.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.api import ResearchReport, Workflow
from gam_desktop.gui import error_advice
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import Worker

TASK = "research"


class ResearchController(QObject):
    """Signals: step(ResearchStep), reported(ResearchReport), failed(text),
    saved(report, path)."""

    step = Signal(object)
    reported = Signal(object)
    failed = Signal(str)
    saved = Signal(object, str)

    def __init__(self, session: MemorySession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._view = 0  # changes whenever another conversation (or memory) is shown

    def show(self, _conversation_id: str | None = None) -> None:
        self._view += 1

    def ask(self, question: str) -> None:
        if self.session.workflow is None:
            self.failed.emit("Open a memory first (File ▸ Open memory).")
            return
        current = self._while_shown()

        def job(workflow: Workflow, worker: Worker) -> ResearchReport:
            return workflow.research(question, on_step=worker.report_step)

        self.session.write_quietly(
            TASK,
            job,
            current(lambda report, _changes: self.reported.emit(report)),
            current(lambda error: self.failed.emit(error_advice.describe(error).full())),
            on_step=current(self.step.emit),
            cancelled=current(lambda: self.failed.emit("Stopped. Nothing was saved.")),
        )

    def _while_shown(self) -> Callable[[Callable[..., object]], Callable[..., None]]:
        """A wrapper calling its function only while the question's view is on screen."""
        view = self._view

        def wrap(function: Callable[..., object]) -> Callable[..., None]:
            def call(*args: object) -> None:
                if view == self._view:
                    function(*args)

            return call

        return wrap

    def cancel(self) -> None:
        for task in self.session.operations.running(TASK):
            task.cancel.cancel()

    def save(self, report: ResearchReport) -> None:
        """research/<date>-<slug>.md, one commit the History can undo."""
        self.session.write(
            "save-research",
            lambda workflow: workflow.save_research(report),
            "Saving the report…",
            lambda saved: f"Saved the report as {saved[0]}",
            then=lambda saved: self.saved.emit(report, saved[0]),
        )
