"""The main window: the memory tree, the preview, chat and history, and a status bar.

It wires panels to the engine's Workflow through the TaskRunner; every long call
(build, add, question, rollback, reorganization) runs on a worker thread, so the
window never freezes. Confirmations and messages go through `confirm` and `tell`,
which tests replace.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from filelock import FileLock, Timeout
from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
)

from gam_desktop.engine.control import ProgressEvent
from gam_desktop.engine.conversation import Conversation
from gam_desktop.engine.documents import is_supported
from gam_desktop.engine.folder import APP_DIR, MemoryFolder
from gam_desktop.engine.history import Operation
from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.workflow import OutsideEdit, Workflow
from gam_desktop.gui import messages
from gam_desktop.gui.chat_panel import ChatPanel
from gam_desktop.gui.history_panel import HistoryPanel
from gam_desktop.gui.preview import PreviewPane
from gam_desktop.gui.settings import Preferences, save
from gam_desktop.gui.tree_panel import MemoryTree
from gam_desktop.gui.workers import TaskRunner

log = logging.getLogger(__name__)


class FolderInUse(RuntimeError):
    """The memory is open in another GAM Desktop window."""


class Bridge(QObject):
    """Carries watcher callbacks (a background thread) to the GUI thread."""

    outside_edit = Signal(object)


def collect_files(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Supported files (folders searched recursively) and the unsupported ones."""
    supported, unsupported = [], []
    for path in paths:
        candidates = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in candidates:
            if any(part.startswith(".") for part in file.parts[-2:]):
                continue
            (supported if is_supported(file) else unsupported).append(file)
    return supported, unsupported


class MainWindow(QMainWindow):
    def __init__(self, prefs: Preferences, store: QSettings, api_key: str | None = None) -> None:
        super().__init__()
        self.prefs = prefs
        self.store = store
        self.api_key = api_key
        self.workflow: Workflow | None = None
        self.conversation: Conversation | None = None
        self.watcher = None
        self.app_lock: FileLock | None = None
        self.queue: list[Path] = []
        self.tasks = TaskRunner(self)
        self.bridge = Bridge()
        self.bridge.outside_edit.connect(self._outside_edit)
        self.setWindowTitle("GAM Desktop")
        self.setAcceptDrops(True)
        self._build_ui()
        self._restore_layout()

    # -- layout -----------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.tree = MemoryTree()
        self.tree.opened.connect(self.open_file)
        self.tree.reorganize_requested.connect(self.plan_reorganization)
        self.preview = PreviewPane()
        self.chat = ChatPanel()
        self.chat.asked.connect(self.ask)
        self.chat.cancel_requested.connect(lambda: self._cancel("chat"))
        self.chat.new_conversation.connect(self._new_conversation)
        self.chat.source_clicked.connect(self.open_file)
        self.history = HistoryPanel()
        self.history.rollback_requested.connect(self.roll_back)
        self.history.restore_requested.connect(self.restore_before)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.chat, "Chat")
        self.tabs.addTab(self.history, "History")
        self._history_stale = True
        self.tabs.currentChanged.connect(self._tab_changed)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.tree, self.preview, self.tabs):
            self.split.addWidget(widget)
        self.split.setSizes([260, 440, 460])
        self.setCentralWidget(self.split)
        self.drop_hint = QLabel(
            "Drop PDF, TXT or Markdown files (or folders of them) to add them to this memory", self
        )
        self.drop_hint.setObjectName("dropHint")
        self.drop_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.drop_hint.hide()
        self.status_label = QLabel("Ready")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(lambda: self._cancel("build"))
        self.cancel_button.hide()
        bar = self.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self._menus()

    def _menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        for label, shortcut, slot in (
            ("&Open memory…", QKeySequence.StandardKey.Open, self.choose_folder),
            ("&Add documents…", None, self.choose_documents),
            ("&Settings…", QKeySequence.StandardKey.Preferences, self.open_settings),
            ("&Quit", QKeySequence.StandardKey.Quit, self.close),
        ):
            action = QAction(label, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(slot)
            file_menu.addAction(action)

    def _restore_layout(self) -> None:
        geometry = self.store.value("window/geometry")
        if geometry:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        state = self.store.value("window/splitter")
        if state:
            self.split.restoreState(state)

    def resizeEvent(self, event) -> None:  # keep the drop hint over the whole window
        super().resizeEvent(event)
        self.drop_hint.setGeometry(self.rect().adjusted(40, 60, -40, -40))

    # -- opening a memory -----------------------------------------------------------------

    def welcome(self) -> None:
        """The first run: say what the app does and ask where the memory should live."""
        self.preview.show_message(
            "Welcome to GAM Desktop",
            "GAM Desktop turns a folder into a memory organized by an LLM.\n\n"
            "1. Open or create a memory folder (File ▸ Open memory).\n"
            "2. Drag PDF, TXT or Markdown files onto this window.\n"
            "3. Ask questions in the Chat tab; every change is in the History tab and can "
            "be rolled back.\n\nSet your LLM endpoint and key in File ▸ Settings.",
        )
        box = QMessageBox(self)
        box.setWindowTitle("Welcome to GAM Desktop")
        box.setText("Where should your memory live?")
        create = box.addButton("Create a new memory…", QMessageBox.ButtonRole.AcceptRole)
        existing = box.addButton("Open an existing memory…", QMessageBox.ButtonRole.ActionRole)
        box.addButton("Later", QMessageBox.ButtonRole.RejectRole)
        box.exec()
        if box.clickedButton() is create:
            default_memory_dir().mkdir(parents=True, exist_ok=True)
            folder = QFileDialog.getExistingDirectory(
                self, "Create the memory in", str(default_memory_dir())
            )
            if folder:
                self.open_memory(Path(folder))
        elif box.clickedButton() is existing:
            self.choose_folder()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose or create a memory folder")
        if folder:
            self.open_memory(Path(folder))

    def open_memory(self, root: Path) -> bool:
        """Open (or start) a memory; False when the user declined or it is in use."""
        folder = MemoryFolder(root)
        if (
            not folder.is_memory()
            and root.exists()
            and any(not p.name.startswith(".") for p in root.iterdir())
        ):
            if not self.confirm(
                "Make this folder a memory?",
                f"{root} holds other files and is not a memory yet. GAM Desktop "
                "can make it one; its files are kept (and recorded in the "
                "history first).",
            ):
                return False
            make_memory = True
        else:
            make_memory = False
        try:
            self._lock_folder(folder)
        except FolderInUse as exc:
            self.tell("This memory is already open", str(exc))
            return False
        except OSError as exc:
            self.show_error(exc)
            return False
        self._close_memory()
        self.workflow = Workflow(
            gam_dir=root,
            settings=self.prefs.llm("builder", self.api_key),
            chat_settings=self.prefs.llm("chat", self.api_key),
            options=self.prefs.build_options(),
            git_path=self.prefs.git_path or None,
        )
        # Open (or create) the repository now, before any worker thread can: two threads
        # running `git init` / opening a half-made .git at once was a real race.
        history_off = self.workflow.history is None
        if make_memory:
            self.workflow.initialize()
        self.conversation = Conversation(LLMClient(self.workflow.chat_settings))
        self.prefs.remember_folder(str(root))
        save(self.store, self.prefs)
        self.setWindowTitle(f"{root.name} — GAM Desktop")
        self.tree.show_folder(self.workflow.folder)
        self.preview.clear()
        if self.tree.memory_count() == 0:
            self.preview.show_message(
                "This memory is empty",
                "Drag PDF, TXT or Markdown files (or folders of them) onto this window, or "
                "use File ▸ Add documents. You will see an estimate before anything is sent "
                "to the LLM.",
            )
        self.refresh_history()
        self._check_interrupted()
        self.watcher = self.workflow.watch(self.bridge.outside_edit.emit)
        self.status_label.setText(
            f"Opened {root} — {self.tree.memory_count()} memories"
            + (" — history is off: git was not found" if history_off else "")
        )
        return True

    def _lock_folder(self, folder: MemoryFolder) -> None:
        """One window per memory: a lock held for as long as the memory is open."""
        folder.root.mkdir(parents=True, exist_ok=True)
        (folder.root / APP_DIR).mkdir(exist_ok=True)
        path = folder.root / APP_DIR / "app.lock"
        if self.app_lock is not None and Path(self.app_lock.lock_file) == path:
            return  # this window holds it already (re-opening after Settings, say)
        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout as exc:
            raise FolderInUse(
                f"{folder.root} is open in another GAM Desktop window. Switch "
                "to that window, or close it first."
            ) from exc
        if self.app_lock is not None:
            self.app_lock.release()
        self.app_lock = lock

    def _close_memory(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    def _check_interrupted(self) -> None:
        interrupted = self.workflow.interrupted()
        if interrupted is None:
            return
        restore = self.confirm(
            "An operation was interrupted",
            f"A {interrupted.operation} started {interrupted.started} did not finish (the app "
            "or the computer stopped). Restore the memory to its last saved state? "
            "Choose No to keep the files as they are.",
        )
        self._run(
            "recover",
            lambda w, c: self.task_workflow(c).recover(restore=restore),
            "Recovering…",
            lambda message: self._after_change(f"Recovery: {message}"),
        )

    # -- adding documents ---------------------------------------------------------------

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
        files, _ = QFileDialog.getOpenFileNames(
            self, "Add documents", "", "Documents (*.pdf *.txt *.md *.markdown)"
        )
        self.add_paths([Path(f) for f in files])

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

    def task_workflow(self, cancel, progress=None) -> Workflow:
        """A Workflow of its own for one task: GitPython repositories and cancel tokens are
        not shared between threads; only the thread-safe search tools are."""
        if self.workflow._tools is None:
            from gam_desktop.engine.agent_tools import MemoryTools

            self.workflow._tools = MemoryTools(self.workflow.folder.root)
        kwargs = {"progress": progress} if progress else {}
        return Workflow(
            gam_dir=self.workflow.folder.root,
            settings=self.workflow.settings,
            chat_settings=self.workflow.chat_settings,
            options=self.workflow.options,
            cancel=cancel,
            git_path=self.prefs.git_path or None,
            tools=self.workflow._tools,
            **kwargs,
        )

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

    # -- chat -----------------------------------------------------------------------------

    def ask(self, question: str) -> None:
        if self.workflow is None:
            self.chat.show_error("Open a memory first (File ▸ Open memory).")
            return

        conversation = self.conversation

        def job(worker, cancel):
            return self.task_workflow(cancel).request(
                question, conversation=conversation, on_step=worker.report_step
            )

        self.tasks.start(
            "chat",
            job,
            on_success=self.chat.show_result,
            on_failure=lambda exc: self.chat.show_error(messages.describe(exc).full()),
            on_cancel=lambda: self.chat.show_error("Stopped."),
            on_step=lambda step: self.chat.add_step(step.describe()),
        )

    def _new_conversation(self) -> None:
        if self.workflow is not None:
            self.conversation = Conversation(LLMClient(self.workflow.chat_settings))

    def open_file(self, path: str) -> None:
        if self.workflow is not None:
            self.preview.show_file(self.workflow.folder, path)

    # -- history and reorganization -------------------------------------------------------

    def refresh_history(self) -> None:
        """Reload the history panel now if it is in front, else when it is next shown (its
        git calls then stay off the GUI thread's path after every operation)."""
        if self.workflow is None:
            return
        if self.tabs.currentWidget() is not self.history:
            self._history_stale = True
            return
        self._history_stale = False
        self.history.set_history(self.workflow.history, self.workflow.history_message)

    def _tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.history and self._history_stale:
            self.refresh_history()

    def roll_back(self, operation: Operation) -> None:
        changes = self.workflow.history.changes(operation.sha)
        counts = {}
        for change in changes:
            counts[change.status] = counts.get(change.status, 0) + 1
        effect = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        verb = "Undo the rollback of" if operation.kind == "rollback" else "Roll back"
        if not self.confirm(
            f"{verb} this operation?",
            f"“{operation.summary}”\n\nIts changes to {len(changes)} files "
            f"({effect}) will be reversed as a new operation, which you can "
            "undo in turn.",
        ):
            return
        self._run(
            "rollback",
            lambda w, c: self.task_workflow(c).rollback(operation.sha),
            "Rolling back…",
            lambda sha: self._after_change(f"Rolled back: {operation.summary}"),
        )

    def restore_before(self, operation: Operation) -> None:
        if not self.confirm(
            "Restore the whole memory?",
            f"The memory will be made exactly as it was before “"
            f"{operation.summary}”. Later operations are undone too; all of "
            "it stays in the history.",
        ):
            return
        self._run(
            "rollback",
            lambda w, c: self.task_workflow(c).restore_before(operation.sha),
            "Restoring…",
            lambda sha: self._after_change(f"Restored to before: {operation.summary}"),
        )

    def plan_reorganization(self, path: str) -> None:
        def show_plan(plan) -> None:
            if not plan.moved_files:
                self.tell("Nothing to reorganize", f"{path}/ is already well organized.")
                return
            moves = "\n".join(f"• {old} → {new}" for old, new in plan.moved_files[:25])
            more = (
                f"\n… and {len(plan.moved_files) - 25} more" if len(plan.moved_files) > 25 else ""
            )
            if self.confirm(
                f"Reorganize {path}/?",
                f"{len(plan.moved_files)} memories would move into "
                f"{len(plan.new_directories)} new folders:\n{moves}{more}",
            ):
                self._run(
                    "reorganize",
                    lambda w, c: self.task_workflow(c).reorganize(path),
                    f"Reorganizing {path}/…",
                    lambda op: self._after_change(
                        f"Reorganized {path}/: {len(op.moved_files)} memories moved"
                    ),
                )

        self._run(
            "reorganize",
            lambda w, c: self.task_workflow(c).reorganize(path, dry_run=True),
            f"Planning {path}/…",
            show_plan,
        )

    def _after_change(self, message: str) -> None:
        self.tree.refresh()
        self.refresh_history()
        if self.preview.path:
            self.preview.show_file(self.workflow.folder, self.preview.path)
        self.status_label.setText(message)

    def _outside_edit(self, edit: OutsideEdit) -> None:
        self.tree.refresh()
        self.refresh_history()
        noun = "file" if len(edit.paths) == 1 else "files"
        self.status_label.setText(
            f"{len(edit.paths)} {noun} changed outside the app"
            + (" (recorded in the history)" if edit.commit else "")
        )
        if edit.problems:
            self.tell(
                "A memory's front matter is broken",
                "These files are still shown and searched, but their fields could not "
                "be read:\n" + "\n".join(f"• {p}" for p in edit.problems),
            )

    # -- settings -------------------------------------------------------------------------

    def open_settings(self) -> None:
        from gam_desktop.gui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.prefs, self.api_key, self)
        if dialog.exec():
            self.prefs, self.api_key = dialog.result_preferences(), dialog.result_key()
            save(self.store, self.prefs)
            if dialog.keychain_message:
                self.tell("The key was not saved", dialog.keychain_message)
            if self.workflow is not None:
                self.open_memory(self.workflow.folder.root)

    # -- running tasks --------------------------------------------------------------------

    def _run(
        self, name: str, job, busy: str, on_success, on_progress=None, cancellable: bool = False
    ) -> None:
        self.status_label.setText(busy)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.setVisible(cancellable)

        def finish() -> None:
            if not self.tasks.running("build"):
                self.progress.hide()
                self.cancel_button.hide()

        def succeeded(result) -> None:
            finish()
            on_success(result)

        def failed(error: Exception) -> None:
            finish()
            self.status_label.setText("Failed")
            self.show_error(error)
            self._next_in_queue()

        def cancelled() -> None:
            finish()
            self.status_label.setText("Cancelled; the memory was not changed")
            self._next_in_queue()

        self.tasks.start(
            name,
            job,
            on_success=succeeded,
            on_failure=failed,
            on_cancel=cancelled,
            on_progress=on_progress,
        )

    def _cancel(self, name: str) -> None:
        for task in self.tasks.running(name):
            task.cancel.cancel()
        if name == "build":
            self.queue.clear()
            self.status_label.setText("Cancelling…")

    # -- talking to the person (tests replace these) --------------------------------------

    def set_api_key(self, key: str | None) -> None:
        """The key arrived from the keychain (read off the GUI thread at start-up)."""
        if key and key != self.api_key:
            self.api_key = key
            if self.workflow is not None:
                self.workflow.settings = self.prefs.llm("builder", key)
                self.workflow.chat_settings = self.prefs.llm("chat", key)

    def confirm(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def tell(self, title: str, text: str) -> None:
        QMessageBox.information(self, title, text)

    def show_error(self, error: BaseException) -> None:
        message = messages.describe(error)
        log.warning("%s: %s", message.title, error)
        QMessageBox.warning(self, message.title, message.full())

    # -- closing --------------------------------------------------------------------------

    def closeEvent(self, event) -> None:
        self.store.setValue("window/geometry", self.saveGeometry())
        self.store.setValue("window/splitter", self.split.saveState())
        self.store.sync()
        self.tasks.cancel_all()
        self.tasks.wait_all()
        self._close_memory()
        if self.app_lock is not None:
            self.app_lock.release()
        super().closeEvent(event)


def default_memory_dir() -> Path:
    return Path(os.path.expanduser("~")) / "GAM Memory"
