"""The memory tree's names at 800 × 600 and 1024 × 768: cut at their end with no way to
read them ("Overview of trans…", "Neural Recurrent …"), the tree 204 px wide at 800 px and
231 px at 1280 px. Now a name is cut in its middle, every item's tooltip starts with its
whole name, and the tree has a wider share of the window."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem, QTreeWidgetItem

from gam_desktop.gui.tree_panel import PATH_ROLE
from tests.gui.test_main_window import SAMPLES, built, wait

pytestmark = pytest.mark.timeout(300)
COUNT = re.compile(r"  \(\d[\d,]*(?: of \d[\d,]*)?\)$")  # a folder's "  (5)", "  (2 of 5)"


def items(tree) -> list[QTreeWidgetItem]:
    found, stack = [], [tree.invisibleRootItem()]
    while stack:
        parent = stack.pop()
        for i in range(parent.childCount()):
            child = parent.child(i)
            if child.data(0, PATH_ROLE) is not None:
                found.append(child)
                stack.append(child)
    return found


def names_without_tooltip(tree) -> list[str]:
    """The items whose tooltip does not start with their whole name (a folder's without its
    count)."""
    return [
        f"{item.text(0)!r}: {item.toolTip(0)!r}"
        for item in items(tree)
        if item.toolTip(0).split("\n")[0] != COUNT.sub("", item.text(0))
    ]


def test_every_item_s_tooltip_starts_with_its_whole_name(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    tree = window.tree
    tree.expandAll()
    QApplication.processEvents()
    assert len(items(tree)) > 8
    assert names_without_tooltip(tree) == []
    tldrs = [item.toolTip(0) for item in items(tree) if "\n" in item.toolTip(0)]
    assert tldrs  # a note's summary still follows its name
    tree.set_filter("transformers")  # the filter's items: the name, then the path
    wait(qtbot, lambda: tree.filtered and items(tree))
    assert names_without_tooltip(tree) == []


def test_a_name_is_cut_in_its_middle(qtbot, window) -> None:
    """What the tree's delegate is told to draw with: "Neural Con…networks", its subject and
    its end both read (and a folder's count), not "Neural Convolutio…"."""
    option = QStyleOptionViewItem()
    window.tree.initViewItemOption(option)
    assert option.textElideMode == Qt.TextElideMode.ElideMiddle
    assert window.tree.textElideMode() == Qt.TextElideMode.ElideMiddle


def test_the_tree_has_a_usable_share_of_a_small_window(qtbot, window) -> None:
    """At 800 px the tree has 38 characters (it had 34: 204 px), at 1024 px and 1280 px more,
    and the window still fits 800 px with every page of its tabs."""
    chars = window.fontMetrics().averageCharWidth()
    widths = {}
    window.show()
    for width, height in ((800, 600), (1024, 768), (1280, 800)):
        window.resize(width, height)
        wait(qtbot, lambda w=width: window.width() == w)
        QApplication.processEvents()
        widths[width] = window.find_panel.width()
    assert widths[800] >= 38 * chars, widths
    assert widths[1024] >= 38 * chars and widths[1280] >= 45 * chars, widths
    for page in (window.chat_split, window.facts, window.history):
        window.tabs.setCurrentWidget(page)
        QApplication.processEvents()
        assert window.minimumSizeHint().width() <= 800, page
