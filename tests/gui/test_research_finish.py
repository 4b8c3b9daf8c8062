"""Research reports after the session (issue 39, item 9): saved reports were not in the tree
(research/ is left out of the document tree) and vanished from the chat at the next start;
only Find reached them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from gam_desktop.engine.store.folder import RESEARCH_DIR
from gam_desktop.gui.tree_panel import RESEARCH_LABEL
from tests.engine.test_answers import built_policies
from tests.gui.test_main_window import idle, wait
from tests.gui.test_research import COMPARE, research

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def memory(make_workflow, tmp_path: Path) -> Path:
    return built_policies(make_workflow, tmp_path).folder.root


def reported(qtbot, window, memory: Path):
    """The memory opened, the comparison researched: its turn, with its report."""
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    turn = window.chat.turns[-1]
    assert turn.error is None, turn.error
    return turn


def test_a_saved_report_is_in_the_tree_and_in_the_chat_after_a_restart(
    qtbot, make_window, prefs, memory
) -> None:
    window = make_window(prefs, "settings.ini")
    turn = reported(qtbot, window, memory)
    window.chat.transcript.anchorClicked.emit(QUrl("save:0"))
    wait(qtbot, lambda: turn.saved is not None and idle(window))
    reports = window.tree.item_at(RESEARCH_DIR)
    assert reports is not None and reports.text(0) == f"{RESEARCH_LABEL}  (1)"
    assert window.tree.item_at(turn.saved) is not None  # listed, and highlighted when shown
    assert window.tree.currentItem() is window.tree.item_at(turn.saved)
    wait(qtbot, lambda: len(window.conversations.conversations) == 1)
    window.close()
    again = make_window(prefs, "settings.ini")  # the next start
    assert again.open_memory(memory)
    wait(qtbot, lambda: [t.question for t in again.chat.turns] == [COMPARE])
    text = again.chat.transcript.toPlainText()
    assert "30 minutes" in text  # the report, read back from the conversation
    assert text.count("Sources") == 1  # its own list, not a "Sources:" line after it too
    cited = again.chat.turns[0].result.sources[0]
    again.chat.transcript.anchorClicked.emit(QUrl(cited))  # its citations still open
    wait(qtbot, lambda: again.preview.path == cited)
    assert again.tree.item_at(RESEARCH_DIR) is not None


def reloaded(qtbot, window) -> str:
    """The conversation read again from its file, as Settings ▸ Save does (the memory is
    opened again); the transcript then."""
    before = window.chat.turns[0]
    assert window.open_memory(window.workflow.folder.root)
    wait(qtbot, lambda: window.chat.turns and window.chat.turns[0] is not before and idle(window))
    assert window.chat.turns[0].restored
    return window.chat.transcript.toPlainText()


def test_a_report_read_again_keeps_its_save_link_and_its_sources_once(
    qtbot, window, memory
) -> None:
    """Seen in the walkthrough: after Settings ▸ Save, the report lost its "Save to memory"
    link and its sources were listed twice (its own list, then the answers' "Sources:")."""
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    assert window.chat.turns[-1].error is None
    wait(qtbot, lambda: len(window.conversations.conversations) == 1 and idle(window))
    text = reloaded(qtbot, window)
    assert "Save to memory" in text and "30 minutes" in text
    assert text.count("Sources") == 1
    window.chat.transcript.anchorClicked.emit(QUrl("save:0"))  # the link still saves it
    turn = window.chat.turns[0]
    wait(qtbot, lambda: turn.saved is not None and idle(window))
    assert (memory / turn.saved).is_file()
    text = reloaded(qtbot, window)
    assert f"Saved as {turn.saved}" in text and "Save to memory" not in text


def test_a_report_kept_in_a_conversation_is_listed_by_its_own_question(
    qtbot, window, memory
) -> None:
    """Seen in the walkthrough: a research turn was listed in the History as "Chat: <the
    conversation's title>", like the conversation's first turn."""
    from tests.gui.test_main_window import newest_is

    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    window.chat.input.setPlainText("When does Acme Corp escalate?")
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None and idle(window))
    wait(qtbot, lambda: newest_is(window, "chat", "Chat: When does Acme Corp escalate?"))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    wait(qtbot, lambda: idle(window) and newest_is(window, "chat", f"Chat: {COMPARE}"))


def test_a_report_read_back_after_a_restart_can_still_be_saved(
    qtbot, make_window, prefs, memory
) -> None:
    """Seen in the walkthrough: after a restart the report was there, as text, without its
    "Save to memory" link (the conversation's file kept its words, not the report)."""
    from tests.gui.test_main_window import newest_is

    window = make_window(prefs, "settings.ini")
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    assert window.chat.turns[-1].error is None
    wait(qtbot, lambda: len(window.conversations.conversations) == 1 and idle(window))
    window.close()
    again = make_window(prefs, "settings.ini")  # the next start: nothing kept in memory
    assert again.open_memory(memory)
    wait(qtbot, lambda: [t.question for t in again.chat.turns] == [COMPARE] and idle(again))
    turn = again.chat.turns[0]
    assert turn.restored and turn.report is not None and turn.report.question == COMPARE
    text = again.chat.transcript.toPlainText()
    assert "Save to memory" in text and "30 minutes" in text
    assert text.count("Sources") == 1
    again.chat.transcript.anchorClicked.emit(QUrl("save:0"))
    wait(qtbot, lambda: turn.saved is not None and idle(again))
    assert (memory / turn.saved).is_file()
    assert "30 minutes" in (memory / turn.saved).read_text(encoding="utf-8")
    wait(qtbot, lambda: newest_is(again, "research", "Research: Compare the escalation"))
    again.tabs.setCurrentWidget(again.chat_split)
    assert "Save to memory" not in again.chat.transcript.toPlainText()
    assert f"Saved as {turn.saved}" in again.chat.transcript.toPlainText()


def test_a_report_saved_before_the_conversation_kept_it_loses_nothing(
    qtbot, window, memory, monkeypatch
) -> None:
    """Keeping a report in its conversation and saving it are two commits on two task
    threads: on a busy machine (CI) Save landed first. Held here until the save is done:
    both commits are in the History, the conversation holds the report, and the chat still
    says where it was saved after the conversation is shown again."""
    from gam_desktop.engine.operations.conversations import ConversationOperations
    from tests.gui.test_main_window import ops

    gate = threading.Event()
    keep = ConversationOperations.save_turns

    def held(self, items):  # type: ignore[no-untyped-def]
        assert gate.wait(120), "the test never let the conversation keep the report"
        return keep(self, items)

    monkeypatch.setattr(ConversationOperations, "save_turns", held)
    turn = reported(qtbot, window, memory)
    window.chat.transcript.anchorClicked.emit(QUrl("save:0"))
    wait(qtbot, lambda: turn.saved is not None)
    gate.set()
    wait(qtbot, lambda: idle(window) and len(window.conversations.conversations) == 1)
    wait(qtbot, lambda: [op.kind for op in ops(window)][:2] == ["chat", "research"])
    conversation = window.conversations.conversations[0]
    window.conversations.new()
    wait(qtbot, lambda: window.chat.turns == [])
    window.conversations.open(conversation.id)
    wait(qtbot, lambda: [t.question for t in window.chat.turns] == [COMPARE] and idle(window))
    text = window.chat.transcript.toPlainText()
    assert f"Saved as {turn.saved}" in text and "Save to memory" not in text
