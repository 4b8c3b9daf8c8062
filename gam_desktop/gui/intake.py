"""Adding documents to the open memory: drops, the estimate, the build, the queue.

A mixin of MainWindow (it uses the window's workflow, tasks, status bar, confirm, tell and
_run); kept apart so that the window module stays about its layout.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QDragEnterEvent, QDropEvent

from gam_desktop.engine.build.documents import files_in, is_supported
from gam_desktop.engine.progress import ProgressEvent
from gam_desktop.gui import dialogs


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


class DocumentIntake:
    """Drag and drop, File ▸ Add documents, the estimate, the build and its queue."""

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and self.workflow is not None:
            event.acceptProposedAction()
            self.drop_hint.show()
            self.drop_hint.raise_()

    def dragLeaveEvent(self, event) -> None:
        self.drop_hint.hide()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_hint.hide()
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        event.acceptProposedAction()
        self.add_paths(paths)

    def choose_documents(self) -> None:
        self.add_paths(dialogs.choose_documents(self))

    def add_paths(self, paths: list[Path]) -> None:
        if self.workflow is None:
            return
        supported, unsupported = collect_files(paths)
        if unsupported:
            names = "\n".join(f"• {p.name}" for p in unsupported[:20])
            more = f"\n… and {len(unsupported) - 20} more" if len(unsupported) > 20 else ""
            self.tell(
                "Some files were not added",
                f"GAM Desktop reads PDF, TXT and Markdown. These were left out:\n{names}{more}",
            )
        if not supported:
            return
        if self.tasks.running("build") or self.tasks.running("estimate"):
            self.queue += supported
            self.status_label.setText(f"{len(self.queue)} files queued for the next build")
            return
        self._estimate(supported)

    def _estimate(self, files: list[Path]) -> None:
        self._run(
            "estimate",
            lambda w, c: self.task_workflow(c).estimate(files),
            f"Reading {len(files)} files…",
            lambda est: self._confirm_build(files, est),
        )

    def _confirm_build(self, files: list[Path], estimate) -> None:
        notes = [*estimate.unreadable, *estimate.skipped]
        detail = ("\n\n" + "\n".join(f"• {n}" for n in notes[:10])) if notes else ""
        if estimate.documents == 0:
            self.tell("Nothing to add", "None of the files had new text to add." + detail)
            return self._next_in_queue()
        if not self.confirm("Add these documents?", f"{estimate.summary()}.{detail}"):
            return self._next_in_queue()
        self._build(files)

    def _build(self, files: list[Path]) -> None:
        def job(worker, cancel):
            return self.task_workflow(cancel, worker.report_progress).add(files=files)

        self._run(
            "build",
            job,
            f"Adding {len(files)} documents…",
            self._built,
            on_progress=self._progress,
            cancellable=True,
        )

    def _built(self, report) -> None:
        problems = report.unreadable + report.warnings
        self._after_change(report.summary())
        if problems:
            self.tell("Added, with remarks", "\n".join(f"• {p}" for p in problems[:15]))
        self._next_in_queue()

    def _next_in_queue(self) -> None:
        if self.queue:
            files, self.queue = self.queue, []
            self._estimate(files)

    def _progress(self, event: ProgressEvent) -> None:
        self.progress.setMaximum(max(event.total, 1))
        self.progress.setValue(event.done)
        self.status_label.setText(event.message or event.stage.capitalize())
