"""The preview pane: a README or memory rendered as Markdown, its front matter as fields.
It follows what the memory changed: the file shown is reloaded when it changed, followed
when it moved, and cleared when it went; the empty memory's advice gives way to the
memory's overview once the first build is there. Any file shown can be opened in the
person's own editor (the watcher records what they change)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import README, parse_memory, parse_time

_FIELDS = (
    ("tldr", "Summary"),
    ("subject", "About"),  # a fact's
    ("source", "Source"),
    ("tokens", "Tokens"),
    ("turns", "Turns"),  # a conversation's
    ("created", "Created"),
    ("updated", "Updated"),
)
EMPTY_TITLE = "This memory is empty"
EMPTY_TEXT = (
    "Drag PDF, TXT or Markdown files (or folders of them) onto this window, or use File ▸ "
    "Add documents. You will see an estimate before anything is sent to the LLM."
)


class PreviewPane(QWidget):
    """Signals: edit_requested(path)."""

    edit_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.folder: MemoryFolder | None = None
        self.path: str | None = None
        self._empty = False  # showing the empty memory's advice
        self._front: dict = {}
        self.title = QLabel("Select a memory or a folder")
        self.title.setObjectName("previewTitle")
        self.title.setWordWrap(True)
        self.fields = QFrame()
        self.fields.setObjectName("frontMatter")
        self.form = QFormLayout(self.fields)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.problem = QLabel()
        self.problem.setObjectName("warning")
        self.problem.setWordWrap(True)
        self.body = QTextBrowser()
        self.body.setOpenExternalLinks(True)
        self.original = QPushButton("Show the original text")
        self.original.setCheckable(True)
        self.original.toggled.connect(self._render_body)
        self.editor = QPushButton("Edit in your editor…")
        self.editor.setToolTip("Open this file in your own editor; the change is recorded")
        self.editor.clicked.connect(lambda: self.path and self.edit_requested.emit(self.path))
        buttons = QHBoxLayout()
        buttons.addWidget(self.original)
        buttons.addStretch(1)
        buttons.addWidget(self.editor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        for widget in (self.title, self.fields, self.problem, self.body):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.clear()

    def clear(self) -> None:
        self.path, self._front, self._empty = None, {}, False
        self.title.setText("Select a memory or a folder")
        self.fields.hide()
        self.problem.hide()
        self.original.hide()
        self.editor.hide()
        self.body.setMarkdown("")

    def show_message(self, title: str, text: str) -> None:
        self.clear()
        self.title.setText(title)
        self.body.setMarkdown(text)

    def show_memory(self, folder: MemoryFolder, empty: bool) -> None:
        """A memory was opened: nothing selected yet, or how to start when it is `empty`."""
        self.folder = folder
        self.clear()
        if empty:
            self.show_message(EMPTY_TITLE, EMPTY_TEXT)
            self._empty = True

    def memory_changed(self, changes: Changes) -> None:
        """Reload the file shown if it changed, follow it if it moved, say it is gone if it
        was removed; after the first build, show the memory's overview."""
        folder = self.folder
        if folder is None:
            return
        if self._empty:
            if (folder.root / README).is_file():
                self.show_file(folder, README)
            return
        if self.path is None or not changes.touches(self.path):
            return
        original = self.original.isChecked()
        self.show_file(folder, changes.moved_to(self.path) or self.path)
        if original and not self.original.isHidden():
            self.original.setChecked(True)  # the same file: as it was being read

    def show_file(self, folder: MemoryFolder, path: str) -> None:
        self.folder, self.path, self._empty = folder, path, False
        file = folder.root / path
        if not file.is_file():
            self.clear()
            self.title.setText(f"{path} no longer exists")
            return
        parsed = parse_memory(file.read_text(encoding="utf-8", errors="replace"))
        self._front, self._body = parsed.front, parsed.body
        front = parsed.front
        title = front.get("title") or front.get("statement") or path  # a fact has a statement
        self.title.setText(str(title).replace("_", " "))
        self._fill_fields()
        self.problem.setVisible(
            bool(parsed.problem)
            and file.read_text(encoding="utf-8", errors="replace").startswith("---")
        )
        self.problem.setText(
            f"⚠ The front matter of this file is broken: {parsed.problem}. "
            "It is shown and searched as it is; fix it in any editor."
        )
        self.original.setChecked(False)
        self.original.setVisible(folder.original_text(parsed.front) is not None)
        self.editor.show()
        self._render_body()

    def _fill_fields(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        front = self._front
        for key, label in _FIELDS:
            if key not in front:
                continue
            value = str(front[key])
            moment = parse_time(front[key]) if key in ("created", "updated") else None
            if moment is not None:
                value = f"{moment.astimezone():%d %b %Y, %H:%M}"
            if key == "source" and front.get("pages"):
                first, last = front["pages"]
                value += f" (page {first})" if first == last else f" (pages {first}-{last})"
            text = QLabel(html.escape(value))
            text.setWordWrap(True)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(f"{label}:", text)
        self.fields.setVisible(self.form.rowCount() > 0)

    def _render_body(self) -> None:
        if self.original.isChecked() and self.folder is not None:
            original = self.folder.original_text(self._front) or ""
            self.body.setPlainText(original)
            self.original.setText("Show the memory")
        else:
            self.body.setMarkdown(getattr(self, "_body", ""))
            self.original.setText("Show the original text")
