"""Closing the window, or opening another memory in it, while a build or a reorganization
runs: ask, never throw work away, and never let that work's results land in another memory's
views.

The window's closeEvent asks this guard first, and so does opening another memory (File ▸
New memory, Open memory, Open Recent). With nothing at stake it goes ahead at once, as
before. While a build or a reorganization runs, the person chooses: finish it first (the
window stays, inert, with a note, and closes itself, or opens the other memory, once the
work has ended and no question is on screen), cancel it (the memory stays as it was: the
usual cancel; the other memory opens once the work has stopped), or keep working (nothing
changes, the work goes on). Asking again while a finish is pending replaces it, so "Keep
working" takes the window back.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from gam_desktop.engine.api import plural
from gam_desktop.gui import dialogs
from gam_desktop.gui.window import Window

GUARDED = ("build", "reorganize")  # the tasks whose work a close would throw away
WHAT = {"build": "the build", "reorganize": "the reorganization"}


class CloseChoice(enum.Enum):
    FINISH = "finish"  # finish the work, then close (or open the other memory)
    CANCEL = "cancel"  # cancel the work (nothing written), then close (or open the other)
    KEEP = "keep"  # do neither: keep working


ROLES = {
    CloseChoice.FINISH: QMessageBox.ButtonRole.AcceptRole,
    CloseChoice.CANCEL: QMessageBox.ButtonRole.DestructiveRole,
    CloseChoice.KEEP: QMessageBox.ButtonRole.RejectRole,
}


def question(
    task: str, memory: str, percent: int | None, opening: str | None = None, steps: int = 0
) -> tuple[str, str]:
    """The question's title and text for a running `task` ("build" or "reorganize") in
    `memory`, when the window closes or, with `opening`, when that memory is to be opened;
    `steps`: the finished steps of a build committed in steps (they stay either way)."""
    done = f" ({percent}% done)" if percent is not None else ""
    if task == "build":
        title = "A build is still running"
        doing = f"GAM Desktop is still adding documents to “{memory}”{done}."
    else:
        title = "A reorganization is still running"
        doing = f"GAM Desktop is still reorganizing “{memory}”{done}."
    if steps:
        kept = plural(steps, "finished step")
        return title, (
            f"{doing}\n\nIt adds them in steps: the {kept} "
            f"{'is' if steps == 1 else 'are'} saved, and adding the same files again later "
            "resumes where it stopped. You can let it finish"
            + (
                " (the window closes by itself when it is done), cancel it, or keep working."
                if opening is None
                else f" before “{opening}” opens here, cancel it, or keep working."
            )
        )
    if opening is None:
        return title, (
            f"{doing}\n\nIf the window closes now, nothing from {WHAT[task]} is saved: the "
            "memory stays as it was before it started. You can let it finish (the window "
            "closes by itself when it is done), cancel it, or keep working."
        )
    return title, (
        f"{doing}\n\nFinish it before “{opening}” opens here, or cancel it: nothing from "
        f"{WHAT[task]} is saved then, and “{memory}” stays as it was before it started. "
        f"Or keep working in “{memory}”."
    )


def answers(task: str, opening: str | None = None) -> dict[CloseChoice, str]:
    """The three answers' labels, in the order shown; "Keep working" is the default (Enter)
    and the escape (Esc)."""
    noun = "build" if task == "build" else "reorganization"
    then = "close" if opening is None else f"open “{opening}”"
    return {
        CloseChoice.FINISH: f"Finish the {noun}, then {then}",
        CloseChoice.CANCEL: f"Cancel the {noun} and {then}",
        CloseChoice.KEEP: "Keep working",
    }


class CloseGuard(QObject):
    """Decides whether a close, or opening another memory, goes ahead.
    `ask(task, title, text, answers)` is the question's answer, one of `answers`' keys (a
    message box; tests replace it)."""

    def __init__(self, window: Window) -> None:
        super().__init__(window)
        self.window = window
        self.ask: Callable[[str, str, str, dict[CloseChoice, str]], CloseChoice] = self._ask_box
        self.finishing = False  # the window closes (or opens `_then`) once the work has ended
        self._then: Callable[[], object] | None = None
        self._title = ""
        self._note: QLabel | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._go_on_when_done)

    def running(self) -> list[str]:
        """The names of the guarded tasks running now, builds first."""
        names = {task.name for task in self.window.tasks.running() if task.name in GUARDED}
        return [name for name in GUARDED if name in names]

    def allows(self, event: QCloseEvent) -> bool:
        """Whether the close goes ahead now; when it does not, the event is ignored."""
        running = self.running()
        if not running:
            self._stop_finishing()
            return True
        task = running[0]
        choice = self._question(task)
        if choice is CloseChoice.CANCEL:
            self._stop_finishing()
            self._cancel_work()
            return True  # the close cancels every task and waits for them, as always
        event.ignore()
        if choice is CloseChoice.FINISH:
            self._start_finishing(
                self.window.close,
                f"Finishing {WHAT[task]}: the window closes by itself when it is done.",
                f"closing when {WHAT[task]} is done",
            )
        else:
            self._stop_finishing()
        return False

    def allows_opening(self, root: Path, open_memory: Callable[[Path], object]) -> bool:
        """Whether the memory at `root` may be opened now in place of the open one. While a
        build or a reorganization runs in the open memory, the person is asked: finish it
        first or cancel it (then `open_memory(root)` is called once the work has ended, and
        this answers False), or keep working (False). Reopening the open memory (after
        Settings) is not asked about."""
        workflow = self.window.workflow
        running = self.running()
        if workflow is None or not running or _same_folder(workflow.folder.root, root):
            return True
        task = running[0]
        other = root.name or str(root)
        choice = self._question(task, other)
        if choice is CloseChoice.KEEP:
            self._stop_finishing()
            return False
        if choice is CloseChoice.CANCEL:
            self._cancel_work()
            note = f"Cancelling {WHAT[task]}: “{other}” opens once it has stopped."
        else:
            note = f"Finishing {WHAT[task]}: “{other}” opens when it is done."
        self._start_finishing(
            lambda: open_memory(root), note, f"opening “{other}” when {WHAT[task]} is done"
        )
        return False

    def _question(self, task: str, opening: str | None = None) -> CloseChoice:
        steps = self.window.intake.steps_done if task == "build" else 0
        title, text = question(task, self._memory_name(), self._percent(task), opening, steps)
        return self.ask(task, title, text, answers(task, opening))

    def _cancel_work(self) -> None:
        self.window.intake.cancel_build()  # and forget the files queued after it
        self.window.operations.cancel("reorganize")

    # -- finishing, then closing or opening ---------------------------------------------------

    def _start_finishing(self, then: Callable[[], object], note: str, title: str) -> None:
        window = self.window
        if not self.finishing:
            self._title = window.windowTitle()
        self.finishing = True
        self._then = then
        window.intake.queue.clear()  # files dropped meanwhile would start another build
        central = window.centralWidget()
        if central is not None:
            central.setEnabled(False)
        window.setAcceptDrops(False)
        window.menuBar().setEnabled(False)
        label = self._note_label()
        label.setText(note)
        label.show()
        window.setWindowTitle(f"{self._title} ({title})")
        self._timer.start()

    def _stop_finishing(self) -> None:
        if not self.finishing:
            return
        self.finishing = False
        self._then = None
        self._timer.stop()
        window = self.window
        central = window.centralWidget()
        if central is not None:
            central.setEnabled(True)
        window.setAcceptDrops(True)
        window.menuBar().setEnabled(True)
        if self._note is not None:
            self._note.hide()
        window.setWindowTitle(self._title)

    def _go_on_when_done(self) -> None:
        """Close (or open the other memory) once the work has ended and its callbacks are
        done: none of the guarded tasks runs, and no message (an error, a remark) waits for
        the person."""
        if self.running() or QApplication.activeModalWidget() is not None:
            return
        then = self._then
        self._stop_finishing()
        if then is not None:
            then()

    def _note_label(self) -> QLabel:
        if self._note is None:
            self._note = QLabel()
            self._note.setObjectName("closingNote")
            self._note.setAccessibleName("Closing")
            # Before the progress bar: after the status text, the bar's one normal widget.
            self.window.statusBar().insertPermanentWidget(1, self._note)
        return self._note

    # -- what the question says ---------------------------------------------------------------

    def _memory_name(self) -> str:
        workflow = self.window.workflow
        return Path(workflow.folder.root).name if workflow is not None else "this memory"

    def _percent(self, task: str) -> int | None:
        bar = self.window.progress
        if task != "build" or bar.isHidden() or bar.maximum() <= 0:
            return None
        return round(100 * bar.value() / bar.maximum()) if bar.value() >= 0 else None

    def _ask_box(
        self, task: str, title: str, text: str, labels: dict[CloseChoice, str]
    ) -> CloseChoice:
        buttons: dict[CloseChoice, dialogs.Button] = {
            choice: (label, ROLES[choice]) for choice, label in labels.items()
        }
        answer = dialogs.ask(
            self.window, title, title, buttons, default=CloseChoice.KEEP, informative=text
        )
        return answer or CloseChoice.KEEP


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a link loop, an unreachable drive
        return a == b
