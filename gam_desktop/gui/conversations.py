"""The open memory's conversations: the list beside the chat, which one is shown and
continued, starting a new one, renaming and deleting; the last one shown is remembered per
memory (QSettings) and shown again when the memory is next opened.

The list is read on a task thread when a memory opens and again whenever the memory's
conversations changed (a saved turn, a rename or delete, a rollback, an edit made outside
the app): memory_changed is the only trigger. A conversation is read from its file on a
task thread too. Deleting is a commit the History can undo.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal

from gam_desktop.engine.api import (
    CHAT,
    CONVERSATIONS_DIR,
    Changes,
    ConversationInfo,
    ConversationRecord,
    MemoryFolder,
    load_conversation,
    plural,
    saved_reports,
)
from gam_desktop.gui.chat_controller import ChatController
from gam_desktop.gui.prompts import Prompter
from gam_desktop.gui.session import MemorySession

AskText = Callable[[str, str, str], "str | None"]  # (title, label, text) -> the text or None


def memory_key(root: Path) -> str:
    """The QSettings group of one memory's own GUI state."""
    digest = hashlib.sha1(str(Path(root).resolve()).encode("utf-8")).hexdigest()[:16]
    return f"memories/{digest}"


class ConversationsController(QObject):
    """Signals: listed(conversations), shown(record) for a saved conversation to show and
    continue, cleared(saving) for a new one, current(info or None) for the one on
    screen (its title and turns as the list has them)."""

    listed = Signal(object)
    shown = Signal(object)
    cleared = Signal(bool)
    current = Signal(object)

    def __init__(
        self,
        session: MemorySession,
        chat: ChatController,
        store: QSettings,
        prompter: Prompter,
        ask_text: AskText,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.chat = chat
        self.store = store
        self.prompter = prompter
        self.ask_text = ask_text
        self.conversations: list[ConversationInfo] = []
        self._generation = 0  # bumped on every load: an older list is dropped
        self._restore: str | None = None  # shown again once the first list is in
        self._reload_current = False  # the shown conversation's file changed under it
        session.opened.connect(self.memory_opened)
        session.memory_changed.connect(self.memory_changed)
        chat.conversation_started.connect(self._started)

    @property
    def current_id(self) -> str | None:
        return self.chat.conversation_id

    def info(self, conversation_id: str | None) -> ConversationInfo | None:
        return next((c for c in self.conversations if c.id == conversation_id), None)

    # -- following the memory ---------------------------------------------------------------

    def memory_opened(self, root: Path, _folder: MemoryFolder) -> None:
        """Another memory (or the same one again): its list, then its last conversation."""
        self.conversations = []
        self.listed.emit([])
        self.new()
        last = self.store.value(f"{memory_key(root)}/conversation")
        self._restore = str(last) if last else None
        self.refresh()

    def memory_changed(self, changes: Changes) -> None:
        if not changes.touches(CONVERSATIONS_DIR):
            return
        shown = self.info(self.current_id)
        if shown is not None and changes.kind != CHAT and changes.touches(shown.path):
            self._reload_current = True  # a rollback, a restore, an edit in another editor
        self.refresh()

    def refresh(self) -> None:
        """Read the list again (on a task thread)."""
        if self.session.workflow is None:
            return
        self._generation += 1
        generation, workflow = self._generation, self.session.task_workflow()
        self.session.operations.tasks.start(
            "conversations",
            lambda _w, _c: workflow.conversations(),
            on_success=lambda listed: self._listed(generation, listed),
            on_failure=self.prompter.show_error,
        )

    def _listed(self, generation: int, conversations: list[ConversationInfo]) -> None:
        if generation != self._generation:
            return
        self.conversations = conversations
        self.listed.emit(conversations)
        restore, self._restore = self._restore, None
        reload, self._reload_current = self._reload_current, False
        if restore and self.info(restore) is not None and self.current_id is None:
            self.open(restore)
        elif self.current_id is not None and self.info(self.current_id) is None:
            self.new()  # deleted, rolled back or removed outside the app
        elif reload and self.current_id is not None:
            self._load(self.current_id)
        self.current.emit(self.info(self.current_id))

    # -- which conversation is shown ----------------------------------------------------------

    def new(self) -> None:
        """An empty chat: the next question starts a conversation."""
        self.chat.show(None)
        meta = self.session.workflow.folder.read_meta() if self.session.workflow else None
        self.cleared.emit(meta is None or meta.save_conversations)
        self.current.emit(None)

    def open(self, conversation_id: str) -> None:
        """Show a saved conversation and continue it (read on a task thread)."""
        if conversation_id == self.current_id or self.session.workflow is None:
            return
        self.chat.show(conversation_id)
        self._remember(conversation_id)
        self.current.emit(self.info(conversation_id))
        self._load(conversation_id)

    def _load(self, conversation_id: str) -> None:
        workflow = self.session.task_workflow()
        root = workflow.folder.root

        def read(_worker: object, _cancel: object) -> tuple[ConversationRecord, dict[int, str]]:
            record, _path = load_conversation(root, conversation_id)
            return record, saved_reports(record, root)  # (a report saved before a restart)

        def shown(loaded: tuple[ConversationRecord, dict[int, str]]) -> None:
            if self.current_id == conversation_id:  # else another was chosen meanwhile
                self.chat.reports_saved_as(conversation_id, loaded[1])
                self.shown.emit(loaded[0])

        def failed(error: Exception) -> None:
            if self.current_id == conversation_id:
                self.new()
                self.prompter.show_error(error)

        self.session.operations.tasks.start(
            "conversation",
            read,
            on_success=shown,
            on_failure=failed,
        )

    def _started(self, conversation_id: str) -> None:
        """The first answer of a new conversation saved it."""
        self._remember(conversation_id)

    def _remember(self, conversation_id: str) -> None:
        workflow = self.session.workflow
        if workflow is not None:
            self.store.setValue(f"{memory_key(workflow.folder.root)}/conversation", conversation_id)

    # -- renaming and deleting ----------------------------------------------------------------

    def rename(self, conversation_id: str) -> None:
        info = self.info(conversation_id)
        if info is None:
            return
        title = self.ask_text("Rename the conversation", "Title:", info.title)
        title = " ".join((title or "").split())
        if not title or title == info.title:
            return
        self.session.write(
            "rename-conversation",
            lambda workflow: workflow.rename_conversation(conversation_id, title),
            "Renaming the conversation…",
            lambda _changes: f"Renamed the conversation: {title}",
        )

    def delete(self, conversation_id: str) -> None:
        info = self.info(conversation_id)
        if info is None:
            return
        turns = plural(info.turns, "turn")
        if not self.prompter.confirm(
            "Delete this conversation?",
            f"“{info.title}” ({turns}) will be deleted from this memory. The facts learned "
            "from it are kept.\n\nThe History can bring it back: roll back the deletion.",
            buttons=("Delete", "Cancel"),
        ):
            return
        self.session.write(
            "delete-conversation",
            lambda workflow: workflow.delete_conversation(conversation_id),
            "Deleting the conversation…",
            lambda _changes: f"Deleted the conversation: {info.title} (History can bring it back)",
        )
