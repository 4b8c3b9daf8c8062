"""Memory ▸ Summarize again (issue 36): an add whose memorize calls kept failing says how to
summarize its notes again, the Memory menu offers "Summarize again (4 notes)", and choosing it
runs one operation with its progress and Cancel in the status bar."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.gui.intake import SUMMARIZE_LATER
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.gui.test_main_window import drop, idle, newest_is, wait

pytestmark = pytest.mark.timeout(600)
LONG = 180_000  # ms: a wait, not a speed assertion (a busy machine builds slowly)


def fallbacks(memory: Path) -> list[Path]:
    return [p for p in memory.rglob("*.md") if "fallback: true" in p.read_text()]


def built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path: Path) -> Path:
    """A memory the window built while every memorize call failed (four notes written
    without the LLM); the server works again afterwards."""
    fault = Fault("garbage", times=10_000, task="memorize", on_reask=True)
    llm_server.state.faults.append(fault)
    document = tmp_path / "notes.md"
    document.write_text(topic_document({"python": 2, "rust": 2}))
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    drop(window, [document])
    wait(qtbot, lambda: recorder.told and idle(window), LONG)
    fault.times = 0
    return memory


def offered(window, count: int) -> bool:
    item = window.menus.summarize_again
    return item.isEnabled() and item.text() == f"Summarize &again ({count} notes)"


def test_the_memory_menu_summarizes_again_what_an_add_wrote_without_the_llm(
    qtbot, window, recorder, llm_server, tmp_path: Path
) -> None:
    assert not window.menus.summarize_again.isEnabled()
    memory = built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path)
    title, text = recorder.told[-1]
    assert title == "Added, with remarks" and "written without the LLM" in text
    assert text.endswith(SUMMARIZE_LATER)
    wait(qtbot, lambda: offered(window, 4), LONG)

    window.menus.summarize_again.trigger()
    assert window.cancel_button.isVisible()  # it can be stopped
    wait(qtbot, lambda: idle(window) and window.status_label.text().startswith("Summarized"), LONG)
    assert window.status_label.text() == "Summarized again: 4 notes"
    assert fallbacks(memory) == []
    wait(qtbot, lambda: not window.menus.summarize_again.isEnabled(), LONG)
    assert window.menus.summarize_again.text() == "Summarize &again"
    wait(qtbot, lambda: newest_is(window, "summarize", "Summarized again: 4 notes"), LONG)
    assert window.history.list.topLevelItem(0).text(1) == "Summarize again"
    assert not recorder.errors


def test_cancel_stops_summarizing_again_and_changes_nothing(
    qtbot, window, recorder, llm_server, tmp_path: Path
) -> None:
    memory = built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path)
    wait(qtbot, lambda: offered(window, 4), LONG)
    saved = tree(memory)
    state = llm_server.state
    asked = state.tasks().count("memorize")
    state.hold_after = {"memorize": asked + 1}  # one more answered, the rest held
    try:
        window.menus.summarize_again.trigger()
        wait(qtbot, lambda: state.tasks().count("memorize") > asked + 1, LONG)  # one held
        window.cancel_button.click()
        wait(qtbot, lambda: idle(window), LONG)
    finally:
        state.released.set()  # the held calls end (their client has gone)
    assert window.status_label.text().startswith("Cancelled; the memory was not changed")
    assert tree(memory) == saved and len(fallbacks(memory)) == 4
    assert offered(window, 4) and not recorder.errors

    state.hold_after = {}
    window.menus.summarize_again.trigger()  # again: what was summarized is not asked again
    wait(qtbot, lambda: idle(window) and window.status_label.text().startswith("Summarized"), LONG)
    assert window.status_label.text() == "Summarized again: 4 notes" and not fallbacks(memory)
