"""The preview in a short window (seen in the screenshots at 800 × 600): a note written
without the LLM, with its summary, fields and the note on why, did not fit above its text;
the summary was cut in the middle of a line, with no way to read the rest. What is above
the text now scrolls when it does not fit, every line of it whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.gui.app import make_app
from gam_desktop.gui.preview import PreviewPane

pytestmark = pytest.mark.timeout(60)

SUMMARY = (
    "Convolutional neural networks (CNNs) share weights across positions of an image, "
    "which makes them efficient for vision; pooling layers make them robust to small shifts."
)
REASON = (
    "the LLM server at http://127.0.0.1:42177/v1 kept failing after 2 attempts: "
    "InternalServerError (HTTP 500)"
)


@pytest.fixture
def pane(qtbot, tmp_path: Path) -> PreviewPane:
    make_app([])
    front = {
        "title": "neural_convolutional_networks",
        "tldr": SUMMARY,
        "source": "neural_networks.md",
        "tokens": 60,
        "created": "2026-11-29T04:45:00+00:00",
        "fallback": True,
        "fallback_reason": REASON,
    }
    text = "Neural networks: AlexNet won the ImageNet challenge in 2012. " * 3
    (tmp_path / "cnn.md").write_text(render_memory(front, text))
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_file(MemoryFolder(tmp_path), "cnn.md")
    return pane


def laid_out(qtbot, pane: PreviewPane, width: int, height: int) -> None:
    pane.resize(width, height)
    qtbot.waitUntil(lambda: pane.size().toTuple() == (width, height))
    for _ in range(10):  # the layout's requests, the scroll area's after them
        QApplication.processEvents()


def cut(labels: list[QLabel]) -> list[str]:
    """The labels drawn shorter than their wrapped lines need."""
    return [
        label.text()[:40]
        for label in labels
        if label.isVisible() and label.height() < label.heightForWidth(label.width())
    ]


def header_labels(pane: PreviewPane) -> list[QLabel]:
    return [*pane.fields.findChildren(QLabel), pane.without_llm]


@pytest.mark.parametrize("size", [(235, 535), (211, 480)])  # the preview at 800 × 600
def test_in_a_short_pane_nothing_above_the_text_is_cut(qtbot, pane, size) -> None:
    laid_out(qtbot, pane, *size)
    assert pane.fields.isVisible() and pane.without_llm.isVisible()
    assert cut(header_labels(pane)) == []
    inner: QWidget = pane.header.widget()
    hidden = inner.height() - pane.header.viewport().height()
    assert hidden > 0  # (it does not fit: the case of the screenshot)
    bar = pane.header.verticalScrollBar()
    assert bar.isVisible() and bar.maximum() >= hidden  # the rest is scrolled to
    lines = pane.body.fontMetrics().lineSpacing()
    assert pane.body.viewport().height() >= 3 * lines  # the note's text keeps some room


def test_the_link_below_is_scrolled_to_when_it_has_the_keyboard(qtbot, pane) -> None:
    """Summarize again, under the summary in a short pane: Tab reaches it, and it shows."""
    laid_out(qtbot, pane, 235, 440)
    label = pane.without_llm
    pane.activateWindow()
    pane.body.setFocus()  # the keyboard in the note's text, the top of the fields shown
    pane.header.verticalScrollBar().setValue(0)
    viewport = pane.header.viewport()
    bottom = label.mapTo(viewport, label.rect().bottomLeft()).y()
    assert bottom > viewport.height()  # below what is shown
    label.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: label.hasFocus())
    bottom = label.mapTo(viewport, label.rect().bottomLeft()).y()
    assert bottom <= viewport.height()


def test_with_room_everything_is_shown_and_the_text_has_the_rest(qtbot, pane) -> None:
    laid_out(qtbot, pane, 420, 760)
    assert cut(header_labels(pane)) == []
    assert not pane.header.verticalScrollBar().isVisible()
    inner = pane.header.widget()
    slack = pane.header.height() - inner.heightForWidth(pane.header.width())
    assert 0 <= slack <= pane.fontMetrics().lineSpacing() * 2  # no more than it needs
    assert pane.body.height() > pane.header.height()


def test_a_readme_shows_no_empty_space_above_its_text(qtbot, pane, tmp_path) -> None:
    (tmp_path / "README.md").write_text("# Overview\n\nWhat is here.\n")
    pane.show_file(MemoryFolder(tmp_path), "README.md")
    laid_out(qtbot, pane, 420, 760)
    assert not pane.header.isVisible()
    assert pane.body.geometry().top() - pane.title.geometry().bottom() < 20
