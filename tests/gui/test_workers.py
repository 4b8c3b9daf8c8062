"""A Worker ends no event loop but its own thread's: one run on the GUI thread (a test,
a direct call) used to quit the GUI thread (QThread.currentThread().quit()), and from then
on every event loop there returned at once without delivering anything: the app's would
end, and pytest-qt's waits stopped delivering the build threads' signals (the drop tests
after test_log_redaction.py hung)."""

from __future__ import annotations

from PySide6.QtCore import QEventLoop, QTimer

from gam_desktop.gui.workers import TaskRunner, Worker


def event_loop_runs() -> bool:
    """An event loop on this thread runs and delivers a timer's event."""
    loop = QEventLoop()
    delivered: list[bool] = []
    QTimer.singleShot(0, loop, lambda: (delivered.append(True), loop.quit()))
    return loop.exec() == 0 and delivered == [True]


def test_a_worker_run_on_the_gui_thread_leaves_its_event_loops_running(qapp) -> None:
    def failing(_worker: Worker) -> None:
        raise RuntimeError("a task that fails")

    for job in (lambda _w: "done", failing):
        Worker(1, job).run()
        assert event_loop_runs()


def test_a_task_thread_still_ends_when_its_job_does(qtbot) -> None:
    runner = TaskRunner()
    results: list[object] = []
    task = runner.start("job", lambda _w, _c: "done", on_success=results.append)
    qtbot.waitUntil(lambda: task.thread.isFinished() and not runner.tasks, timeout=30_000)
    assert results == ["done"]
