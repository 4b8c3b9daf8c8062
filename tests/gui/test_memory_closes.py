"""The window closes everything its memory opened (issue 38's blocker): on Windows the
search index left open by the window kept the self-test's temporary folder from being
deleted. Linux deletes open files, so the test looks for them: this process's descriptors
(/proc/self/fd) that lead into the memory folder, once the window has closed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.engine.test_memory_closes import open_under
from tests.gui.test_main_window import SAMPLES, built, idle, wait

pytestmark = pytest.mark.linux_only("reads /proc/self/fd")


def test_closing_the_window_closes_the_memory(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    qtbot.keyClicks(window.chat.input, "What is BERT?")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
    wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    wait(qtbot, lambda: idle(window))
    watcher = window.session.watcher
    assert watcher is not None and watcher.running
    assert open_under(memory.resolve())  # the search index, open while the memory is
    window.close()
    assert open_under(memory.resolve()) == []
    assert not watcher.running


def test_opening_another_memory_closes_the_first(qtbot, window, tmp_path) -> None:
    first = tmp_path / "first"
    built(qtbot, window, first, SAMPLES[:1])
    assert window.session.workflow.search("BERT") is not None
    assert open_under(first.resolve())
    assert window.open_memory(tmp_path / "second")
    assert open_under(first.resolve()) == []


def test_a_memory_closed_and_opened_again_is_locked_again(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    window.session.close()
    assert window.open_memory(memory)
    lock = window.session.app_lock.lock
    assert lock is not None and lock.is_locked  # not the released lock of before
