"""Adding documents to the open memory: what was dropped or chosen, the estimate, the build,
and the queue of files that arrive while one runs. A big drop is committed in steps: the
views follow each step as it is recorded, and the Cancel button asks whether to stop after
the current step or to stop now and undo the drop. An add that did not finish is offered
again, when its files are dropped again or when the memory opens."""

from __future__ import annotations

import enum
from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from gam_desktop.engine.api import (
    ADD,
    BUILD,
    READABLE,
    BuildReport,
    Changes,
    Estimate,
    PendingAdd,
    files_in,
    is_supported,
    plural,
)
from gam_desktop.gui import dialogs, words
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession

# What an add that wrote memories without the LLM says last (the Memory menu's item)
SUMMARIZE_LATER = (
    "Once the LLM works again, Memory ▸ Summarize again gives the notes written without it "
    "real summaries, in their place."
)


class StopChoice(enum.Enum):
    AFTER_STEP = "after step"  # finish the step running, keep every step, stop
    UNDO = "undo"  # stop now and roll back the steps this drop committed
    KEEP = "keep"  # do neither: keep going


STOP_ANSWERS = {
    StopChoice.AFTER_STEP: "Stop after the current step",
    StopChoice.UNDO: "Stop now, undo this drop",
    StopChoice.KEEP: "Keep going",
}
STOP_ROLES = {
    StopChoice.AFTER_STEP: QMessageBox.ButtonRole.AcceptRole,
    StopChoice.UNDO: QMessageBox.ButtonRole.DestructiveRole,
    StopChoice.KEEP: QMessageBox.ButtonRole.RejectRole,
}


def kept_parts(pending: PendingAdd) -> str:
    """What an unfinished add kept, counted in passages of documents (the LLM calls paid
    for): "0 of 1 documents already summarized" was said of a document 20 of whose 120
    passages were kept. Documents when it stopped before they were cut into passages."""
    if not pending.parts:
        return pending.summary()
    return f"{pending.parts_kept} of {plural(pending.parts, 'passage')} already summarized"


def collect_files(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Supported files (folders searched recursively) and the unsupported ones."""
    supported: list[Path] = []
    unsupported: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside, other = files_in(path)
            supported += inside
            unsupported += other
        elif not path.name.startswith("."):
            (supported if is_supported(path) else unsupported).append(path)
    return supported, unsupported


class DocumentIntake(QObject):
    """Drops and File ▸ Add documents: estimate, confirm, build, then the next queued files.
    Signals: status(text). (Their progress is shown by `Operations`.) `choose(title, text,
    answers)` is the answer to the stop question (a message box; tests replace it)."""

    status = Signal(str)

    def __init__(
        self,
        session: MemorySession,
        operations: Operations,
        prompter: Prompter,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.operations = operations
        self.prompter = prompter
        self.queue: list[Path] = []
        self.choose: Callable[[str, str, dict[StopChoice, str]], StopChoice] = self._ask_box
        self.stepped = False  # the build running is committed in steps
        self.steps_done = 0  # ...of which this many are recorded
        self._undoing = False
        # Whatever operation failed or was cancelled, the files waiting meanwhile go next.
        operations.stopped.connect(self._next_in_queue)
        session.resumable.connect(self.offer_resume)

    def accepts_drops(self) -> bool:
        """Dropped files are always taken: with no memory open, the window first offers to
        create one for them (then adds them)."""
        return True

    def drop_hint(self) -> str:
        """What the window says while files are dragged over it."""
        what = "Drop documents (or folders of them)"
        if self.session.workflow is None:
            return f"{what} to create a memory for them\n{READABLE}"
        return f"{what} to add them to this memory\n{READABLE}"

    def documents(self, paths: list[Path]) -> list[Path]:
        """The files among `paths` GAM Desktop reads (folders searched); the others are named
        to the person, once."""
        supported, unsupported = collect_files(paths)
        if unsupported:
            names = "\n".join(f"• {p.name}" for p in unsupported[:20])
            more = f"\n… and {len(unsupported) - 20} more" if len(unsupported) > 20 else ""
            self.prompter.tell(
                "Some files were not added",
                f"GAM Desktop reads {READABLE} files. These were left out:\n{names}{more}",
            )
        return supported

    def add_paths(self, paths: list[Path]) -> None:
        """Add what `paths` hold to the open memory (none open: nothing is added; the window
        offers to create a memory first, then calls `add_documents`)."""
        self.add_documents(self.documents(paths))

    def add_documents(self, files: list[Path]) -> None:
        """Estimate, confirm and build `files` (supported files) into the open memory, or
        queue them behind the build or estimate running."""
        if self.session.workflow is None or not files:
            return
        if self.operations.running("build") or self.operations.running("estimate"):
            self.queue += files
            self.status.emit(f"{plural(len(self.queue), 'file')} queued for the next build")
            return
        self._estimate(files)

    def cancel_build(self) -> None:
        """Stop the build now and forget the files queued after it (its finished steps are
        kept)."""
        self.operations.cancel("build")
        self.queue.clear()
        self.status.emit("Cancelling…")

    def ask_to_stop(self) -> None:
        """The Cancel button: a build in one step is cancelled (nothing is written); a build
        in steps asks first whether to stop after the current step or to stop now and undo
        the drop."""
        if not self.stepped:
            self.cancel_build()
            return
        done = plural(self.steps_done, "finished step")
        choice = self.choose(
            "Stop adding these documents?",
            f"The documents are added in steps, and {done} "
            f"{'is' if self.steps_done == 1 else 'are'} in the memory already.\n\n"
            "Stop after the current step: every finished step, and the one running, are kept. "
            "Stop now, undo this drop: every step of this drop is rolled back.\n\n"
            "What was summarized for the documents not added yet is kept either way: adding "
            "the same files again later resumes without paying for it twice.",
            STOP_ANSWERS,
        )
        tasks = self.operations.running("build")
        if choice is StopChoice.AFTER_STEP:
            for task in tasks:
                task.cancel.stop_after_step()
            self.queue.clear()
            self.status.emit("Stopping after the current step…")
        elif choice is StopChoice.UNDO:
            self._undoing = True
            for task in tasks:
                task.cancel.cancel(undo=True)
            self.queue.clear()
            self.status.emit("Stopping, and undoing this drop…")

    def _ask_box(self, title: str, text: str, answers: dict[StopChoice, str]) -> StopChoice:
        buttons: dict[StopChoice, dialogs.Button] = {
            choice: (label, STOP_ROLES[choice]) for choice, label in answers.items()
        }
        answer = dialogs.ask(
            cast(QWidget, self.parent()), title, title, buttons, StopChoice.KEEP, informative=text
        )
        return answer or StopChoice.KEEP

    def offer_resume(self, pending: PendingAdd) -> None:
        """The open memory holds an add that did not finish: resume it (its files that are
        still there), or forget it."""
        files = [Path(f) for f in pending.files if Path(f).is_file()]
        if not self.prompter.confirm(
            "An add did not finish",
            f"Adding {plural(pending.total, 'document')} to this memory did not finish (the "
            f"app or the computer stopped).\n\n{kept_parts(pending)}; continue?",
            buttons=("Continue", "Forget it"),
        ):
            self.session.forget_interrupted_add(pending)
            return
        if self.operations.running("build") or self.operations.running("estimate"):
            self.queue += files
            return
        self._build(files)

    def _estimate(self, files: list[Path]) -> None:
        self.session.read(
            "estimate",
            lambda workflow: workflow.estimate(files),
            f"Reading {plural(len(files), 'file')}…",
            lambda estimate: self._confirm_build(files, estimate),
        )

    def _confirm_build(self, files: list[Path], estimate: Estimate) -> None:
        notes = [*estimate.unreadable, *estimate.skipped]
        detail = ("\n\n" + "\n".join(f"• {n}" for n in notes[:10])) if notes else ""
        if estimate.documents == 0:
            self.prompter.tell("Nothing to add", "None of the files had new text to add." + detail)
            return self._next_in_queue()
        title, text = "Add these documents?", f"{words.estimate(estimate)}.{detail}"
        add = f"Add {plural(estimate.documents, 'document')}"  # not Yes and No
        if estimate.resume is not None:
            title, add = "Resume the interrupted add?", "Resume"
            text = f"Resume the interrupted add ({kept_parts(estimate.resume)})?\n\n{text}"
        if not self.prompter.confirm(title, text, buttons=(add, "Cancel")):
            return self._next_in_queue()
        self._build(files, estimate)

    def _build(self, files: list[Path], estimate: Estimate | None = None) -> None:
        # committed in steps (engine/drop.py)? A resumed add has no estimate: its files say
        step = self.session.prefs.step_documents
        self.stepped = estimate.steps > 1 if estimate is not None else 0 < step < len(files)
        self.steps_done, self._undoing = 0, False
        self.session.write(
            "build",
            lambda workflow: workflow.add(files=files, estimate=estimate),  # parsed once
            f"Adding {plural(len(files), 'document')}…",
            BuildReport.summary,
            self._built,
            cancellable=True,
            live=self._recorded,
            said_on_cancel=self._said_on_cancel,
        )

    def _recorded(self, changes: Changes) -> None:
        """A step of the build running is in the memory (the views follow it already)."""
        if changes.kind in (BUILD, ADD):
            self.steps_done += 1

    def _said_on_cancel(self) -> str:
        if self._undoing:
            return "Cancelled; this drop was undone"
        if self.steps_done:
            kept = plural(self.steps_done, "finished step")
            return f"Cancelled; {kept} kept (add the same files again for the rest)"
        return "Cancelled; the memory was not changed"

    def _built(self, report: BuildReport) -> None:
        problems = report.unreadable + report.warnings
        if problems:
            text = "\n".join(f"• {p}" for p in problems[:15])
            if report.fallbacks:  # gui/summarize_again.py
                text += f"\n\n{SUMMARIZE_LATER}"
            self.prompter.tell("Added, with remarks", text)
        self._next_in_queue()

    def _next_in_queue(self) -> None:
        if self.queue:
            files, self.queue = self.queue, []
            self._estimate(files)
