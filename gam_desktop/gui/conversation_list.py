"""The conversations list beside the chat: "New conversation", a search box filtering by
title, the memory's conversations newest first (title, when, how many turns), and a
context menu to rename or delete one."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import ConversationInfo, plural
from gam_desktop.gui import local_time
from gam_desktop.gui.accessible import name_clear_button
from gam_desktop.gui.labels import never_widens

ID_ROLE = Qt.ItemDataRole.UserRole
EMPTY_HINT = (
    "No conversations yet.\n\nAsk a question: the conversation is saved in this memory "
    "and listed here."
)


class ConversationList(QWidget):
    """Signals: selected(id), new_requested(), rename_requested(id), delete_requested(id)."""

    selected = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.conversations: list[ConversationInfo] = []
        self._current: str | None = None
        # "+ New" (above the conversations, it says what is new): with "New conversation" the
        # list could not be narrower than 146 px, nor the window narrower than 800
        self.fresh = QPushButton("+ New")
        self.fresh.setObjectName("newConversation")
        self.fresh.setAccessibleName("New conversation")
        self.fresh.setToolTip("Start a new conversation (Memory ▸ New conversation)")
        self.fresh.clicked.connect(self.new_requested)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search conversations")
        self.search.setAccessibleName("Search conversations")
        name_clear_button(self.search, "Clear the conversations' search")
        self.search.textChanged.connect(self._fill)
        self.list = QListWidget()
        self.list.setObjectName("conversations")
        self.list.setAccessibleName("Conversations")
        self.list.setAccessibleDescription(
            "Enter opens one; the context menu renames or deletes it"
        )
        self.list.setWordWrap(False)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.itemClicked.connect(self._chosen)
        self.list.itemActivated.connect(self._chosen)
        self.empty = QLabel(EMPTY_HINT)
        self.empty.setObjectName("emptyHint")
        self.empty.setWordWrap(True)
        never_widens(self.empty)  # its longest word does not set the list's width
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 0, 8)
        layout.addWidget(self.fresh)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        self._fill()

    # -- driven by the controller -----------------------------------------------------------

    def show_conversations(self, conversations: list[ConversationInfo]) -> None:
        self.conversations = list(conversations)
        self._fill()

    def select(self, info: ConversationInfo | None) -> None:
        """Mark the conversation on screen (none for a new one) without choosing it."""
        self._current = info.id if info is not None else None
        item = self.item(self._current)
        if item is not None:
            self.list.setCurrentItem(item)
        else:
            self.list.setCurrentRow(-1)
            self.list.clearSelection()

    def item(self, conversation_id: str | None) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item is not None and item.data(ID_ROLE) == conversation_id:
                return item
        return None

    def shown_ids(self) -> list[str]:
        """The ids listed now (after the search), top to bottom."""
        items = (self.list.item(row) for row in range(self.list.count()))
        return [str(item.data(ID_ROLE)) for item in items if item is not None]

    def actions_for(self, conversation_id: str) -> list[QAction]:
        """The context menu's actions for one conversation."""
        rename = QAction("&Rename…", self)
        rename.triggered.connect(lambda: self.rename_requested.emit(conversation_id))
        delete = QAction("&Delete…", self)
        delete.triggered.connect(lambda: self.delete_requested.emit(conversation_id))
        return [rename, delete]

    # -- internals --------------------------------------------------------------------------

    def _fill(self) -> None:
        wanted = self.search.text().strip().casefold()
        self.list.clear()
        for info in self.conversations:
            if wanted and wanted not in info.title.casefold():
                continue
            turns = plural(info.turns, "turn")
            item = QListWidgetItem(f"{info.title}\n{local_time.when(info.updated)} · {turns}")
            item.setData(ID_ROLE, info.id)
            item.setToolTip(info.title)
            self.list.addItem(item)
        if self.conversations and not self.list.count():
            self.empty.setText(f"No conversation’s title has “{self.search.text().strip()}”.")
        elif not self.conversations:
            self.empty.setText(EMPTY_HINT)
        self.empty.setVisible(not self.list.count())
        self.list.setVisible(bool(self.list.count()))
        current = self.item(self._current)
        if current is not None:
            self.list.setCurrentItem(current)

    def _chosen(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(ID_ROLE)
        if conversation_id:
            self.selected.emit(str(conversation_id))

    def _menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        menu = QMenu(self)
        for action in self.actions_for(str(item.data(ID_ROLE))):
            menu.addAction(action)
        menu.exec(self.list.viewport().mapToGlobal(position))
