"""Asking the open memory a question: one task per question, in the session's conversation,
its exploration steps reported as they happen."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.models import ChatResult
from gam_desktop.engine.progress import CancelToken
from gam_desktop.gui import messages
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import TaskRunner, Worker


class ChatController(QObject):
    """Signals: answered(result), failed(text), step(text)."""

    answered = Signal(object)
    failed = Signal(str)
    step = Signal(str)

    def __init__(
        self, session: MemorySession, tasks: TaskRunner, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = tasks

    def ask(self, question: str) -> None:
        if self.session.workflow is None:
            self.failed.emit("Open a memory first (File ▸ Open memory).")
            return

        conversation = self.session.conversation
        workflow = self.session.task_workflow()  # made here, used only by the task's thread

        def job(worker: Worker, _cancel: CancelToken) -> ChatResult:
            return workflow.request(question, conversation=conversation, on_step=worker.report_step)

        self.tasks.start(
            "chat",
            job,
            on_success=self.answered.emit,
            on_failure=lambda exc: self.failed.emit(messages.describe(exc).full()),
            on_cancel=lambda: self.failed.emit("Stopped."),
            on_step=lambda step: self.step.emit(step.describe()),
            cancel=workflow.cancel,
        )

    def cancel(self) -> None:
        for task in self.tasks.running("chat"):
            task.cancel.cancel()
