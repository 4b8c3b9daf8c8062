"""Running engine work off the GUI thread.

Each task is a Worker QObject moved to its own QThread. The worker reports through
signals (progress, step, succeeded, failed, cancelled); the TaskRunner, which lives
on the GUI thread, receives them (queued, so on the GUI thread) and calls the
task's callbacks there. Ownership is single: the runner keeps the Python references
and drops them once the thread has finished — no deleteLater on the worker, which
under PySide6 6.12 segfaulted when combined with a Python reference.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from gam_desktop.engine.api import CancelToken, OperationCancelled

log = logging.getLogger(__name__)
# How long a closing window waits for a task that may not end soon (an LLM call, a lock).
WAIT_AT_CLOSE_MS = 10_000


class Worker(QObject):
    """Signals: progress(id, event), step(id, step), succeeded(id, result),
    failed(id, exception), cancelled(id), done(id)."""

    progress = Signal(int, object)
    step = Signal(int, object)
    succeeded = Signal(int, object)
    failed = Signal(int, object)
    cancelled = Signal(int)
    done = Signal(int)

    def __init__(self, task_id: int, job: Callable[[Worker], Any]) -> None:
        super().__init__()
        self.task_id = task_id
        self.job = job

    @Slot()
    def run(self) -> None:
        try:
            result = self.job(self)
        except OperationCancelled:
            self.cancelled.emit(self.task_id)
        except Exception as exc:  # reported to the GUI, which shows a message
            log.info("task %d failed: %s", self.task_id, exc, exc_info=True)
            self.failed.emit(self.task_id, exc)
        else:
            self.succeeded.emit(self.task_id, result)
        finally:
            # the runner ends the task's thread on this (TaskRunner.start): the worker
            # quits no thread itself, not even the GUI thread when run there (a test)
            self.done.emit(self.task_id)

    def report_progress(self, event: object) -> None:
        self.progress.emit(self.task_id, event)

    def report_step(self, step: object) -> None:
        self.step.emit(self.task_id, step)


@dataclass
class Task:
    id: int
    name: str
    cancel: CancelToken
    thread: QThread
    worker: Worker
    on_success: Callable[[Any], None] | None = None
    on_failure: Callable[[Exception], None] | None = None
    on_cancel: Callable[[], None] | None = None
    on_progress: Callable[[Any], None] | None = None
    on_step: Callable[[Any], None] | None = None
    finished: bool = field(default=False)
    ends_by_itself: bool = False  # no network, no lock: waited for as long as it takes


class TaskRunner(QObject):
    """Signals: started(name), finished(name)."""

    started = Signal(str)
    finished = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self.tasks: dict[int, Task] = {}

    def start(
        self,
        name: str,
        job: Callable[[Worker, CancelToken], Any],
        *,
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[Exception], None] | None = None,
        on_cancel: Callable[[], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
        on_step: Callable[[Any], None] | None = None,
        cancel: CancelToken | None = None,
        ends_by_itself: bool = False,
    ) -> Task:
        """Run `job(worker, cancel)` on a thread of its own. `cancel` is the token the job's
        Workflow was made with (on this thread, before the start), else a new one.
        `ends_by_itself`: the job ends in finite time whatever happens (the warm-up:
        imports and a file read), and a closing window waits for it without a limit."""
        task_id = next(self._ids)
        cancel = cancel or CancelToken()
        worker = Worker(task_id, lambda w: job(w, cancel))
        thread = QThread()
        thread.setObjectName(f"gam-{name}-{task_id}")
        worker.moveToThread(thread)
        task = Task(
            task_id,
            name,
            cancel,
            thread,
            worker,
            on_success,
            on_failure,
            on_cancel,
            on_progress,
            on_step,
            ends_by_itself=ends_by_itself,
        )
        self.tasks[task_id] = task
        worker.progress.connect(self._progress)
        worker.step.connect(self._step)
        worker.succeeded.connect(self._succeeded)
        worker.failed.connect(self._failed)
        worker.cancelled.connect(self._cancelled)
        worker.done.connect(self._reap)  # queued: runs on the GUI thread
        # End the thread's event loop from the worker's thread, as the job ends: a queued
        # quit would wait for the GUI loop, and a window closing meanwhile would destroy a
        # still-running QThread ("Destroyed while thread is still running"). The runner
        # quits the thread it made, not the Worker whichever thread it runs on: quitting
        # the GUI thread sets its quit-now flag, and every event loop started there after
        # (a modal dialog's, pytest-qt's waits) returns at once without delivering events.
        worker.done.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.started.connect(worker.run)
        thread.start()
        self.started.emit(name)
        return task

    def running(self, name: str | None = None) -> list[Task]:
        return [
            t for t in self.tasks.values() if not t.finished and (name is None or t.name == name)
        ]

    def cancel_all(self) -> None:
        for task in self.tasks.values():
            task.cancel.cancel()

    def wait_all(self, milliseconds: int | None = None) -> None:
        """Wait for every task's thread: one that ends by itself for as long as it takes,
        any other at most `milliseconds` (WAIT_AT_CLOSE_MS). A QThread deleted while it
        runs aborts the process: the warm-up, slow on a busy machine (its imports took
        over 10 s), outlived the window that quit as soon as it was shown."""
        limit = WAIT_AT_CLOSE_MS if milliseconds is None else milliseconds
        for task in list(self.tasks.values()):
            if task.ends_by_itself:
                task.thread.wait()
            else:
                task.thread.wait(limit)

    @Slot(int, object)
    def _progress(self, task_id: int, event: object) -> None:
        task = self.tasks.get(task_id)
        if task and task.on_progress:
            task.on_progress(event)

    @Slot(int, object)
    def _step(self, task_id: int, step: object) -> None:
        task = self.tasks.get(task_id)
        if task and task.on_step:
            task.on_step(step)

    @Slot(int, object)
    def _succeeded(self, task_id: int, result: object) -> None:
        task = self._end(task_id)
        if task and task.on_success:
            task.on_success(result)

    @Slot(int, object)
    def _failed(self, task_id: int, error: object) -> None:
        task = self._end(task_id)
        if task and task.on_failure:
            task.on_failure(error)  # type: ignore[arg-type]

    @Slot(int)
    def _cancelled(self, task_id: int) -> None:
        task = self._end(task_id)
        if task and task.on_cancel:
            task.on_cancel()

    def _end(self, task_id: int) -> Task | None:
        task = self.tasks.get(task_id)
        if task is not None:
            task.finished = True
            self.finished.emit(task.name)
        return task

    @Slot(int)
    def _reap(self, task_id: int) -> None:
        """The worker emitted its last signal: wait for its thread to end, then drop the
        last references here on the GUI thread (the single owner)."""
        task = self.tasks.get(task_id)
        if task is not None:
            task.thread.wait(5000)
            self.tasks.pop(task_id, None)


class _Delivery(QObject):
    """Signals: done(result), failed(error) — emitted from a daemon thread, received on the
    GUI thread (the object lives there, so the connection is queued)."""

    done = Signal(object)
    failed = Signal(object)


_in_flight: set[_Delivery] = set()


def call_in_daemon(
    call: Callable[[], Any], on_done: Callable[[Any], None], on_error: Callable[[Exception], None]
) -> None:
    """Run a call that may never return (a locked keychain waiting for a password) on a
    daemon thread: unlike a QThread, it cannot abort the app if it is still running at exit.
    The callbacks run on the GUI thread. Must be called from the GUI thread.

    Give slots of a GUI-thread QObject (bound methods) as callbacks: the connections then
    belong to that object and end with it, so an answer that comes after a dialog was
    deleted calls nothing. A plain function must not touch Qt objects."""
    import threading

    delivery = _Delivery()
    _in_flight.add(delivery)
    delivery.done.connect(on_done)
    delivery.failed.connect(on_error)
    delivery.done.connect(lambda _r: _in_flight.discard(delivery))
    delivery.failed.connect(lambda _e: _in_flight.discard(delivery))

    def run() -> None:
        try:
            result = call()
        except Exception as exc:  # delivered to the GUI thread
            delivery.failed.emit(exc)
        else:
            delivery.done.emit(result)

    threading.Thread(target=run, name="gam-keychain", daemon=True).start()
