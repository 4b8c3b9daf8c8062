"""Help ▸ User guide (F1): the guide for people (resources/guide/user-guide.md, with its
pictures of the window) in a window of its own, with a find box: every match marked, Enter
goes to the next one (Shift+Enter the one before), how many there are said beside it.
Help ▸ Documentation showed the developer's README (virtual environments, CI).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QColor, QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import plural, resources_dir
from gam_desktop.gui import theme
from gam_desktop.gui.accessible import name_clear_button

GUIDE = "user-guide.md"


def guide_path() -> Path:
    """The guide beside its pictures: a source checkout, the bundle or a wheel install."""
    return resources_dir() / "guide" / GUIDE


class FindLine(QLineEdit):
    """Enter: the next match; Shift+Enter: the one before. Signals: step(forward)."""

    step = Signal(bool)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.step.emit(not event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            return
        super().keyPressEvent(event)


class UserGuide(QDialog):
    """The guide and its find box. `matches` are the places the words typed are found."""

    def __init__(self, guide: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("GAM Desktop user guide")
        self.resize(860, 720)
        self.matches: list[QTextCursor] = []
        self.find_box = FindLine()
        self.find_box.setPlaceholderText("Find in the guide")
        self.find_box.setAccessibleName("Find in the guide")
        self.find_box.setClearButtonEnabled(True)
        name_clear_button(self.find_box, "Clear the find box")
        self.find_box.textChanged.connect(self.search)
        self.find_box.step.connect(self.next_match)
        self.count = QLabel()
        self.count.setObjectName("findNote")
        self.browser = QTextBrowser()
        self.browser.setObjectName("documentation")
        self.browser.setAccessibleName("GAM Desktop user guide")
        self.browser.setOpenExternalLinks(True)
        # its pictures are found beside it (relative names in the Markdown)
        self.browser.setSearchPaths([str(guide.parent)])
        self.browser.document().setBaseUrl(QUrl.fromLocalFile(str(guide.parent) + "/"))
        self.browser.setMarkdown(guide.read_text(encoding="utf-8"))
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.close)
        top = QHBoxLayout()
        top.addWidget(self.find_box, 1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.browser, 1)
        layout.addWidget(close)
        self.find_box.setFocus()

    def search(self, text: str) -> None:
        """Mark every place `text` is found (any case) and show the first."""
        self.matches = []
        words = text.strip()
        document = self.browser.document()
        cursor = document.find(words) if words else QTextCursor()
        while words and not cursor.isNull():
            self.matches.append(cursor)
            cursor = document.find(words, cursor)
        self._mark()
        if not words:
            self.count.clear()
        elif not self.matches:
            self.count.setText("No match")
        else:
            self.count.setText(plural(len(self.matches), "match"))
            self._show(self.matches[0])

    def next_match(self, forward: bool = True) -> None:
        """The match after (or before) the one shown, round to the first (or last)."""
        if not self.matches:
            return
        at = self.browser.textCursor().selectionStart()
        if forward:
            later = [c for c in self.matches if c.selectionStart() > at]
            self._show(later[0] if later else self.matches[0])
        else:
            earlier = [c for c in self.matches if c.selectionStart() < at]
            self._show(earlier[-1] if earlier else self.matches[-1])

    def _show(self, match: QTextCursor) -> None:
        self.browser.setTextCursor(match)
        self.browser.ensureCursorVisible()

    def _mark(self) -> None:
        """Every match on the theme's highlight (the one shown is also selected)."""
        marked = QTextCharFormat()
        marked.setBackground(QColor(theme.current()["selected"]))
        selections = []
        for cursor in self.matches:
            selection = QTextEdit.ExtraSelection()
            selection.cursor, selection.format = cursor, marked  # type: ignore[misc]
            selections.append(selection)
        self.browser.setExtraSelections(selections)


def image_loads(browser: QTextBrowser, name: str) -> bool:
    """Whether the guide's picture `name` is found (for the tests and the self-check)."""
    image = browser.loadResource(QTextDocument.ResourceType.ImageResource.value, QUrl(name))
    return image is not None and not getattr(image, "isNull", lambda: False)()
