"""The preview as a finished app has it (issue 39, item 6): a PDF's original text without
its tabs drawn as columns, and the original text in the text's own font after a report's
heading was shown (it once came out in the heading's huge bold font)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QTextCursor

from gam_desktop.engine.store.folder import SOURCES_DIR, MemoryFolder
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.gui.app import make_app
from gam_desktop.gui.preview import PreviewPane

pytestmark = pytest.mark.timeout(60)

ORIGINAL = "Water\tintake\tis two\t litres a day.\n\tAn indented line.\n"


@pytest.fixture
def memory(tmp_path: Path) -> MemoryFolder:
    (tmp_path / SOURCES_DIR).mkdir(parents=True)
    (tmp_path / SOURCES_DIR / "abc.txt").write_text(ORIGINAL)
    front = {"title": "Water", "source": "health.pdf", "source_hash": "abc", "span": [0, 60]}
    (tmp_path / "water.md").write_text(render_memory(front, "Drink two litres a day."))
    report = "# Research: how much water?\n\n## Findings\n\nTwo litres.\n"
    (tmp_path / "report.md").write_text(render_memory({"title": "Research"}, report))
    return MemoryFolder(tmp_path)


@pytest.fixture
def pane(qtbot) -> PreviewPane:
    make_app([])
    pane = PreviewPane()
    qtbot.addWidget(pane)
    return pane


def test_a_pdfs_original_text_has_no_columns(pane, memory) -> None:
    pane.show_file(memory, "water.md")
    pane.original.click()
    lines = pane.body.toPlainText().splitlines()
    assert lines[0] == "Water intake is two litres a day."  # tabs between words: spaces
    assert lines[1] == "\tAn indented line."  # an indent is kept


def test_the_original_text_after_a_report_is_in_the_texts_font(pane, memory) -> None:
    pane.show_file(memory, "report.md")
    pane.body.moveCursor(QTextCursor.MoveOperation.Start)  # the cursor in its heading
    normal = pane.body.document().defaultFont().pointSizeF()
    pane.show_file(memory, "water.md")
    pane.original.click()
    first = pane.body.document().begin()
    assert first.text().startswith("Water intake")
    assert first.begin().fragment().charFormat().font().pointSizeF() == normal
    assert not first.begin().fragment().charFormat().font().bold()


def test_a_reports_sections_are_smaller_than_its_title(pane, memory) -> None:
    """Seen in the screenshots: a saved report's "#" sections were drawn at twice the text's
    size in the preview, larger than the note's title above them (three lines for one
    heading at 800 px); they are a step larger than the text, as in the chat."""
    pane.resize(420, 600)
    pane.show()
    pane.show_file(memory, "report.md")
    document = pane.body.document()
    document.setTextWidth(pane.body.viewport().width())
    heights = {}
    block = document.begin()
    while block.isValid():
        if block.text():
            heights[block.text()] = document.documentLayout().blockBoundingRect(block).height()
        block = block.next()
    title = pane.title.fontMetrics().lineSpacing()
    text = pane.body.fontMetrics().lineSpacing()
    for heading in ("Research: how much water?", "Findings"):
        assert text < heights[heading] < title * 1.5, (heading, heights, title)
