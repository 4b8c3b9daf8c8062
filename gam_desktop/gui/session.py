"""The open memory: its Workflow, the folder watcher and the app lock; opening, closing and
recovering a memory, and the operations run on it.

It lives on the GUI thread. Each operation gets a Workflow of its own, made here and handed
to its task thread. What an operation wrote, and what the watcher saw changing outside the
app (reported on its own thread, received here through a queued signal), is announced once
as memory_changed(changes): every view updates from that signal alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QSettings, Signal, Slot

from gam_desktop import appdirs
from gam_desktop.engine.api import (
    CancelToken,
    Changes,
    FolderWatcher,
    MemoryFolder,
    OutsideEdit,
    PendingAdd,
    PriceTable,
    Workflow,
    foreign_content,
    plural,
    unsuitable,
)
from gam_desktop.gui import local_time, words
from gam_desktop.gui.app_lock import AppLock, FolderInUse
from gam_desktop.gui.dialogs import MAKE_MEMORY_TITLE
from gam_desktop.gui.history_panel import HistorySource
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.settings import Preferences, save
from gam_desktop.gui.workers import Task, Worker

T = TypeVar("T")


class MemorySession(QObject):
    """Signals: opened(root, folder) once a memory is open, before it is checked for an
    interrupted operation; memory_changed(changes) once after every operation that wrote
    and after every edit made outside the app; status(text); resumable(pending) when the
    memory opened (and recovered, if it had to be) holds an add that did not finish."""

    opened = Signal(object, object)
    memory_changed = Signal(object)
    status = Signal(str)
    resumable = Signal(object)
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
        self.embedding_key: str | None = None  # an embedding endpoint's own (the keychain's)
        self.operations = operations
        self.prompter = prompter
        self.workflow: Workflow | None = None
        self.watcher: FolderWatcher | None = None
        self.app_lock = AppLock(self)  # and the door a second start knocks on
        self.history_off = False  # git was not found when the memory was opened
        self._own: Changes | None = None  # what this window's last operation changed
        self._watched.connect(self._outside_edit)

    # -- opening and closing --------------------------------------------------------------

    def open(self, root: Path) -> bool:
        """Open (or start) a memory; False when the user declined, the folder is no place
        for a memory (`store.location`: the home folder, a system folder, a drive root, inside
        another memory or a git repository) or it is in use. Making a folder that holds files
        a memory is asked first, No being the default."""
        folder = MemoryFolder(root)
        refused = None if folder.is_memory() else unsuitable(root)
        if refused is not None:
            self.prompter.tell("This folder cannot be a memory", f"{root}\n\n{refused}")
            return False
        content = foreign_content(root)
        if content:
            shown = ", ".join(content[:5]) + (", …" if len(content) > 5 else "")
            if not self.prompter.confirm(
                MAKE_MEMORY_TITLE,
                f"{root} is not a memory yet and holds other things ({shown}). GAM Desktop "
                "can make it one: they are kept, and all of them are recorded in the memory's "
                "history first.",
                default_no=True,
                buttons=("Make it a memory", "Leave it as it is"),
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
        if self.workflow is not None:  # the memory open before: its search index is closed
            self.workflow.close()
        workflow = self.workflow = Workflow(
            gam_dir=root,
            settings=self.prefs.llm("builder", self.api_key),
            chat_settings=self.prefs.llm("chat", self.api_key),
            options=self.prefs.build_options(),
            git_path=self.prefs.git_path or None,
            prices=PriceTable.load(appdirs.prices_file()),
            embeddings=self.prefs.embedding_settings(self.api_key, self.embedding_key),
        )
        # Open (or create) the repository now, before any worker thread can: two threads
        # running `git init` / opening a half-made .git at once was a real race.
        self.history_off = workflow.history is None
        if make_memory:
            workflow.initialize()
        self._own = None
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
        """The window closes (its tasks have finished): stop watching, close the files the
        memory holds open (Windows could not delete or move the folder otherwise) and let
        another window open the memory."""
        self.stop_watching()
        if self.workflow is not None:
            self.workflow.close()
        self.app_lock.release()

    def _check_interrupted(self, workflow: Workflow) -> None:
        """An operation a crash interrupted is recovered first; then an add that did not
        finish is offered (`resumable`)."""
        interrupted = workflow.interrupted()
        if interrupted is None:
            self._offer_resume(workflow)
            return
        began = local_time.when(interrupted.started, in_sentence=True)
        restore = self.prompter.confirm(
            "An operation was interrupted",
            f"The {interrupted.operation} that began {began} "
            "did not finish (the app or the computer stopped). Restore the memory to its last "
            "saved state, or keep the files as they are?",
            buttons=("Restore", "Keep the files"),
        )
        self.write(
            "recover",
            lambda workflow: workflow.recover(restore=restore),
            "Recovering…",
            lambda message: f"Recovery: {message}",
            lambda _message: self._offer_resume(workflow),
        )

    def _offer_resume(self, workflow: Workflow) -> None:
        """`resumable(pending)` when the open memory holds an add that did not finish and
        still has documents to add whose files are there; a record with none is dropped."""
        if workflow is not self.workflow:  # another memory opened meanwhile
            return
        pending = workflow.interrupted_add()
        if pending is None or pending.cancelled:  # stopped on purpose: not asked about
            return  # (its files added again resume it, what it summarized not paid twice)
        if pending.added >= pending.total or not [f for f in pending.files if Path(f).is_file()]:
            workflow.forget_interrupted_add()
            return
        self.resumable.emit(pending)

    def forget_interrupted_add(self, _pending: PendingAdd) -> None:
        """The person declined to resume it: it is not offered again."""
        if self.workflow is not None:
            self.workflow.forget_interrupted_add()

    # -- operations on the open memory ----------------------------------------------------

    def task_workflow(self) -> Workflow:
        """A Workflow of its own for one task, made here on the GUI thread and handed to the
        task's thread, which alone uses it from then on (GitPython repositories and cancel
        tokens are not shared between threads); only the thread-safe search tools are."""
        workflow = self.workflow
        if workflow is None:
            raise RuntimeError("no memory is open")
        return Workflow(
            gam_dir=workflow.folder.root,
            settings=workflow.settings,
            chat_settings=workflow.chat_settings,
            options=workflow.options,
            cancel=CancelToken(),
            git_path=self.prefs.git_path or None,
            tools=workflow.search_tools(),
            prices=workflow.prices,
            embeddings=workflow.embeddings,
        )

    def read(
        self, name: str, call: Callable[[Workflow], T], busy: str, then: Callable[[T], None]
    ) -> None:
        """Run a read-only call (an estimate, a plan) on a task thread, shown in the status
        bar with its progress; `then(result)` on the GUI thread."""
        workflow = self.task_workflow()

        def job(worker: Worker, _cancel: CancelToken) -> T:
            workflow.progress = worker.report_progress  # the worker's signal is thread-safe
            return call(workflow)

        self.operations.run(name, job, busy, then, cancel=workflow.cancel)

    def write(
        self,
        name: str,
        call: Callable[[Workflow], T],
        busy: str,
        said: Callable[[T], str],
        then: Callable[[T], None] | None = None,
        cancellable: bool = False,
        live: Callable[[Changes], None] | None = None,
        said_on_cancel: Callable[[], str] | None = None,
    ) -> None:
        """Run a writing operation on a task thread, shown in the status bar with its
        progress. Once it succeeded: memory_changed(what it changed) once, if it wrote
        anything; then status(said(result)); then `then(result)`. With `live` (a drop
        committed in steps), each operation's changes are announced as soon as it is
        recorded, then handed to `live`, also when the task ends in a cancel or an error;
        `said_on_cancel` is the status a cancel leaves."""
        workflow = self.task_workflow()
        heard: list[Changes] = []
        workflow.on_change = heard.append  # on the task's thread, before it returns

        def job(worker: Worker, _cancel: CancelToken) -> T:
            workflow.progress = worker.report_progress
            if live is not None:  # queued to the GUI thread as each step is committed
                workflow.on_change = worker.report_step
            return call(workflow)

        def recorded(changes: Any) -> None:
            self._announce(changes)
            if live is not None:
                live(changes)

        def succeeded(result: Any) -> None:
            self._announce_heard(heard)
            self.status.emit(words.counted_notes(said(result)))  # "(5 notes)", not memories
            if then is not None:
                then(result)

        self.operations.run(
            name,
            job,
            busy,
            succeeded,
            cancellable=cancellable,
            cancel=workflow.cancel,
            on_step=recorded if live is not None else None,
            said_on_cancel=said_on_cancel,
        )

    def write_quietly(
        self,
        name: str,
        call: Callable[[Workflow, Worker], T],
        then: Callable[[T, Changes | None], None],
        failed: Callable[[Exception], None],
        *,
        on_step: Callable[[Any], None] | None = None,
        cancelled: Callable[[], None] | None = None,
    ) -> Task:
        """A writing operation its caller shows itself (a question in the chat, learning
        from it): no status bar, no message box. Like `write`, memory_changed(what it
        changed) comes first, then `then(result, changes)` (None when it wrote nothing);
        `failed(error)` or `cancelled()` otherwise."""
        workflow = self.task_workflow()
        heard: list[Changes] = []
        workflow.on_change = heard.append  # on the task's thread, before it returns

        def succeeded(result: Any) -> None:
            then(result, self._announce_heard(heard))

        def failure(error: Exception) -> None:
            self._announce_heard(heard)  # what it committed before failing, if anything
            failed(error)

        return self.operations.tasks.start(
            name,
            lambda worker, _cancel: call(workflow, worker),
            on_success=succeeded,
            on_failure=failure,
            on_cancel=cancelled,
            on_step=on_step,
            cancel=workflow.cancel,
        )

    def _announce_heard(self, heard: list[Changes]) -> Changes | None:
        """Announce what a task's operations changed (heard on its thread, read here once
        it has finished), as one Changes."""
        if not heard:
            return None
        changes = functools.reduce(Changes.then, heard)
        self._announce(changes)
        return changes

    def _announce(self, changes: Changes) -> None:
        self._own = changes
        if not changes.empty:
            self.memory_changed.emit(changes)

    def history_source(self) -> HistorySource | None:
        """None when history is off (no git). Each load opens a repository of its own from
        it, on its task thread; nothing here runs git."""
        if self.workflow is None or self.history_off:
            return None
        return HistorySource(self.workflow.folder.root, self.prefs.git_path or None)

    def history_message(self) -> str | None:
        """Why history is off, when it is."""
        return self.workflow.history_message if self.workflow is not None else None

    # -- settings -------------------------------------------------------------------------

    def set_api_key(self, key: str | None) -> None:
        """The key arrived from the keychain (read off the GUI thread at start-up)."""
        if key and key != self.api_key:
            self.api_key = key
            if self.workflow is not None:
                self.workflow.settings = self.prefs.llm("builder", key)
                self.workflow.chat_settings = self.prefs.llm("chat", key)
                self._embeddings_changed()

    def set_embedding_key(self, key: str | None) -> None:
        """The embedding endpoint's own key arrived from the keychain (at start-up)."""
        if key and key != self.embedding_key:
            self.embedding_key = key
            self._embeddings_changed()

    def _embeddings_changed(self) -> None:
        """The open memory's search asks for embeddings with the keys known now (they arrive
        from the keychain after the memory opened)."""
        if self.workflow is not None:
            embeddings = self.prefs.embedding_settings(self.api_key, self.embedding_key)
            self.workflow.embeddings = embeddings
            self.workflow.search_tools().use_embeddings(embeddings)

    def set_preferences(
        self, prefs: Preferences, api_key: str | None, embedding_key: str | None = None
    ) -> None:
        """Settings were saved: kept for the next memory opened (the window re-opens this
        one)."""
        self.prefs, self.api_key, self.embedding_key = prefs, api_key, embedding_key
        save(self.store, prefs)

    # -- edits made outside the app -------------------------------------------------------

    @Slot(object)
    def _outside_edit(self, edit: OutsideEdit) -> None:
        if not self._echo(edit) and not edit.changes.empty:
            self.memory_changed.emit(edit.changes)
        for line in edit.left_out:  # a pipe or device another program put among the notes
            self.status.emit(line)
        if not edit.paths:  # written by the app itself (another window, gam-add, a rollback)
            return
        self.status.emit(
            f"{plural(len(edit.paths), 'file')} changed outside the app"
            + (" (recorded in the history)" if edit.commit else "")
        )
        if edit.problems:
            self.prompter.tell(
                "A note's front matter is broken",
                "\n".join(edit.problems)
                + "\n\nThese files are still shown and searched; fix them in any editor.",
            )

    def _echo(self, edit: OutsideEdit) -> bool:
        """Whether the watcher only saw this window's last operation again (git's own
        writes in a rollback or restore): nothing new to record, no one committed since,
        and every path seen is one that operation changed."""
        own = self._own
        return (
            own is not None
            and edit.commit is None
            and not edit.paths
            and edit.head is not None
            and edit.head == own.commit
            and all(own.touches(path) for path in edit.changed)
        )
