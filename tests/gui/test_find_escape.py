"""Escape in the find box (issue 39, item 13): after a hit was opened, Escape once switched
the preview to an unrelated memory. Escape clears the box, which empties the list of hits;
the list, emptied, made another hit current on its way, and that opened it in the
preview (which one depended on the hit that was current: intermittent)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.test_main_window import SAMPLES, built, idle, wait

pytestmark = pytest.mark.timeout(120)


def test_escape_never_switches_the_preview(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    window.activateWindow()
    wait(qtbot, window.isActiveWindow)
    opened: list[str] = []
    window.find_panel.opened.connect(lambda path, _original: opened.append(path))
    window.show_find()
    qtbot.keyClicks(window.find_panel.box, "attention")
    wait(qtbot, lambda: window.find_panel.hits.count() > 1 and idle(window))
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Down)  # to the tree: its first match
    shown = window.preview.path
    assert shown is not None and QApplication.focusWidget() is window.tree
    window.find_panel.box.setFocus()
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Escape)  # clears the box
    assert window.find_panel.box.text() == "" and window.preview.path == shown
    qtbot.keyClick(window.find_panel.box, Qt.Key.Key_Escape)  # leaves it for the tree
    assert window.preview.path == shown and opened == []
