"""Opening a memory: the first-run welcome, choosing a folder, one window per memory,
and recovering from an operation a crash interrupted.

A mixin of MainWindow (it sets the window's workflow, conversation and watcher, and uses
its panels, confirm, tell, show_error and _run).
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from gam_desktop.engine.ask.conversation import Conversation
from gam_desktop.engine.llm import LLMClient
from gam_desktop.engine.store.folder import APP_DIR, APP_LOCK_FILE, MemoryFolder
from gam_desktop.engine.workflow import Workflow, foreign_content
from gam_desktop.gui import dialogs
from gam_desktop.gui.settings import save


class FolderInUse(RuntimeError):
    """The memory is open in another GAM Desktop window."""


class MemoryOpening:
    """Welcome, open, lock, close, recover."""

    def welcome(self) -> None:
        """The first run: say what the app does and ask where the memory should live."""
        self.preview.show_message(dialogs.WELCOME_TITLE, dialogs.WELCOME_TEXT)
        choice = dialogs.ask_where_memory_lives(self)
        if choice is dialogs.Welcome.CREATE:
            folder = dialogs.choose_new_memory_folder(self)
            if folder:
                self.open_memory(folder)
        elif choice is dialogs.Welcome.OPEN_EXISTING:
            self.choose_folder()

    def choose_folder(self) -> None:
        folder = dialogs.choose_memory_folder(self)
        if folder:
            self.open_memory(folder)

    def open_memory(self, root: Path) -> bool:
        """Open (or start) a memory; False when the user declined or it is in use."""
        folder = MemoryFolder(root)
        if foreign_content(root):
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
        path = folder.root / APP_LOCK_FILE
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
