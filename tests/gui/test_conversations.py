"""Conversations and facts in the window (issue 12), offscreen against the scripted server:
the list beside the chat, continuing, renaming, deleting (and History bringing a deletion
back), switching memories, reopening the app, the "Learned" line with its Undo, the Facts
view, and the memory's switches."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from gam_desktop.engine.chats.record import Turn, new_record, parse, render
from gam_desktop.engine.facts.record import read_facts
from gam_desktop.engine.models import GamMeta
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR, FACTS_DIR
from gam_desktop.gui.conversation_list import EMPTY_HINT
from gam_desktop.gui.learned import LearnedItem
from tests.gui.test_main_window import history, idle, newest_is, wait

pytestmark = pytest.mark.timeout(180)

NOTES = "# Launch plan\n\nThe product launch is planned with the marketing team.\n"


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=NOTES)
    return workflow.folder.root


def ask(qtbot, window, question: str) -> None:
    """Ask in the chat and wait for the answer and for what it taught."""
    window.chat.input.setPlainText(question)
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None or window.chat.turns[-1].error)
    assert window.chat.turns[-1].error is None, window.chat.turns[-1].error
    wait(qtbot, lambda: idle(window))


def listed(window) -> list[str]:
    """The titles the conversations list shows, top to bottom."""
    return [window.conversations.info(i).title for i in window.conversation_list.shown_ids()]


def transcript(window) -> str:
    return window.chat.transcript.toPlainText()


def meta(memory: Path) -> GamMeta:
    return GamMeta.model_validate_json((memory / ".gam_meta.json").read_text())


def test_a_question_starts_a_conversation_saved_and_listed(qtbot, window, memory) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    assert window.conversation_list.empty.isVisible()  # an empty list says how to start
    assert window.conversation_list.empty.text() == EMPTY_HINT
    assert window.chat.heading.text() == "New conversation"
    ask(qtbot, window, "What is the launch planned with?")
    wait(qtbot, lambda: listed(window) == ["What is the launch planned with?"])
    (info,) = window.conversations.conversations
    assert info.turns == 1 and (memory / info.path).is_file()
    assert info.path.startswith(f"{CONVERSATIONS_DIR}/")
    assert parse((memory / info.path).read_text()).turns[0].answer == (
        window.chat.turns[0].result.answer
    )
    assert window.questions.conversation_id == info.id
    assert window.conversation_list.list.currentItem().text().startswith(info.title)
    assert window.chat.heading.text() == info.title
    assert window.chat.caption.text().startswith("Saved in this memory · 1 turn")
    wait(qtbot, lambda: newest_is(window, "chat", "Chat: What is the launch planned with?"))
    assert window.history.list.topLevelItem(0).text(1) == "Chat"  # the History names its kind


def test_an_older_conversation_is_shown_and_continued(qtbot, make_workflow, window, memory) -> None:
    engine = make_workflow()
    older = engine.chat("What is the launch planned with?")
    time.sleep(1.1)  # conversations are dated to the second
    engine.chat("Who is on the marketing team?")
    assert window.open_memory(memory)
    wait(qtbot, lambda: len(listed(window)) == 2)
    assert listed(window) == ["Who is on the marketing team?", "What is the launch planned with?"]
    window.conversation_list.list.itemClicked.emit(
        window.conversation_list.item(older.conversation_id)
    )
    wait(qtbot, lambda: [t.question for t in window.chat.turns] == [older.result.question])
    shown = transcript(window)  # the saved answer and its sources, read from its file
    assert "planned with the marketing team" in shown
    assert f"Sources: {older.result.sources[0]}" in shown
    time.sleep(1.1)
    ask(qtbot, window, "And who plans it?")
    record = parse((memory / older.path).read_text())
    assert [t.question for t in record.turns] == [
        "What is the launch planned with?",
        "And who plans it?",
    ]
    assert window.chat.turns[-1].number == 2
    wait(qtbot, lambda: listed(window)[0] == "What is the launch planned with?")  # newest first
    assert len(listed(window)) == 2


def test_deleting_asks_and_history_brings_it_back(qtbot, window, recorder, memory) -> None:
    assert window.open_memory(memory)
    ask(qtbot, window, "What is the launch planned with?")
    wait(qtbot, lambda: len(listed(window)) == 1)
    (info,) = window.conversations.conversations
    recorder.answer = False
    _rename, delete = window.conversation_list.actions_for(info.id)
    delete.trigger()
    title, text = recorder.asked[-1]
    assert title == "Delete this conversation?" and "History can bring it back" in text
    assert (memory / info.path).is_file()  # declined: kept
    recorder.answer = True
    delete.trigger()
    wait(qtbot, lambda: idle(window) and listed(window) == [])
    assert not (memory / info.path).exists()
    assert window.chat.turns == [] and window.chat.heading.text() == "New conversation"
    assert window.conversation_list.empty.isVisible()
    window.history.select(history(qtbot, window)[0].sha)  # "Deleted the conversation: …"
    assert window.history.operations[0].summary.startswith("Deleted the conversation")
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and listed(window) == [info.title])
    assert (memory / info.path).is_file()


def test_a_conversation_written_outside_the_app_is_listed(qtbot, window, memory) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    record = new_record("Where is the launch party?", "another-app")
    record.turns.append(Turn(record.started, "Where is the launch party?", "In Porto."))
    (memory / record.path).parent.mkdir(parents=True)
    (memory / record.path).write_text(render(record))
    wait(qtbot, lambda: listed(window) == ["Where is the launch party?"])
    window.conversations.open(record.id)
    wait(qtbot, lambda: "In Porto." in transcript(window))
    (memory / record.path).unlink()  # gone elsewhere: off the list, and off the screen
    wait(qtbot, lambda: listed(window) == [] and window.chat.turns == [])


def test_rename_and_search(qtbot, make_workflow, window, recorder, memory) -> None:
    engine = make_workflow()
    first = engine.chat("What is the launch planned with?")
    engine.chat("Who is on the marketing team?")
    assert window.open_memory(memory)
    wait(qtbot, lambda: len(listed(window)) == 2)
    window.conversations.open(first.conversation_id)
    recorder.text = "  Launch   partners "
    rename, _delete = window.conversation_list.actions_for(first.conversation_id)
    rename.trigger()
    assert recorder.asked[-1] == ("Rename the conversation", "What is the launch planned with?")
    wait(qtbot, lambda: "Launch partners" in listed(window))
    assert parse((memory / first.path).read_text()).title == "Launch partners"
    assert window.chat.heading.text() == "Launch partners"  # the conversation on screen
    window.conversation_list.search.setText("PARTNER")
    assert listed(window) == ["Launch partners"]
    window.conversation_list.search.setText("budget")
    assert listed(window) == [] and "budget" in window.conversation_list.empty.text()
    assert window.conversation_list.empty.isVisible()
    window.conversation_list.search.clear()
    assert len(listed(window)) == 2


def test_switching_memory_switches_the_list(qtbot, make_workflow, window, memory, tmp_path) -> None:
    make_workflow().chat("What is the launch planned with?")
    other = make_workflow(gam_dir=tmp_path / "other")
    other.add(text="# Boats\n\nThe user's boat is called Sea Otter.\n")
    other.chat("What is the boat called?")
    assert window.open_memory(memory)
    wait(qtbot, lambda: listed(window) == ["What is the launch planned with?"])
    window.conversations.open(window.conversations.conversations[0].id)
    wait(qtbot, lambda: len(window.chat.turns) == 1)
    assert window.open_memory(tmp_path / "other")
    wait(qtbot, lambda: listed(window) == ["What is the boat called?"])
    assert window.chat.turns == []  # nothing shown of the other memory's chat
    assert window.open_memory(memory)  # back: its list, and the conversation last shown
    wait(qtbot, lambda: listed(window) == ["What is the launch planned with?"])
    wait(qtbot, lambda: [t.question for t in window.chat.turns] == [listed(window)[0]])


def test_reopening_the_app_shows_the_last_conversation(qtbot, make_window, prefs, memory) -> None:
    first = make_window(prefs, "gam.ini")
    assert first.open_memory(memory)
    ask(qtbot, first, "What is the launch planned with?")
    ask(qtbot, first, "And who plans it?")
    shown = first.questions.conversation_id
    first.close()
    again = make_window(prefs, "gam.ini")
    assert again.open_memory(memory)
    wait(qtbot, lambda: len(again.chat.turns) == 2)
    assert again.questions.conversation_id == shown
    assert [t.question for t in again.chat.turns][1] == "And who plans it?"
    assert again.conversation_list.list.currentItem() is not None


def test_the_learned_line_and_its_undo(qtbot, window, recorder, memory) -> None:
    assert window.open_memory(memory)
    ask(qtbot, window, "I live in Porto.")
    wait(qtbot, lambda: "+ The user lives in Porto." in transcript(window))
    assert "Learned from what you said:" in transcript(window)
    assert "Undo (forget this fact)" in transcript(window)
    assert [f.statement for f in read_facts(memory)] == ["The user lives in Porto."]
    wait(qtbot, lambda: newest_is(window, "learn", "Learned 1 fact"))
    assert window.history.list.topLevelItem(0).text(1) == "Learned"
    window.chat.transcript.anchorClicked.emit(QUrl("undo:0/0"))
    wait(qtbot, lambda: idle(window) and read_facts(memory) == [])
    wait(qtbot, lambda: "(undone)" in transcript(window))
    assert "Undo (forget" not in transcript(window)
    wait(qtbot, lambda: newest_is(window, "forget", "Forgot: The user lives in Porto."))
    window.history.select(history(qtbot, window)[0].sha)  # the forget, undone from History
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and len(read_facts(memory)) == 1)
    wait(qtbot, lambda: "Undo (forget this fact)" in transcript(window))  # stands again
    window.conversation_list.fresh.click()  # away and back: its Learned line is kept
    assert "Porto" not in transcript(window)
    window.conversations.open(window.conversations.conversations[0].id)
    wait(qtbot, lambda: "+ The user lives in Porto." in transcript(window))
    assert "Undo (forget this fact)" in transcript(window)


def test_an_update_is_undone_by_rolling_back_the_learning(qtbot, window, recorder, memory) -> None:
    assert window.open_memory(memory)
    ask(qtbot, window, "I live in Porto.")
    wait(qtbot, lambda: "+ The user lives in Porto." in transcript(window))
    ask(qtbot, window, "I live in Lisbon.")
    line = "~ The user lives in Porto. → The user lives in Lisbon."
    wait(qtbot, lambda: line in transcript(window))
    assert "Undo (roll back this learning)" in transcript(window)
    assert [f.statement for f in read_facts(memory)] == ["The user lives in Lisbon."]
    window.chat.transcript.anchorClicked.emit(QUrl("undo:1/0"))
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert recorder.asked[-1][0] == "Roll back this operation?"
    assert (
        "Updated 1: The user lives in Porto. → The user lives in Lisbon." in recorder.asked[-1][1]
    )
    assert [f.statement for f in read_facts(memory)] == ["The user lives in Porto."]
    wait(qtbot, lambda: "(undone)" in transcript(window))
    assert "+ The user lives in Porto." in transcript(window)  # the first turn's stands


def test_the_facts_view_lists_edits_and_forgets(qtbot, window, recorder, memory) -> None:
    assert window.open_memory(memory)
    window.tabs.setCurrentWidget(window.facts)
    wait(qtbot, lambda: idle(window))
    assert window.facts.empty.isVisible() and "No facts yet" in window.facts.empty.text()
    window.tabs.setCurrentWidget(window.chat_split)
    ask(qtbot, window, "I live in Porto.")
    wait(qtbot, lambda: len(window.facts.rows) == 1)
    window.tabs.setCurrentWidget(window.facts)
    item = window.facts.list.topLevelItem(0)
    assert item.text(0) == "The user lives in Porto."
    assert item.text(1) == "I live in Porto."  # the conversation it was said in
    assert item.text(2).startswith("Today")
    assert not window.facts.forget.isEnabled()  # nothing chosen yet
    window.facts.list.setCurrentItem(item)
    fact = window.facts.selected()
    window.facts.edit.click()
    assert window.preview.path == fact.path and fact.path.startswith(f"{FACTS_DIR}/")
    assert window.preview.title.text() == "The user lives in Porto."
    assert recorder.opened == [QUrl.fromLocalFile(str(memory / fact.path))]
    window.facts.conversation.click()
    assert window.tabs.currentWidget() is window.chat_split
    window.tabs.setCurrentWidget(window.facts)
    window.facts.forget.click()
    wait(qtbot, lambda: idle(window) and window.facts.rows == [])
    assert read_facts(memory) == [] and window.facts.empty.isVisible()
    wait(qtbot, lambda: newest_is(window, "forget", "Forgot: The user lives in Porto."))


def test_with_learning_switched_off_nothing_is_learned(qtbot, window, memory) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    assert window.learn_switch.isChecked() and window.save_switch.isChecked()
    window.learn_switch.setChecked(False)
    wait(qtbot, lambda: idle(window) and not meta(memory).learn_facts)
    wait(qtbot, lambda: newest_is(window, "settings", "Settings: learn facts off"))
    window.tabs.setCurrentWidget(window.facts)
    assert window.facts.notice.isVisible()  # the Facts view says learning is off
    window.tabs.setCurrentWidget(window.chat_split)
    ask(qtbot, window, "I live in Porto.")
    qtbot.wait(300)
    assert "Learned" not in transcript(window) and "Learning" not in transcript(window)
    assert read_facts(memory) == [] and not (memory / FACTS_DIR).exists()
    assert window.chat.turns[-1].number == 1  # the conversation is still saved


def test_with_saving_switched_off_nothing_is_saved_but_follow_ups_work(
    qtbot, window, memory
) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    window.save_switch.setChecked(False)
    wait(qtbot, lambda: idle(window) and not meta(memory).save_conversations)
    assert window.chat.caption.text().startswith("Not saved")
    ask(qtbot, window, "What is the launch planned with?")
    ask(qtbot, window, "And who plans it?")
    assert [t.number for t in window.chat.turns] == [1, 2]  # one conversation, kept in RAM
    assert not (memory / CONVERSATIONS_DIR).exists() and listed(window) == []


def test_a_learned_item_follows_its_fact_file() -> None:
    added = LearnedItem("+", "A.", "facts/a.md", True, "forget")
    removed = LearnedItem("−", "B.", "facts/b.md", False, "roll back")
    gone = Changes("forget", moved=frozenset({("facts/a.md", "facts/.deleted/a.md")}))
    assert added.follow(gone) and added.undone
    assert not removed.follow(gone) and not removed.undone
    back = Changes("rollback", added=frozenset({"facts/a.md", "facts/b.md"}))
    assert added.follow(back) and not added.undone
    assert removed.follow(back) and removed.undone  # the removal was undone
