"""The open memory: its Workflow, the conversation, the folder watcher and the app lock;
opening, closing and recovering a memory, and the Workflow each task gets.

It lives on the GUI thread. Edits the watcher reports on its own thread reach it through a
queued signal; it tells the window what happened through its signals.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal, Slot

from gam_desktop.engine.ask.conversation import Conversation
from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.progress import CancelToken, ProgressCallback, no_progress
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.watcher import FolderWatcher
from gam_desktop.engine.workflow import OutsideEdit, Workflow, foreign_content
from gam_desktop.gui.app_lock import AppLock, FolderInUse
from gam_desktop.gui.history_panel import HistorySource
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.settings import Preferences, save


class MemorySession(QObject):
    """Signals: opened(root, folder) once a memory is open, before it is checked for an
    interrupted operation; changed(message) after an operation changed the memory;
    edited_outside() when files changed outside the app; status(text)."""

    opened = Signal(object, object)
    changed = Signal(str)
    edited_outside = Signal()
    status = Signal(str)
    _watched = Signal(object)  # emitted on the watcher's thread, received on the GUI thread

    def __init__(
        self,
        prefs: Preferences,
        store: QSettings,
        api_key: str | None,
        operations: Operations,
        prompter: Prompter,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.prefs = prefs
        self.store = store
        self.api_key = api_key
        self.operations = operations
        self.prompter = prompter
        self.workflow: Workflow | None = None
        self.conversation: Conversation | None = None
        self.watcher: FolderWatcher | None = None
        self.app_lock = AppLock()
        self.history_off = False  # git was not found when the memory was opened
        self._watched.connect(self._outside_edit)

    # -- opening and closing --------------------------------------------------------------

    def open(self, root: Path) -> bool:
        """Open (or start) a memory; False when the user declined or it is in use."""
        folder = MemoryFolder(root)
        if foreign_content(root):
            if not self.prompter.confirm(
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
            self.app_lock.hold(folder)
        except FolderInUse as exc:
            self.prompter.tell("This memory is already open", str(exc))
            return False
        except OSError as exc:
            self.prompter.show_error(exc)
            return False
        self.stop_watching()
        workflow = self.workflow = Workflow(
            gam_dir=root,
            settings=self.prefs.llm("builder", self.api_key),
            chat_settings=self.prefs.llm("chat", self.api_key),
            options=self.prefs.build_options(),
            git_path=self.prefs.git_path or None,
        )
        # Open (or create) the repository now, before any worker thread can: two threads
        # running `git init` / opening a half-made .git at once was a real race.
        self.history_off = workflow.history is None
        if make_memory:
            workflow.initialize()
        self.conversation = Conversation(LLMClient(workflow.chat_settings))
        self.prefs.remember_folder(str(root))
        save(self.store, self.prefs)
        self.opened.emit(root, workflow.folder)
        self._check_interrupted(workflow)
        self.watcher = workflow.watch(self._watched.emit)
        return True

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    def close(self) -> None:
        """The window closes: stop watching and let another window open the memory."""
        self.stop_watching()
        self.app_lock.release()

    def _check_interrupted(self, workflow: Workflow) -> None:
        interrupted = workflow.interrupted()
        if interrupted is None:
            return
        restore = self.prompter.confirm(
            "An operation was interrupted",
            f"A {interrupted.operation} started {interrupted.started} did not finish (the app "
            "or the computer stopped). Restore the memory to its last saved state? "
            "Choose No to keep the files as they are.",
        )
        self.operations.run(
            "recover",
            lambda w, c: self.task_workflow(c).recover(restore=restore),
            "Recovering…",
            lambda message: self.report_change(f"Recovery: {message}"),
        )

    # -- what the open memory is used through ---------------------------------------------

    def task_workflow(
        self, cancel: CancelToken, progress: ProgressCallback | None = None
    ) -> Workflow:
        """A Workflow of its own for one task: GitPython repositories and cancel tokens are
        not shared between threads; only the thread-safe search tools are."""
        workflow = self.workflow
        if workflow is None:
            raise RuntimeError("no memory is open")
        if workflow._tools is None:
            from gam_desktop.engine.ask.tools import MemoryTools

            workflow._tools = MemoryTools(workflow.folder.root)
        return Workflow(
            gam_dir=workflow.folder.root,
            settings=workflow.settings,
            chat_settings=workflow.chat_settings,
            options=workflow.options,
            cancel=cancel,
            git_path=self.prefs.git_path or None,
            tools=workflow._tools,
            progress=progress or no_progress,
        )

    def history_source(self) -> HistorySource | None:
        """None when history is off (no git). Loads open their own repository from it: the
        session's repository is opened on the GUI thread and used by the watcher's thread."""
        if self.workflow is None or self.workflow.history is None:
            return None
        return HistorySource(self.workflow.folder.root, self.prefs.git_path or None)

    def new_conversation(self) -> None:
        if self.workflow is not None:
            self.conversation = Conversation(LLMClient(self.workflow.chat_settings))

    def report_change(self, message: str) -> None:
        """An operation changed the memory: the views reload and say `message`."""
        self.changed.emit(message)

    # -- settings -------------------------------------------------------------------------

    def set_api_key(self, key: str | None) -> None:
        """The key arrived from the keychain (read off the GUI thread at start-up)."""
        if key and key != self.api_key:
            self.api_key = key
            if self.workflow is not None:
                self.workflow.settings = self.prefs.llm("builder", key)
                self.workflow.chat_settings = self.prefs.llm("chat", key)

    def set_preferences(self, prefs: Preferences, api_key: str | None) -> None:
        """Settings were saved: kept for the next memory opened (the window re-opens this
        one)."""
        self.prefs, self.api_key = prefs, api_key
        save(self.store, prefs)

    # -- edits made outside the app -------------------------------------------------------

    @Slot(object)
    def _outside_edit(self, edit: OutsideEdit) -> None:
        self.edited_outside.emit()
        if not edit.paths:  # written by the app itself (another window, gam-add, a rollback)
            return
        noun = "file" if len(edit.paths) == 1 else "files"
        self.status.emit(
            f"{len(edit.paths)} {noun} changed outside the app"
            + (" (recorded in the history)" if edit.commit else "")
        )
        if edit.problems:
            self.prompter.tell(
                "A memory's front matter is broken",
                "These files are still shown and searched, but their fields could not "
                "be read:\n" + "\n".join(f"• {p}" for p in edit.problems),
            )
