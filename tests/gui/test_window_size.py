"""The window at 800 × 600 (issue 39, item 8): its smallest width was 849 px (the preview's
two long button labels beside the chat), and at its smallest the tree shrank to about 60 px,
names cut over a horizontal scroll bar."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

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


def test_the_panes_keep_the_proportions_a_drag_chose_and_their_least_widths(
    qtbot, make_window, prefs
) -> None:
    """The panes were fitted to the window's width only until a divider was dragged; from
    then on a resize kept the widths of the moment (a wider window's room all went to the
    preview and the chat) or squeezed what it could. Now the proportions the person chose
    are kept at every width and across a restart, and no pane goes under its least width
    (the tree's 34 characters, the preview's 36, the chat's own)."""
    from gam_desktop.gui import panes

    window = make_window(prefs, "settings.ini")
    split = window.split

    def resized(width: int, height: int) -> list[int]:
        window.resize(width, height)
        wait(qtbot, lambda: window.width() == width)
        QApplication.processEvents()
        return split.sizes()

    def room() -> int:
        return split.width() - 2 * split.handleWidth()

    def usable(sizes: list[int]) -> None:
        least = [panes.least_width(split.widget(i)) for i in range(3)]
        assert all(size >= low for size, low in zip(sizes, least, strict=True)), (sizes, least)
        assert sum(sizes) <= room() and sizes[0] >= 34 * window.fontMetrics().averageCharWidth()

    resized(1280, 800)
    split.moveSplitter(520, 1)  # the tree made wide, as a drag does
    chosen = split.sizes()
    assert chosen[0] >= 500
    shares = [size / sum(chosen) for size in chosen]
    wide = resized(1600, 900)
    for size, share in zip(wide, shares, strict=True):  # in proportion (was 520 px still)
        assert abs(size - share * room()) <= 3, (wide, shares)
    usable(resized(800, 600))
    assert resized(1280, 800) == chosen  # back as chosen
    split.moveSplitter(0, 1)  # the tree dragged to nothing: it keeps its least width
    usable(split.sizes())
    split.moveSplitter(split.width(), 2)  # the chat dragged to nothing: the same
    usable(split.sizes())
    usable(resized(800, 600))
    split.moveSplitter(420, 2)  # at 800 px: the preview wider, the chat at its least
    chosen = split.sizes()
    window.close()  # a restart, in a wider window: the same proportions
    again = make_window(prefs, "settings.ini")
    wait(qtbot, lambda: again.isVisible() and again.split.width() > 0)
    QApplication.processEvents()
    again_room = again.split.width() - 2 * again.split.handleWidth()
    for size, low in zip(again.split.sizes(), chosen, strict=True):
        assert abs(size - low / sum(chosen) * again_room) <= 3, (again.split.sizes(), chosen)


def test_the_room_is_shared_in_proportion_and_none_under_its_least() -> None:
    from gam_desktop.gui.panes import shared_out, sizes_in_state

    assert shared_out(1100, (0.2, 0.3, 0.5), (100, 100, 100)) == [220, 330, 550]
    assert shared_out(600, (0.1, 0.3, 0.6), (200, 100, 100)) == [200, 133, 267]
    assert shared_out(300, (0.2, 0.3, 0.5), (200, 200, 200)) == [200, 200, 200]  # too little
    assert sum(shared_out(1001, (1 / 3, 1 / 3, 1 / 3), (0, 0, 0))) == 1001
    saved = bytes.fromhex("000000ff0000000100000003000000640000012c0000025801ffffffff010000000100")
    assert sizes_in_state(saved) == [100, 300, 600]  # a QSplitter.saveState()
    assert sizes_in_state(b"junk") is None and sizes_in_state(None) is None
