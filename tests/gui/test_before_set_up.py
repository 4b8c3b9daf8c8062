"""Before set-up, and a restart (issue 39, item 12): the chat asks nothing before there is an
LLM and a memory, and says which to set up (the LLM first, as the welcome does); the
estimate's buttons say what they do; after a restart the preview shows the file it showed,
or the memory's overview, never a blank pane."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from gam_desktop.gui import dialogs
from gam_desktop.gui.dialogs import MessageBoxes
from gam_desktop.gui.main_window import NO_MEMORY
from gam_desktop.gui.settings import SET_UP_LLM, Preferences
from tests.gui.test_main_window import SAMPLES, built, drop, idle, wait

pytestmark = pytest.mark.timeout(120)


def can_ask(window) -> bool:
    chat = window.chat
    return chat.send.isEnabled() and chat.input.isEnabled() and chat.research.isEnabled()


def test_nothing_can_be_asked_before_an_llm_and_a_memory(make_window, tmp_path) -> None:
    window = make_window(Preferences())  # a first start: OpenAI, and no key yet
    assert not can_ask(window) and not window.chat.copy.isEnabled()
    assert SET_UP_LLM in window.chat.transcript.toPlainText()
    assert window.chat.input.placeholderText() == SET_UP_LLM
    window.set_api_key("sk-from-the-keychain")  # the LLM is set up: a memory next
    assert not can_ask(window) and NO_MEMORY in window.chat.transcript.toPlainText()
    (tmp_path / "memory").mkdir()
    assert window.open_memory(tmp_path / "memory")
    assert can_ask(window) and NO_MEMORY not in window.chat.transcript.toPlainText()
    assert not window.chat.copy.isEnabled()  # nothing to copy until there is an answer


def test_a_local_server_needs_no_key(make_window, prefs, tmp_path) -> None:
    window = make_window(prefs)  # the scripted server, as a local one would be
    (tmp_path / "memory").mkdir()
    assert window.open_memory(tmp_path / "memory")
    assert can_ask(window)


def test_the_welcome_says_to_set_up_the_llm_first() -> None:
    text = dialogs.WELCOME_TEXT
    assert "1. Set up your LLM" in text and text.index("Settings") < text.index("New memory")


def test_the_estimates_buttons_say_what_they_do(qtbot, window, recorder, tmp_path) -> None:
    extra = tmp_path / "notes.md"
    extra.write_text("# Notes\n\nThe launch is planned for March with the marketing team.\n")
    recorder.answer = False  # Cancel: nothing is built
    assert window.open_memory(tmp_path / "memory")
    drop(window, [*SAMPLES, extra])
    wait(qtbot, lambda: recorder.buttons and idle(window))
    assert recorder.asked[-1][0] == "Add these documents?"
    assert recorder.buttons[-1] == ("Add 4 documents", "Cancel")  # not Yes and No


def test_a_question_box_shows_the_words_it_is_given(qtbot, window, monkeypatch) -> None:
    seen: list[list[str]] = []

    def clicked(box: QMessageBox) -> int:
        seen.append([button.text() for button in box.buttons()])
        box.defaultButton().click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", clicked)
    boxes = MessageBoxes(window)
    labels = ("Add 3 documents", "Cancel")
    assert boxes.confirm("Add these documents?", "3 documents", buttons=labels)
    assert sorted(seen[-1]) == ["Add 3 documents", "Cancel"]


def test_after_a_restart_the_preview_shows_the_file_it_showed(
    qtbot, make_window, prefs, tmp_path
) -> None:
    memory = tmp_path / "memory"
    window = make_window(prefs, "settings.ini")
    built(qtbot, window, memory, SAMPLES[:1])
    chosen = next(
        p.relative_to(memory).as_posix()
        for p in sorted(memory.glob("*/*.md"))
        if p.name != "README.md"
    )
    window.open_file(chosen)
    window.close()
    again = make_window(prefs, "settings.ini")
    assert again.open_memory(memory)
    assert again.preview.path == chosen  # it was blank: "Select a note or a folder"


def test_a_memory_opened_the_first_time_shows_its_overview(
    qtbot, make_window, make_workflow, prefs, memory_dir
) -> None:
    make_workflow().add(files=SAMPLES[:1])
    window = make_window(prefs)
    assert window.open_memory(memory_dir)
    assert window.preview.path == "README.md"
    assert window.preview.title.text() == "Overview of this memory"
