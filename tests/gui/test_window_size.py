"""The window at 800 × 600 (issue 39, item 8): its smallest width was 849 px (the preview's
two long button labels beside the chat), and at its smallest the tree shrank to about 60 px,
names cut over a horizontal scroll bar."""

from __future__ import annotations

import pytest

from gam_desktop.gui.main_window import TREE_MIN_CHARS
from tests.gui.test_main_window import SAMPLES, built, idle, wait

pytestmark = pytest.mark.timeout(120)


def test_the_window_fits_800_pixels_with_a_usable_tree(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    window.chat.input.setPlainText("What is BERT?")
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None and idle(window))
    window.open_file(window.chat.turns[-1].result.sources[0])  # fields and both buttons
    assert window.preview.editor.isVisible() and window.preview.original.isVisible()
    for page in (window.chat_split, window.facts, window.history):
        window.tabs.setCurrentWidget(page)
        assert window.minimumSizeHint().width() <= 800, page
    window.resize(800, 600)
    wait(qtbot, lambda: window.width() == 800)
    tree = window.find_panel.width()
    assert tree >= window.fontMetrics().averageCharWidth() * TREE_MIN_CHARS  # was 60-80 px
    window.resize(window.minimumSizeHint())
    wait(qtbot, lambda: window.width() == window.minimumSizeHint().width())
    assert window.find_panel.width() >= window.fontMetrics().averageCharWidth() * TREE_MIN_CHARS
    assert not window.tree.horizontalScrollBar().isVisible()


def test_the_drop_hint_hides_what_is_under_it(qtbot, window, tmp_path) -> None:
    """Seen in a screenshot: the hint's words over the panes' own text could not be read
    (its background was 12% opaque). Drawn over the window, its middle is its own colour."""
    from PySide6.QtGui import QColor

    from gam_desktop.gui import theme

    built(qtbot, window, tmp_path / "memory", SAMPLES)
    window.drop_hint.setText(window.intake.drop_hint())
    window.drop_hint.show()
    window.drop_hint.raise_()
    image = window.grab().toImage()
    hint = window.drop_hint.geometry()
    spot = image.pixelColor(hint.left() + hint.width() // 3, hint.top() + 40)
    wanted = QColor(theme.current()["drop_bg"])
    assert abs(spot.red() - wanted.red()) + abs(spot.green() - wanted.green()) < 12, spot.name()


def test_a_long_step_or_status_never_widens_the_window(qtbot, window) -> None:
    """Seen in the walkthrough: during research the live line ("… searched “<the whole
    question>”: 6 excerpts") raised the window's smallest width past the screen (1216 to
    1286 px), and the window stayed that wide. Long lines are cut with "…" instead."""
    from PySide6.QtWidgets import QApplication

    from gam_desktop.engine.research.agent import ResearchStep
    from gam_desktop.gui.chat_panel import Turn

    question = "Compare how transactions and write-ahead logging handle readers " * 6
    window.resize(900, 700)
    wait(qtbot, lambda: window.width() == 900)
    chat = window.chat
    chat.turns.append(Turn(question, research=True))
    chat.set_busy(True)  # (its Stop button shown)
    QApplication.processEvents()
    smallest = window.minimumSizeHint().width()
    step = f"searched “{question}”: 6 excerpts from a_very_long_file_name_without_spaces.md"
    chat.show_research_step(ResearchStep("search", step, 1, [question], [False]))
    window.status_label.setText(f"Saved the report as research/{'x' * 300}.md")
    QApplication.processEvents()  # the layouts' requests: the window's smallest size again
    assert chat.live.isVisible() and chat.live.text() == f"… {step}"  # all of it, for readers
    assert window.minimumSizeHint().width() == smallest
    assert window.width() == 900
    assert chat.live.toolTip() == chat.live.text()  # cut on screen: the whole line on hover
    assert chat.live.width() < chat.live.fontMetrics().horizontalAdvance(chat.live.text())


def test_800_by_600_shows_the_tree_readably(qtbot, window, make_workflow, tmp_path) -> None:
    """Issue 39: the window could not be made 800 × 600 (its smallest width was 849 px),
    and at its smallest the tree shrank to about 60 px; then, at 800 px, to 156 px, each
    note's title cut after a few letters ("acme cor…"). At 800 × 600, every page of the tabs
    fits and the tree shows a note's title of 20-odd letters whole."""
    from PySide6.QtWidgets import QApplication

    from tests.engine.test_answers import built_policies

    root = built_policies(make_workflow, tmp_path).folder.root
    assert window.open_memory(root)
    wait(qtbot, lambda: idle(window))
    note = "acme/acme_corp_escalation.md"
    window.open_file(note)  # the preview's fields and both its buttons shown
    assert window.preview.editor.isVisible() and window.preview.original.isVisible()
    window.resize(800, 600)
    wait(qtbot, lambda: window.size().width() == 800 and window.size().height() == 600)
    for page in (window.chat_split, window.facts, window.history):
        window.tabs.setCurrentWidget(page)
        QApplication.processEvents()
        smallest = window.minimumSizeHint()
        assert smallest.width() <= 800 and smallest.height() <= 600, (page, smallest)
        assert window.width() == 800, page  # nothing made it wider
    tree = window.tree
    assert window.find_panel.width() >= window.fontMetrics().averageCharWidth() * TREE_MIN_CHARS
    item = tree.item_at(note)
    tree.scrollToItem(item)
    QApplication.processEvents()
    label = tree.visualItemRect(item)
    text = tree.fontMetrics().horizontalAdvance(item.text(0))
    icon = tree.iconSize().width() if not tree.iconSize().isEmpty() else 16
    assert label.left() + icon + text < tree.viewport().width(), (item.text(0), label, text)
    assert not tree.horizontalScrollBar().isVisible()
    window.tabs.setCurrentWidget(window.facts)  # none yet: what to do, under the heading
    QApplication.processEvents()
    facts = window.facts
    assert not facts.split.isVisible()  # (empty, it took half the page above the hint)
    assert facts.empty.geometry().top() < facts.height() // 3
