"""The Facts view: what the memory learned from what its user said, the most recently
updated first, each with the conversation it was said in and since when it holds; under
the list, the chosen fact's history (stated, updated, taken back, forgotten, restored, each
dated, with a link to the conversation turn that did it). Show or edit a fact's file (it is
Markdown: any editor will do, and the watcher records the edit), open its conversation,
forget it (a tombstone: Undo brings it back), and, with "Show what is no longer true",
the facts taken back or forgotten, which Restore brings back."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import Fact, plural
from gam_desktop.gui import local_time
from gam_desktop.gui.fact_history import WORDS, history_html, parse_turn_link
from gam_desktop.gui.labels import never_widens
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
NO_HISTORY = "Choose a fact to see its history: when it was said, changed or taken back."


class FactsView(QWidget):
    """Signals: show_requested(path), edit_requested(path), conversation_requested(id),
    turn_requested(conversation id, turn), forget_requested(fact), restore_requested(fact)."""

    show_requested = Signal(str)
    edit_requested = Signal(str)
    conversation_requested = Signal(str)
    turn_requested = Signal(str, int)
    forget_requested = Signal(object)
    restore_requested = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[FactRow] = []  # those listed
        self.all_rows: list[FactRow] = []  # with the facts no longer true
        self._forgotten: Fact | None = None  # what the Undo bar brings back
        self.heading = QLabel("Facts learned from what you said")
        self.heading.setObjectName("conversationTitle")
        self.heading.setWordWrap(True)  # two lines in a narrow window (800 px), not wider
        never_widens(self.heading)
        self.caption = QLabel()
        self.caption.setObjectName("conversationCaption")
        self.caption.setWordWrap(True)
        self.notice = QLabel(LEARNING_OFF)
        self.notice.setObjectName("warning")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self._make_undo_bar()
        self.ended = QCheckBox("Show what is no longer true")
        self.ended.setToolTip(
            "Also list the facts taken back or forgotten (Restore brings one back)"
        )
        self.ended.toggled.connect(lambda _on: self.show_facts(self.all_rows))
        self._make_list()
        self.history = QTextBrowser()
        self.history.setObjectName("factHistory")
        self.history.setAccessibleName("The fact's history")
        self.history.setOpenLinks(False)
        self.history.anchorClicked.connect(self._link)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.list)
        self.split.addWidget(self.history)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        self.empty = QLabel(EMPTY_HINT)
        self.empty.setObjectName("emptyHint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # the keyboard can rest here (read by screen readers) when the last fact is forgotten;
        # not as selectable text: a caret blinked in it
        self.empty.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        for widget in (self.heading, self.caption, self.notice, self.undo_bar, self.ended):
            layout.addWidget(widget)
        layout.addWidget(self.split, 1)
        layout.addWidget(self.empty, 1)
        layout.addLayout(self._make_buttons())
        self.show_facts([])

    def _make_undo_bar(self) -> None:
        self.undo_bar = QFrame()
        self.undo_bar.setObjectName("undoBar")
        self.undo_text = QLabel()
        self.undo_text.setWordWrap(True)
        never_widens(self.undo_text)  # a long fact
        self.undo = QPushButton("Undo")
        self.undo.setAccessibleName("Undo: bring the forgotten fact back")
        self.undo.clicked.connect(self._undo)
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.clicked.connect(self.hide_undo)
        row = QHBoxLayout(self.undo_bar)
        row.setContentsMargins(6, 4, 6, 4)
        row.addWidget(self.undo_text, 1)
        row.addWidget(self.undo)
        row.addWidget(self.dismiss)
        self.undo_bar.hide()

    def _make_list(self) -> None:
        self.list = QTreeWidget()
        self.list.setObjectName("facts")
        self.list.setAccessibleName("Facts")
        self.list.setHeaderLabels(["Fact", "Said in", "Since"])
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

    def _make_buttons(self) -> QHBoxLayout:
        self.show_button = QPushButton("Show")
        self.show_button.setAccessibleName("Show the fact")
        self.show_button.setToolTip("Show the fact's file in the preview")
        self.show_button.clicked.connect(self._show)
        self.edit = QPushButton("Edit…")
        self.edit.setAccessibleName("Edit the fact…")
        self.edit.setToolTip("Open the fact's file in your editor (the change is recorded)")
        self.edit.clicked.connect(self._edit)
        # short: the Facts tab fits a window 800 px wide beside the tree and the preview
        self.conversation = QPushButton("Conversation")
        self.conversation.setAccessibleName("Open its conversation")
        self.conversation.setToolTip("Open the conversation the fact was said in")
        self.conversation.clicked.connect(self._conversation)
        self.forget = QPushButton("Forget")
        self.forget.setAccessibleName("Forget the fact")
        self.forget.setToolTip("Forget this fact (Undo, or Restore, brings it back)")
        self.forget.clicked.connect(self._forget)
        self.restore = QPushButton("Restore")
        self.restore.setAccessibleName("Restore the fact")
        self.restore.setToolTip("Bring this fact back: it holds again")
        self.restore.clicked.connect(self._restore)
        buttons = QHBoxLayout()
        for button in (self.show_button, self.edit, self.conversation):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.restore)
        buttons.addWidget(self.forget)
        return buttons

    # -- the list ------------------------------------------------------------------------------

    def show_facts(self, rows: list[FactRow]) -> None:
        chosen = self.selected()
        current = self.list.currentItem()
        at = self.list.indexOfTopLevelItem(current) if current is not None else -1
        focus = QApplication.focusWidget()
        keyboard = focus if focus is not None and self.isAncestorOf(focus) else None
        self.all_rows = list(rows)
        self.rows = [r for r in rows if r.current or self.ended.isChecked()]
        back = self._forgotten is not None and any(
            r.current and r.fact.id == self._forgotten.id for r in rows
        )
        if back or not rows:  # restored (here, by History or by hand), or another memory
            self.hide_undo()
        self.list.clear()
        for row in self.rows:
            item = self._item(row)
            self.list.addTopLevelItem(item)
            if chosen is not None and row.fact.id == chosen.id:
                self.list.setCurrentItem(item)
        self._describe()
        following = self.list.topLevelItem(min(at, len(self.rows) - 1)) if at >= 0 else None
        if self.list.currentItem() is None and following is not None:  # it was forgotten:
            self.list.setCurrentItem(following)  # the fact after it
        self._enable()
        if keyboard is not None:
            self._keep_keyboard(keyboard)

    def _item(self, row: FactRow) -> QTreeWidgetItem:
        fact = row.fact
        said = row.conversation_title or ("—" if not fact.source_conversation else "(deleted)")
        moment: datetime | None = fact.created
        since = local_time.when(moment)
        if not row.current:  # when it was taken back or forgotten
            ending = row.events[-1] if row.events else None
            moment = ending.at if ending else fact.deleted
            word = WORDS.get(ending.kind, "Ended") if ending else "Ended"
            since = f"{word} {local_time.when(moment, in_sentence=True)}"
        item = QTreeWidgetItem([fact.statement, said, since])
        item.setData(0, ROW_ROLE, fact.id)
        item.setToolTip(0, f"{fact.statement}\n{fact.path}")
        item.setToolTip(1, row.conversation_title or "")
        if not row.current:  # no longer true: greyed and slanted, as History shows undone
            font = QFont(item.font(0))
            font.setItalic(True)
            for column in range(3):
                item.setFont(column, font)
                item.setForeground(column, self.palette().placeholderText())
        return item

    def _describe(self) -> None:
        current = sum(r.current for r in self.all_rows)
        ended = len(self.all_rows) - current
        self.list.setVisible(bool(self.rows))
        self.history.setVisible(bool(self.rows))
        self.split.setVisible(bool(self.rows))  # empty, it still took half the page
        self.empty.setVisible(not self.rows)
        self.ended.setVisible(ended > 0 or self.ended.isChecked())
        self.ended.setText(f"Show what is no longer true ({ended})")
        text = (
            f"{plural(current, 'fact')}, the most recently updated first. Each is a Markdown "
            "file under facts/: edit it in any editor, or forget it (Undo brings it back)."
        )
        self.caption.setText(text if self.all_rows else "")
        self.caption.setVisible(bool(self.all_rows))

    def _keep_keyboard(self, widget: QWidget) -> None:
        """The keyboard stays in the Facts: on the button it was on while it is enabled (a
        Forget selects the next fact), else on the list, else on what says there are none.
        It went to the Find box when the list was read again."""
        for target in (widget, self.list, self.empty):
            if target.isEnabled() and target.isVisibleTo(self):
                target.setFocus(Qt.FocusReason.OtherFocusReason)
                return

    def changeEvent(self, event: QEvent) -> None:
        """Light or dark chosen: the list and the history drawn again in its colours (Qt
        fixes a link's colour when the HTML is set)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.show_facts(self.all_rows)

    def set_learning(self, on: bool) -> None:
        self.notice.setVisible(not on)

    def selected_row(self) -> FactRow | None:
        item = self.list.currentItem()
        wanted = item.data(0, ROW_ROLE) if item is not None else None
        return next((r for r in self.rows if r.fact.id == wanted), None)

    def selected(self) -> Fact | None:
        row = self.selected_row()
        return row.fact if row is not None else None

    def select(self, fact_id: str) -> None:
        for index in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(index)
            if item is not None and item.data(0, ROW_ROLE) == fact_id:
                self.list.setCurrentItem(item)

    def _enable(self) -> None:
        row = self.selected_row()
        current = row is not None and row.current
        for button in (self.show_button, self.edit, self.forget):
            button.setEnabled(current)
        self.forget.setVisible(row is None or row.current)
        self.restore.setVisible(row is not None and not row.current)
        self.restore.setEnabled(row is not None and not row.current)
        self.conversation.setEnabled(row is not None and bool(row.conversation_title))
        self.history.setHtml(history_html(row) if row is not None else NO_HISTORY)

    # -- the Undo bar --------------------------------------------------------------------------

    def offer_undo(self, fact: Fact) -> None:
        """A Forget was committed: say so, with an Undo that brings the fact back."""
        self._forgotten = fact
        self.undo_text.setText(f"Forgot: {fact.statement}")
        self.undo.setEnabled(True)
        self.undo_bar.show()

    def hide_undo(self) -> None:
        self._forgotten = None
        self.undo_bar.hide()

    def _undo(self) -> None:
        if self._forgotten is not None:
            self.restore_requested.emit(self._forgotten)
        self.hide_undo()

    # -- actions -------------------------------------------------------------------------------

    def _link(self, url: QUrl) -> None:
        turn = parse_turn_link(url)
        if turn is not None:
            self.turn_requested.emit(*turn)

    def _show(self) -> None:
        fact = self.selected()
        if fact is not None and fact.deleted is None:
            self.show_requested.emit(fact.path)

    def _edit(self) -> None:
        fact = self.selected()
        if fact is not None and fact.deleted is None:
            self.edit_requested.emit(fact.path)

    def _conversation(self) -> None:
        fact = self.selected()
        if fact is not None and fact.source_conversation:
            self.conversation_requested.emit(fact.source_conversation)

    def _forget(self) -> None:
        fact = self.selected()
        if fact is not None and fact.deleted is None:
            self.forget_requested.emit(fact)

    def _restore(self) -> None:
        row = self.selected_row()
        if row is not None and not row.current:
            self.restore_requested.emit(row.fact)
