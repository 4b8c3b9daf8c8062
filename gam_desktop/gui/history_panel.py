"""The history panel: operations newest first, the files each changed, a diff, rollback."""

from __future__ import annotations

import html
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
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

from gam_desktop.engine.history import FileChange, History, Operation

PAGE = 50
_KIND_LABELS = {
    "build": "Build",
    "add": "Add",
    "reorganize": "Reorganize",
    "manual-edit": "Manual edit",
    "rollback": "Rollback",
    "restore": "Restore",
    "recover": "Recovery",
    "snapshot": "Snapshot",
}


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
        self.history: History | None = None
        self.operations: list[Operation] = []
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setObjectName("warning")
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["When", "Kind", "What", "Tokens"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.currentItemChanged.connect(self._selected)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.more = QPushButton("Show older operations")
        self.more.clicked.connect(self._load_more)
        self.files = QTreeWidget()
        self.files.setHeaderLabels(["Change", "File"])
        self.files.setRootIsDecorated(False)
        self.files.currentItemChanged.connect(self._file_selected)
        self.diff = QTextBrowser()
        self.diff.setObjectName("diff")
        self.rollback = QPushButton("Roll back…")
        self.rollback.clicked.connect(lambda: self._request(self.rollback_requested))
        self.restore = QPushButton("Restore to before this…")
        self.restore.clicked.connect(lambda: self._request(self.restore_requested))
        buttons = QHBoxLayout()
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

    def set_history(self, history: History | None, message: str | None) -> None:
        self.history = history
        self.notice.setText(message or "")
        self.notice.setVisible(bool(message))
        self.refresh()

    def refresh(self) -> None:
        self.operations = []
        self.list.clear()
        self._load_more()

    def _load_more(self) -> None:
        if self.history is None:
            self._selected(None, None)
            self.more.hide()
            return
        page = self.history.operations(len(self.operations), PAGE)
        self.operations += page
        for operation in page:
            when = datetime.fromtimestamp(operation.time).strftime("%Y-%m-%d %H:%M")
            tokens = f"{operation.tokens:,}" if operation.tokens else ""
            item = QTreeWidgetItem(
                [when, _KIND_LABELS.get(operation.kind, operation.kind), operation.summary, tokens]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, operation)
            item.setToolTip(2, operation.summary)
            self.list.addTopLevelItem(item)
        self.more.setVisible(len(page) == PAGE)
        for column in (0, 1, 3):
            self.list.resizeColumnToContents(column)
        if self.list.currentItem() is None and self.list.topLevelItemCount():
            self.list.setCurrentItem(self.list.topLevelItem(0))

    def current(self) -> Operation | None:
        item = self.list.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item else None

    def select(self, sha: str) -> None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole).sha == sha:
                self.list.setCurrentItem(item)

    def _selected(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        self.files.clear()
        self.diff.clear()
        operation = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        self.rollback.setEnabled(operation is not None)
        self.restore.setEnabled(
            operation is not None
            and item is not None
            and self.list.indexOfTopLevelItem(item) < len(self.operations) - 1
        )
        if operation is None:
            return
        self.rollback.setText(
            "Undo this rollback…" if operation.kind == "rollback" else "Roll back…"
        )
        # The memories first; the app's own files (.gam/, .gitignore) after, greyed.
        changes = sorted(
            self.history.changes(operation.sha), key=lambda c: (c.path.startswith("."), c.path)
        )
        for change in changes:
            row = QTreeWidgetItem([change.status, change_label(change)])
            row.setData(0, Qt.ItemDataRole.UserRole, change.path)
            if change.path.startswith("."):
                for column in (0, 1):
                    row.setForeground(column, QColor("#8a8f98"))
            self.files.addTopLevelItem(row)
        self.files.resizeColumnToContents(0)
        if self.files.topLevelItemCount():
            self.files.setCurrentItem(self.files.topLevelItem(0))

    def _file_selected(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        operation = self.current()
        if item is None or operation is None:
            self.diff.clear()
            return
        patch = self.history.diff(operation.sha, item.data(0, Qt.ItemDataRole.UserRole))
        self.diff.setHtml(diff_html(patch))

    def _request(self, signal: Signal) -> None:
        operation = self.current()
        if operation is not None:
            signal.emit(operation)


def diff_html(patch: str) -> str:
    colours = {"+": "#1b7f3a", "-": "#b3261e", "@": "#6b4fbb"}
    lines = []
    for line in patch.splitlines()[:4000]:
        colour = (
            "#777"
            if line.startswith(("diff ", "index ", "+++", "---"))
            else colours.get(line[:1], "#222")
        )
        lines.append(f'<span style="color:{colour}">{html.escape(line) or "&nbsp;"}</span>')
    body = "<br>".join(lines)
    return f'<div style="font-family:monospace;white-space:pre">{body}</div>'
