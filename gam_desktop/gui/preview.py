"""The preview pane: a README or memory rendered as Markdown, its front matter as fields."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory

_FIELDS = (("tldr", "Summary"), ("source", "Source"), ("tokens", "Tokens"), ("created", "Created"))


class PreviewPane(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.folder: MemoryFolder | None = None
        self.path: str | None = None
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        for widget in (self.title, self.fields, self.problem, self.body, self.original):
            layout.addWidget(widget)
        self.clear()

    def clear(self) -> None:
        self.path, self._front = None, {}
        self.title.setText("Select a memory or a folder")
        self.fields.hide()
        self.problem.hide()
        self.original.hide()
        self.body.setMarkdown("")

    def show_message(self, title: str, text: str) -> None:
        self.clear()
        self.title.setText(title)
        self.body.setMarkdown(text)

    def show_file(self, folder: MemoryFolder, path: str) -> None:
        self.folder, self.path = folder, path
        file = folder.root / path
        if not file.is_file():
            self.clear()
            self.title.setText(f"{path} no longer exists")
            return
        parsed = parse_memory(file.read_text(encoding="utf-8", errors="replace"))
        self._front, self._body = parsed.front, parsed.body
        self.title.setText(str(parsed.front.get("title", path)).replace("_", " "))
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
        self._render_body()

    def _fill_fields(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        front = self._front
        for key, label in _FIELDS:
            if key not in front:
                continue
            value = str(front[key])
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
