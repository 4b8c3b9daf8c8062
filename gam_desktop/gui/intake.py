"""Adding documents to the open memory: what was dropped or chosen, the estimate, the build,
and the queue of files that arrive while one runs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.build.builder import BuildReport
from gam_desktop.engine.build.documents import READABLE, files_in, is_supported
from gam_desktop.engine.build.estimate import Estimate
from gam_desktop.engine.textutil import plural
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession


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
    Signals: status(text). (Their progress is shown by `Operations`.)"""

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
        # Whatever operation failed or was cancelled, the files waiting meanwhile go next.
        operations.stopped.connect(self._next_in_queue)

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
        """Stop the build and forget the files queued after it."""
        self.operations.cancel("build")
        self.queue.clear()
        self.status.emit("Cancelling…")

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
        if not self.prompter.confirm("Add these documents?", f"{estimate.summary()}.{detail}"):
            return self._next_in_queue()
        self._build(files, estimate)

    def _build(self, files: list[Path], estimate: Estimate | None = None) -> None:
        self.session.write(
            "build",
            lambda workflow: workflow.add(files=files, estimate=estimate),  # parsed once
            f"Adding {plural(len(files), 'document')}…",
            BuildReport.summary,
            self._built,
            cancellable=True,
        )

    def _built(self, report: BuildReport) -> None:
        problems = report.unreadable + report.warnings
        if problems:
            self.prompter.tell("Added, with remarks", "\n".join(f"• {p}" for p in problems[:15]))
        self._next_in_queue()

    def _next_in_queue(self) -> None:
        if self.queue:
            files, self.queue = self.queue, []
            self._estimate(files)
