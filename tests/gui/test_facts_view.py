"""The Facts view's history and its undo (issue 37), offscreen against the scripted server:
each fact's history (stated, updated, taken back, with dates and a link to the turn), the
facts no longer true listed on request and restored, Forget undone from the view; and
screenshots of the view in the light and the dark scheme (GAM_SCREENSHOTS keeps them)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from gam_desktop.engine.facts.history import FORGOTTEN, RESTORED
from gam_desktop.engine.facts.record import RETRACTED, read_facts
from gam_desktop.engine.workflow import Workflow
from tests.gui.test_main_window import idle, newest_is, wait

pytestmark = pytest.mark.timeout(240)

NOTES = "# Launch plan\n\nThe product launch is planned with the marketing team.\n"
START = datetime(2026, 2, 2, 18, 30, tzinfo=UTC)
SESSIONS = [
    (0, ["Hi, I'm Noor.", "I live in Utrecht.", "My dentist appointment is on 9 March.",
         "I have a dog called Biscuit."]),
    (12, ["My dentist appointment moved from 9 March to 16 March.", "I live in Leiden now."]),
    (33, ["My dentist appointment is now on 23 March.", "Forget what I said about the dog."]),
]  # fmt: skip


@pytest.fixture
def memory(make_workflow) -> Path:
    """Three dated conversations: a name, a home that changed, an appointment moved twice, a
    dog taken back."""
    workflow: Workflow = make_workflow()
    workflow.add(text=NOTES)
    for day, messages in SESSIONS:
        conversation = None
        for minute, message in enumerate(messages):
            at = START + timedelta(days=day, minutes=2 * minute)
            turn = workflow.save_turn(message, "Noted.", conversation, at=at)
            conversation = turn.conversation_id
            workflow.learn_from_turn(conversation, turn.turn, message, at=at)
    return workflow.folder.root


def facts_tab(qtbot, window, memory: Path, rows: int) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window) and len(window.facts.rows) == rows)
    window.tabs.setCurrentWidget(window.facts)


def choose(window, words: str) -> None:
    for index in range(window.facts.list.topLevelItemCount()):
        item = window.facts.list.topLevelItem(index)
        if words in item.text(0):
            window.facts.list.setCurrentItem(item)
            return
    raise AssertionError(f"no fact listed with {words!r}")


def test_each_fact_shows_its_history_with_dates_and_turns(qtbot, window, memory) -> None:
    facts_tab(qtbot, window, memory, 3)
    statements = [window.facts.list.topLevelItem(i).text(0) for i in range(3)]
    assert "The user's dentist appointment is on 23 March." in statements
    assert "The user's name is Noor." in statements
    choose(window, "23 March")
    shown = window.facts.history.toPlainText()
    assert shown.index("Stated") < shown.index("Updated") and shown.count("Updated") == 2
    assert shown.index("9 March") < shown.index("16 March") < shown.index("23 March")
    assert "“Hi, I'm Noor.”, turn 3" in shown  # the conversation (by its title) and the turn
    links = [a for a in window.facts.history.toHtml().split("href=") if a.startswith('"turn:')]
    assert len(links) == 3  # stated, then updated twice: each its conversation turn
    conversation = read_facts(memory)[0].source_conversation  # any one will do
    window.facts.history.anchorClicked.emit(QUrl(f"turn:{conversation}/1"))
    assert window.tabs.currentWidget() is window.chat_split
    wait(qtbot, lambda: window.chat.conversation_id == conversation and window.chat.turns)


def test_a_fact_taken_back_is_listed_on_request_and_restored(qtbot, window, memory) -> None:
    facts_tab(qtbot, window, memory, 3)
    assert window.facts.ended.isVisible() and "(1)" in window.facts.ended.text()
    window.facts.ended.setChecked(True)
    assert len(window.facts.rows) == 4
    choose(window, "dog called Biscuit")
    assert window.facts.list.currentItem().text(2).startswith("Taken back")
    assert window.facts.restore.isVisible() and not window.facts.forget.isVisible()
    assert not window.facts.edit.isEnabled()  # its file is a tombstone: history, not a fact
    shown = window.facts.history.toPlainText()
    assert "no longer true" in shown and "Taken back" in shown and "Stated" in shown
    window.facts.restore.click()
    wait(qtbot, lambda: idle(window) and len(read_facts(memory)) == 4)
    dog = next(f for f in read_facts(memory) if "Biscuit" in f.statement)
    assert [p.event for p in dog.events] == [RETRACTED, RESTORED]
    wait(qtbot, lambda: newest_is(window, "forget", "Restored: The user has a dog called Biscuit."))


def test_forget_is_undone_from_the_view(qtbot, window, memory) -> None:
    facts_tab(qtbot, window, memory, 3)
    assert not window.facts.undo_bar.isVisible()
    choose(window, "Leiden")
    window.facts.forget.click()
    wait(qtbot, lambda: idle(window) and len(window.facts.rows) == 2)
    assert window.facts.undo_bar.isVisible()
    assert "Leiden" in window.facts.undo_text.text()
    (tomb,) = [f for f in read_facts(memory, deleted=True) if "Leiden" in f.statement]
    assert tomb.ended == FORGOTTEN
    window.facts.undo.click()
    wait(qtbot, lambda: idle(window) and len(window.facts.rows) == 3)
    assert not window.facts.undo_bar.isVisible()
    back = next(f for f in read_facts(memory) if "Leiden" in f.statement)
    assert [p.event for p in back.events] == [FORGOTTEN, RESTORED]
    choose(window, "Leiden")
    shown = window.facts.history.toPlainText()
    assert shown.index("Forgotten") < shown.index("Restored") and "in the Facts view" in shown


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_the_facts_history(qtbot, window, memory, tmp_path, scheme: str) -> None:
    from PySide6.QtWidgets import QApplication

    from gam_desktop.gui import theme

    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance()
    theme.choose(app, scheme)
    try:
        facts_tab(qtbot, window, memory, 3)
        window.facts.ended.setChecked(True)
        choose(window, "23 March")
        path = folder / f"facts-history-{scheme}.png"
        assert window.grab().save(str(path))
        window.facts.forget.click()
        wait(qtbot, lambda: idle(window) and window.facts.undo_bar.isVisible())
        choose(window, "dog called Biscuit")
        undo = folder / f"facts-undo-{scheme}.png"
        assert window.grab().save(str(undo))
    finally:
        theme.choose(app, theme.SYSTEM)
    assert path.stat().st_size > 10_000 and undo.stat().st_size > 10_000


def test_the_link_to_a_turn_shows_that_turn(qtbot) -> None:
    """A long conversation opens at its end, but at the turn a fact's history links to."""
    from gam_desktop.engine.chats.record import Turn, new_record
    from gam_desktop.gui.chat_panel import ChatPanel

    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 400)
    panel.show()
    record = new_record("Turn 1?", "scripted", now=START)
    record.turns = [
        Turn(START + timedelta(minutes=i), f"Turn {i}?", "An answer.\n\n" * 6) for i in range(1, 31)
    ]
    bar = panel.transcript.verticalScrollBar()
    panel.show_conversation(record)
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # the latest turn
    panel.scroll_to_turn(record.id, 1)  # the conversation on screen: at once
    assert bar.value() < bar.maximum() // 10
    panel.scroll_to_turn("another", 2)  # not on screen yet: once it is
    panel.show_conversation(record)
    assert bar.value() == bar.maximum()
    record.id = "another"
    panel.show_conversation(record)
    assert 0 < bar.value() < bar.maximum() // 5


def test_a_forgotten_fact_leaves_the_preview_and_no_caret_blinks(qtbot, window, memory) -> None:
    """Seen in the walkthrough: after Forget the preview still showed the fact, and "No
    facts yet" had a blinking text caret when the keyboard rested on it."""
    from PySide6.QtCore import Qt

    facts_tab(qtbot, window, memory, 3)
    choose(window, "Leiden")
    fact = window.facts.selected()
    window.facts.show_button.click()
    wait(qtbot, lambda: window.preview.path == fact.path)
    window.facts.forget.click()
    wait(qtbot, lambda: idle(window) and len(window.facts.rows) == 2)
    wait(qtbot, lambda: window.preview.path is None)
    assert window.preview.title.text() == f"No longer true: {fact.statement}"
    assert "Restore brings it back" in window.preview.body.toPlainText()
    window.facts.undo.click()  # restored: shown again
    wait(qtbot, lambda: idle(window) and window.preview.path == fact.path)
    assert window.preview.title.text() == fact.statement
    empty = window.facts.empty
    assert not empty.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByKeyboard
    assert empty.focusPolicy() == Qt.FocusPolicy.StrongFocus  # the keyboard may rest there
