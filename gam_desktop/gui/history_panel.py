"""The history panel: operations newest first, the files each changed, a diff, rollback.

Every git call (a page of operations, an operation's changes, a file's diff) runs on a
worker thread through the panel's own TaskRunner; results that arrive after the person
moved on (another operation selected, the list reloaded) are dropped. When the memory
changed, the list reloads at once if the panel is on screen, else when it is next shown.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QSignalBlocker, Qt, Signal, SignalInstance
from PySide6.QtGui import QColor, QResizeEvent, QShowEvent, QTextOption
from PySide6.QtWidgets import (
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

from gam_desktop.engine.api import (
    UNDID_ROLLBACK,
    Changes,
    FileChange,
    History,
    Operation,
    open_history,
)
from gam_desktop.gui import local_time, theme, words
from gam_desktop.gui.labels import never_widens
from gam_desktop.gui.workers import TaskRunner

PAGE = 50
MODEL_USE = "Model use"  # the column of how much the model read and wrote
MODEL_USE_TIP = "How much text the model read and wrote for the operation"
WHAT_MIN_CHARS = 24  # the What column, before the model use column gives way to it
ROLLBACK, FORGET = "rollback", "forget"
RESTORED_FACT = "Restored: "  # a forgotten fact brought back (Workflow.restore_fact)
_KIND_LABELS = {
    "build": "Build",
    "add": "Add",
    "reorganize": "Reorganize",
    "manual-edit": "Manual edit",
    "rollback": "Rollback",
    "restore": "Restore",
    "recover": "Recovery",
    "snapshot": "Snapshot",
    "initialize": "New memory",
    "chat": "Chat",
    "learn": "Learned",
    "forget": "Forget",
    "settings": "Settings",
    "research": "Research",
    "summarize": "Summarize again",
}


@dataclass(frozen=True)
class HistorySource:
    """Where a memory's history is read. Each load opens a History of its own on its worker
    thread: a GitPython Repo is not thread-safe, and the window's repository is used by the
    folder watcher's thread, so sharing it would need a lock around every git call of every
    operation. Opening costs a few milliseconds off the GUI thread, and git itself lets
    readers run beside a commit."""

    root: Path
    git_path: str | None = None

    def open(self) -> History:
        return open_history(self.root, self.git_path)


def kind_label(operation: Operation) -> str:
    """The History's Kind column: a fact brought back is a Restore (its commit is of the
    Forget kind, as both are a fact's own operations), not a Forget."""
    if operation.kind == FORGET and operation.summary.startswith(RESTORED_FACT):
        return "Restore"
    return _KIND_LABELS.get(operation.kind, operation.kind)


def rollback_label(operation: Operation) -> str:
    """What the Roll back button does to `operation`: a rollback is undone; an undone
    rollback ("Undid rollback: …") is rolled back again."""
    if operation.kind == ROLLBACK and operation.summary.startswith(UNDID_ROLLBACK):
        return "Roll back again…"
    return "Undo this rollback…" if operation.kind == ROLLBACK else "Roll back…"


def _row(operation: Operation) -> QTreeWidgetItem:
    # how much the model read and wrote, in words (the tokens, exact, in the tooltip)
    size = words.approximate_words(operation.tokens, short=True) if operation.tokens else ""
    when = local_time.when(operation.time)
    summary = words.counted_notes(operation.summary)  # "(5 notes)", not "(5 memories)"
    item = QTreeWidgetItem([when, kind_label(operation), summary, size])
    item.setData(0, Qt.ItemDataRole.UserRole, operation)
    item.setToolTip(2, summary)
    if operation.tokens:
        said = words.approximate_words(operation.tokens)
        use = f"The model read and wrote {said}: {operation.tokens:,} tokens"
        item.setToolTip(3, use)
        item.setToolTip(2, f"{summary}\n{use}")  # (the model use column hidden when narrow)
    return item


def _sorted(changes: list[FileChange]) -> list[FileChange]:
    """The memories first; the app's own files (.gam/, .gitignore) after."""
    return sorted(changes, key=lambda c: (c.path.startswith("."), c.path))


@dataclass(frozen=True)
class FileDiff:
    """One file's change in one operation: git's patch, and for a Markdown file its text
    before and after (its front matter said in words, not shown as YAML)."""

    patch: str
    before: str | None = None
    after: str | None = None
    markdown: bool = False


def load_diff(history: History, sha: str, path: str) -> FileDiff:
    patch = history.diff(sha, path)
    if not path.endswith(".md"):
        return FileDiff(patch)
    return FileDiff(patch, *history.versions(sha, path), markdown=True)


def load_changes(source: HistorySource, sha: str) -> tuple[list[FileChange], FileDiff]:
    """An operation's changes and the diff of the first one (shown at once): one worker."""
    history = source.open()
    changes = _sorted(history.changes(sha))
    return changes, load_diff(history, sha, changes[0].path) if changes else FileDiff("")


def change_label(change: FileChange) -> str:
    if change.status == "moved":
        return f"{change.old_path}  →  {change.path}"
    return change.path


class HistoryPanel(QWidget):
    """Signals: rollback_requested(operation), restore_requested(operation)."""

    rollback_requested = Signal(object)
    restore_requested = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.source: HistorySource | None = None
        self.operations: list[Operation] = []
        self.tasks = TaskRunner(self)  # owns the loads; their results come back here
        self._generation = 0  # bumped on every reload: older pages are dropped
        self._stale = False  # the memory changed while the panel was not on screen
        self._patches: dict[tuple[str, str], FileDiff] = {}  # the selected operation's diffs
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        never_widens(self.notice)  # an error naming a long path
        self.notice.setObjectName("warning")
        self.list = QTreeWidget()
        self.list.setAccessibleName("Operations")
        self.list.setHeaderLabels(["When", "Kind", "What", MODEL_USE])
        self.list.headerItem().setToolTip(3, MODEL_USE_TIP)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.currentItemChanged.connect(self._selected)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.more = QPushButton("Show older operations")
        self.more.clicked.connect(self._load_more)
        self.files = QTreeWidget()
        self.files.setAccessibleName("Files the operation changed")
        self.files.setHeaderLabels(["Change", "File"])
        self.files.setRootIsDecorated(False)
        self.files.currentItemChanged.connect(self._file_selected)
        self.diff = QTextBrowser()
        self.diff.setObjectName("diff")
        self.diff.setAccessibleName("Changes to the file")
        # Long lines wrap (a path or a token without spaces anywhere) instead of scrolling
        # sideways in the narrow column the panel usually has.
        self.diff.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self._shown_patch: FileDiff | None = None  # drawn again in new colours on a theme change
        self._refocus: QWidget | None = None  # the button the keyboard was on before a reload
        self._wanted: str | None = None  # an operation to select once the list has it
        self.rollback = QPushButton("Roll back…")
        self.rollback.setAccessibleDescription("Undo this operation (itself recorded, undoable)")
        self.rollback.clicked.connect(lambda: self._request(self.rollback_requested))
        self.restore = QPushButton("Restore to before this…")
        self.restore.setAccessibleDescription("Bring the memory back to how it was before it")
        self.restore.clicked.connect(lambda: self._request(self.restore_requested))
        self.loading_note = QLabel("Loading…")  # while the list is read again
        self.loading_note.setObjectName("conversationCaption")  # (muted)
        self.loading_note.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.loading_note)
        buttons.addStretch(1)
        buttons.addWidget(self.restore)
        buttons.addWidget(self.rollback)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.list)
        top_layout.addWidget(self.more)
        split = QSplitter(Qt.Orientation.Vertical)
        for widget in (top, self.files, self.diff):
            split.addWidget(widget)
        split.setSizes([260, 140, 220])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.notice)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self.set_history(None, None)

    def set_history(
        self, source: HistorySource | None, message: str | None, when_shown: bool = False
    ) -> None:
        """Show `source`'s history (none when it is None, with `message` saying why); with
        `when_shown`, load it only once the panel is on screen."""
        if source != self.source:  # another memory's: its rows are not this one's
            self._clear()
        self.source = source
        self.notice.setText(message or "")
        self.notice.setVisible(bool(message))
        if when_shown:
            self._refresh_when_shown()
        else:
            self.refresh()

    def memory_changed(self, changes: Changes) -> None:
        if not changes.empty:
            self._refresh_when_shown()

    def _refresh_when_shown(self) -> None:
        """No needless loads after every operation: a hidden panel reloads when shown."""
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)  # (the list is laid out to the new width first)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """What each operation did is the column that says something: where the list is
        narrow (the window at 800 px) the model use gives way to it (each row's tooltip
        says it): it had ten letters there, "Chat: I a…"."""
        wanted = WHAT_MIN_CHARS * self.list.fontMetrics().averageCharWidth()
        header = self.list.header()
        taken = header.sectionSize(0) + header.sectionSize(1)
        model_use = max(self.list.sizeHintForColumn(3), header.sectionSizeHint(3))
        narrow = self.list.viewport().width() - taken - model_use < wanted
        if narrow != self.list.isColumnHidden(3):
            self.list.setColumnHidden(3, narrow)

    def loading(self) -> bool:
        return bool(self.tasks.running())

    def shutdown(self) -> None:
        """Wait for the loads (a window closing must not destroy a running thread)."""
        self.tasks.wait_all()

    def refresh(self) -> None:
        """Read the list again. The rows shown stay (and can be used) until the new ones
        are in, "Loading…" beside the buttons: the list went blank for a second or two after
        every change, its buttons disabled, with no sign of why."""
        self._stale = False
        self._generation += 1
        self._load(0)

    def _load_more(self) -> None:
        self._load(len(self.operations))

    def _load(self, offset: int) -> None:
        source, generation = self.source, self._generation
        if source is None:
            self._clear()
            self._selected(None, None)
            self.more.hide()
            return
        self.more.setEnabled(False)
        self.loading_note.show()
        self.tasks.start(
            "history-page",
            lambda w, c: source.open().operations(offset, PAGE),
            on_success=lambda page: self._show_page(generation, offset, page),
            on_failure=self._failed,
        )

    def _clear(self) -> None:
        self.operations = []
        self._patches = {}
        self.list.clear()

    def _show_page(self, generation: int, offset: int, page: list[Operation]) -> None:
        if generation != self._generation:
            return  # the list was reloaded meanwhile
        self.loading_note.hide()
        if offset == 0:
            self._replace(page)
        else:
            self.operations += page
            for operation in page:
                self.list.addTopLevelItem(_row(operation))
        self.more.setVisible(len(page) == PAGE)
        self.more.setEnabled(True)
        for column in (0, 1, 3):
            self.list.resizeColumnToContents(column)
        self._fit_columns()
        first = self.list.topLevelItem(0)  # None when the list is empty
        if self.list.currentItem() is None and first is not None:
            self.list.setCurrentItem(first)
        self._select_wanted()

    def _replace(self, page: list[Operation]) -> None:
        """The rows read again: the operation selected stays selected (its files and diff
        as they were), unless it was the newest, when the new newest is (what was just
        done); gone, nothing is, and the first row is chosen."""
        item = self.list.currentItem()
        chosen = self.current()
        newest = item is not None and self.list.indexOfTopLevelItem(item) == 0
        if newest and chosen is not None and page and page[0].sha == chosen.sha:
            newest = False  # still the newest: nothing new to show instead
        self._keep_keyboard()
        with QSignalBlocker(self.list):
            self.list.clear()
            self.operations = list(page)
            for operation in page:
                self.list.addTopLevelItem(_row(operation))
            kept = None if chosen is None or newest else self._item(chosen.sha)
            if kept is not None:
                self.list.setCurrentItem(kept)
        if kept is not None:
            self._enable(kept, self.current())
            self._give_keyboard_back()
        else:
            self._patches = {}
            self._selected(self.list.currentItem(), None)

    def _item(self, sha: str) -> QTreeWidgetItem | None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole).sha == sha:
                return item
        return None

    def _keep_keyboard(self) -> None:
        """A reload disables the buttons until an operation is selected again: the keyboard
        on one of them went to the next control that could take it (the Find box, after a
        rollback). It waits in the list meanwhile and goes back once the button is enabled."""
        focus = self.focusWidget()
        if focus in (self.rollback, self.restore, self.more) and focus.hasFocus():
            self._refocus = focus
            self.list.setFocus(Qt.FocusReason.OtherFocusReason)

    def _give_keyboard_back(self) -> None:
        button, self._refocus = self._refocus, None
        if button is None or not (button.isEnabled() and button.isVisible()):
            return
        if self.list.hasFocus():  # (still in the panel: the person stayed)
            button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _failed(self, error: Exception) -> None:
        self.loading_note.hide()
        self.more.setEnabled(True)
        self.notice.setText(f"The history could not be read: {error}")
        self.notice.show()

    def current(self) -> Operation | None:
        item = self.list.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item else None

    def select(self, sha: str) -> None:
        item = self._item(sha)
        if item is not None:
            self.list.setCurrentItem(item)

    def show_operation(self, sha: str) -> None:
        """Select the operation `sha`, now or once the list being read has it (a removed
        file's "show it in History")."""
        self._wanted = sha
        self._select_wanted()

    def _select_wanted(self) -> None:
        item = None if self._wanted is None else self._item(self._wanted)
        if item is not None:
            self._wanted = None
            self.list.setCurrentItem(item)
            self.list.scrollToItem(item)

    def _enable(self, item: QTreeWidgetItem | None, operation: Operation | None) -> None:
        self.rollback.setEnabled(operation is not None)
        self.restore.setEnabled(
            operation is not None
            and item is not None
            and self.list.indexOfTopLevelItem(item) < len(self.operations) - 1
        )
        if operation is not None:
            self.rollback.setText(rollback_label(operation))

    def _selected(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        self.files.clear()
        self.diff.clear()
        operation = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        self._enable(item, operation)
        if operation is None or self.source is None:
            return
        self._give_keyboard_back()
        sha, source = operation.sha, self.source
        self.tasks.start(
            "history-changes",
            lambda w, c: load_changes(source, sha),
            on_success=lambda loaded: self._show_changes(sha, *loaded),
            on_failure=self._failed,
        )

    def _show_changes(self, sha: str, changes: list[FileChange], first_patch: FileDiff) -> None:
        operation = self.current()
        if operation is None or operation.sha != sha:
            return  # another operation was selected meanwhile
        self._patches = {(sha, changes[0].path): first_patch} if changes else {}
        for change in changes:
            row = QTreeWidgetItem([change.status, change_label(change)])
            row.setData(0, Qt.ItemDataRole.UserRole, change.path)
            if change.path.startswith("."):  # the app's own files, greyed
                for column in (0, 1):
                    row.setForeground(column, QColor("#8a8f98"))
            self.files.addTopLevelItem(row)
        self.files.resizeColumnToContents(0)
        first = self.files.topLevelItem(0)  # None when the operation changed no file
        if first is not None:
            self.files.setCurrentItem(first)

    def _current_file(self) -> str | None:
        item = self.files.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item else None

    def _file_selected(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        operation = self.current()
        self.diff.clear()
        if item is None or operation is None:
            return
        key = (operation.sha, item.data(0, Qt.ItemDataRole.UserRole))
        if key in self._patches:
            self._show_patch(self._patches[key])
            return
        source = self.source
        if source is None:
            return  # no history shown (the list is empty then: nothing is selected)
        self.tasks.start(
            "history-diff",
            lambda w, c: load_diff(source.open(), *key),
            on_success=lambda patch: self._show_diff(key, patch),
            on_failure=self._failed,
        )

    def _show_diff(self, key: tuple[str, str], patch: FileDiff) -> None:
        operation = self.current()
        if operation is None:
            return
        self._patches[key] = patch
        if (operation.sha, self._current_file()) == key:
            self._show_patch(patch)

    def _show_patch(self, patch: FileDiff) -> None:
        self._shown_patch = patch
        self.diff.setHtml(diff_html(patch, theme.current()))

    def changeEvent(self, event: QEvent) -> None:
        """Light or dark chosen: the diff's colours follow."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._shown_patch is not None:
            self._show_patch(self._shown_patch)

    def _request(self, signal: SignalInstance) -> None:
        operation = self.current()
        if operation is not None:
            signal.emit(operation)


def diff_html(change: FileDiff, colours: dict[str, str]) -> str:
    """A change as a person reads it (`words.readable_diff`: the lines added and removed,
    no git headers, a note's front matter said in words) in the theme's `colours`: each
    line a block that wraps (added and removed lines on a tinted background and marked +
    and −, so a wrapped line reads as one, and not by colour alone), at most 4,000 lines."""
    kinds = {
        words.ADDED: ("+ ", colours["diff_add"], colours["diff_add_bg"]),
        words.REMOVED: ("− ", colours["diff_del"], colours["diff_del_bg"]),
        words.KEPT: ("  ", colours["text"], ""),
        words.GAP: ("", colours["diff_hunk"], ""),
        words.NOTE: ("", colours["muted"], ""),
    }
    blocks = []
    shown = words.readable_diff(change.patch, change.markdown, change.before, change.after)
    for kind, text in shown[:4000]:
        sign, colour, background = kinds[kind]
        fill = f"background-color:{background};" if background else ""
        line = html.escape(sign + text) if text.strip() or sign.strip() else "&nbsp;"
        style = "font-style:italic;" if kind == words.NOTE else ""
        blocks.append(f'<p style="margin:0;color:{colour};{fill}{style}">{line}</p>')
    if not blocks:
        blocks.append(f'<p style="color:{colours["muted"]}">No change to its text.</p>')
    body = "".join(blocks)
    return f'<div style="white-space:pre-wrap">{body}</div>'
