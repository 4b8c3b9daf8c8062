"""The Facts view: what the memory learned from what its user said, the most recently
updated first, each with the conversation it was said in and its date; show or edit a
fact's file (it is Markdown: any editor will do, and the watcher records the edit), open
its conversation, or forget it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.textutil import plural
from gam_desktop.gui import local_time
from gam_desktop.gui.conversation_list import when
from gam_desktop.gui.personal_memory import FactRow

ROW_ROLE = Qt.ItemDataRole.UserRole
EMPTY_HINT = (
    "No facts yet. When you tell the memory something about yourself in the chat "
    "(“I live in Porto.”), it learns it as a fact and lists it here, with the conversation "
    "you said it in."
)
LEARNING_OFF = (
    "Learning is switched off for this memory: nothing you say is learned "
    "(Memory ▸ Learn facts from what I say)."
)


class FactsView(QWidget):
    """Signals: show_requested(path), edit_requested(path), conversation_requested(id),
    forget_requested(fact)."""

    show_requested = Signal(str)
    edit_requested = Signal(str)
    conversation_requested = Signal(str)
    forget_requested = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[FactRow] = []
        self.heading = QLabel("Facts learned from what you said")
        self.heading.setObjectName("conversationTitle")
        self.caption = QLabel()
        self.caption.setObjectName("conversationCaption")
        self.caption.setWordWrap(True)
        self.notice = QLabel(LEARNING_OFF)
        self.notice.setObjectName("warning")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.list = QTreeWidget()
        self.list.setObjectName("facts")
        self.list.setAccessibleName("Facts")
        self.list.setHeaderLabels(["Fact", "Said in", "Updated"])
        self.list.setRootIsDecorated(False)
        self.list.setWordWrap(True)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(1, 220)
        self.list.currentItemChanged.connect(lambda *_: self._enable())
        self.list.itemDoubleClicked.connect(lambda *_: self._show())
        self.empty = QLabel(EMPTY_HINT)
        self.empty.setObjectName("emptyHint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # the keyboard can rest here (read by screen readers) when the last fact is forgotten
        self.empty.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.show_button = QPushButton("Show")
        self.show_button.setAccessibleName("Show the fact")
        self.show_button.setToolTip("Show the fact's file in the preview")
        self.show_button.clicked.connect(self._show)
        self.edit = QPushButton("Edit…")
        self.edit.setAccessibleName("Edit the fact…")
        self.edit.setToolTip("Open the fact's file in your editor (the change is recorded)")
        self.edit.clicked.connect(self._edit)
        self.conversation = QPushButton("Open its conversation")
        self.conversation.clicked.connect(self._conversation)
        self.forget = QPushButton("Forget")
        self.forget.setAccessibleName("Forget the fact")
        self.forget.setToolTip("Forget this fact (History can bring it back)")
        self.forget.clicked.connect(self._forget)
        buttons = QHBoxLayout()
        for button in (self.show_button, self.edit, self.conversation):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.forget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.heading)
        layout.addWidget(self.caption)
        layout.addWidget(self.notice)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        layout.addLayout(buttons)
        self.show_facts([])

    def show_facts(self, rows: list[FactRow]) -> None:
        chosen = self.selected()
        current = self.list.currentItem()
        at = self.list.indexOfTopLevelItem(current) if current is not None else -1
        focus = QApplication.focusWidget()
        keyboard = focus if focus is not None and self.isAncestorOf(focus) else None
        self.rows = list(rows)
        self.list.clear()
        for row in rows:
            fact = row.fact
            said = row.conversation_title or ("—" if not fact.source_conversation else "(deleted)")
            item = QTreeWidgetItem([fact.statement, said, when(fact.updated)])
            item.setData(0, ROW_ROLE, fact.id)
            item.setToolTip(0, f"{fact.statement}\n{fact.path}")
            item.setToolTip(1, row.conversation_title or "")
            item.setToolTip(2, local_time.date_time(fact.updated))
            self.list.addTopLevelItem(item)
            if chosen is not None and fact.id == chosen.id:
                self.list.setCurrentItem(item)
        self.list.setVisible(bool(rows))
        self.empty.setVisible(not rows)
        self.caption.setText(
            f"{plural(len(rows), 'fact')}, the most recently updated first. Each is a Markdown "
            "file under facts/: edit it in any editor, or forget it (History can bring it back)."
            if rows
            else ""
        )
        self.caption.setVisible(bool(rows))
        following = self.list.topLevelItem(min(at, len(rows) - 1)) if at >= 0 else None
        if self.list.currentItem() is None and following is not None:  # it was forgotten:
            self.list.setCurrentItem(following)  # the fact after it
        self._enable()
        if keyboard is not None:
            self._keep_keyboard(keyboard)

    def _keep_keyboard(self, widget: QWidget) -> None:
        """The keyboard stays in the Facts: on the button it was on while it is enabled (a
        Forget selects the next fact), else on the list, else on what says there are none.
        It went to the Find box when the list was read again."""
        for target in (widget, self.list, self.empty):
            if target.isEnabled() and target.isVisibleTo(self):
                target.setFocus(Qt.FocusReason.OtherFocusReason)
                return

    def set_learning(self, on: bool) -> None:
        self.notice.setVisible(not on)

    def selected(self) -> Fact | None:
        item = self.list.currentItem()
        wanted = item.data(0, ROW_ROLE) if item is not None else None
        return next((r.fact for r in self.rows if r.fact.id == wanted), None)

    def select(self, fact_id: str) -> None:
        for index in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(index)
            if item is not None and item.data(0, ROW_ROLE) == fact_id:
                self.list.setCurrentItem(item)

    def _enable(self) -> None:
        fact = self.selected()
        for button in (self.show_button, self.edit, self.forget):
            button.setEnabled(fact is not None)
        self.conversation.setEnabled(
            fact is not None and any(r.fact is fact and r.conversation_title for r in self.rows)
        )

    def _show(self) -> None:
        fact = self.selected()
        if fact is not None:
            self.show_requested.emit(fact.path)

    def _edit(self) -> None:
        fact = self.selected()
        if fact is not None:
            self.edit_requested.emit(fact.path)

    def _conversation(self) -> None:
        fact = self.selected()
        if fact is not None and fact.source_conversation:
            self.conversation_requested.emit(fact.source_conversation)

    def _forget(self) -> None:
        fact = self.selected()
        if fact is not None:
            self.forget_requested.emit(fact)
