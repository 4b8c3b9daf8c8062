"""The operations the status bar shows (estimate, build, recovery, rollback, reorganization):
each runs as a TaskRunner task while the bar says what is going on (the engine's stage in
words and how far the whole operation has come); a failure is shown to the person. The
window draws the bar from this object's signals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.api import CancelToken, ProgressEvent
from gam_desktop.gui import words
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.workers import Task, TaskRunner, Worker

Job = Callable[[Worker, CancelToken], Any]


class Operations(QObject):
    """Signals: busy(text, cancellable) when one starts; progressed(fraction) as it goes
    (0 to 1, the engine's, never lower than before); settled() when one ended and no build
    is running; status(text); stopped() when one failed or was cancelled."""

    busy = Signal(str, bool)
    progressed = Signal(float)
    settled = Signal()
    status = Signal(str)
    stopped = Signal()

    def __init__(
        self, tasks: TaskRunner, prompter: Prompter, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.prompter = prompter

    def run(
        self,
        name: str,
        job: Job,
        busy: str,
        on_success: Callable[[Any], None],
        cancellable: bool = False,
        cancel: CancelToken | None = None,
        on_step: Callable[[Any], None] | None = None,
        said_on_cancel: Callable[[], str] | None = None,
    ) -> None:
        """`cancel`: the token the job's Workflow polls (made with it), if it has one. What
        the job reports through its worker's `report_progress` is shown as it comes;
        `on_step` hears what it reports through `report_step` (a drop's committed steps);
        `said_on_cancel`: what the status says after a cancel (else that nothing changed)."""
        self.busy.emit(busy, cancellable)

        def finish() -> None:
            if not self.tasks.running("build"):
                self.settled.emit()

        def succeeded(result: Any) -> None:
            finish()
            on_success(result)

        def failed(error: Exception) -> None:
            finish()
            self.status.emit("Failed")
            self.prompter.show_error(error)
            self.stopped.emit()

        def cancelled() -> None:
            finish()
            self.status.emit(
                said_on_cancel() if said_on_cancel else "Cancelled; the memory was not changed"
            )
            self.stopped.emit()

        self.tasks.start(
            name,
            job,
            on_success=succeeded,
            on_failure=failed,
            on_cancel=cancelled,
            on_progress=self._progress,
            on_step=on_step,
            cancel=cancel,
        )

    def _progress(self, event: ProgressEvent) -> None:
        """The stage in words; the bar only when the engine knows how far it has come."""
        self.status.emit(words.passages(event.message or event.stage.capitalize()))  # not "chunks"
        if event.fraction is not None:
            self.progressed.emit(event.fraction)

    def running(self, name: str) -> list[Task]:
        return self.tasks.running(name)

    def cancel(self, name: str) -> None:
        for task in self.tasks.running(name):
            task.cancel.cancel()
