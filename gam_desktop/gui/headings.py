"""Markdown headings drawn a little larger than the text around them, in bold: Qt draws a
"#" at twice the text's size (xx-large), which filled the chat's narrow column, and in the
preview drew a report's sections larger than the note's own title above them."""

from __future__ import annotations

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument, QTextFormat


def tame_headings(document: QTextDocument) -> None:
    """Levels 1 and 2 one step larger than the text ("large"), the others its size."""
    block = document.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            cursor = QTextCursor(document)
            cursor.setPosition(block.position())
            end = block.position() + block.length() - 1
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            size = QTextCharFormat()
            size.setProperty(QTextFormat.Property.FontSizeAdjustment, 1 if level <= 2 else 0)
            cursor.mergeCharFormat(size)
        block = block.next()
