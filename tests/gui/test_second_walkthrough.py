"""What the second walkthrough met in a real window (issue 39, stop 44's list): adding with
no LLM set up, the root overview's name, notes written without the LLM, a note a rollback
removed, the room at 800 × 600, Ctrl+Z, adding a folder, llama.cpp in Settings, Shift+Tab
through the chat, a saved report after a restart, the words for notes, and the guide's
pictures. Each test fails without its fix."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QKeySequence
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.ingest.memorize import fallback_reason
from gam_desktop.engine.llm.redact import LABEL, Redactor
from gam_desktop.gui import words
from gam_desktop.gui.intake import kept_parts
from gam_desktop.gui.main_window import ADD_NEEDS_LLM, LLM_NOT_SET_UP
from gam_desktop.gui.settings import PRESETS, Preferences
from gam_desktop.gui.undo_last import NO_MEMORY, NOTHING_YET
from gam_desktop.gui.user_guide import guide_path
from tests.documents import topic_document
from tests.gui.test_keyboard import Key, Mod, active, focused, press
from tests.gui.test_main_window import SAMPLES, built, drop, history, idle, newest_is, wait
from tests.gui.test_summarize_again import LONG, built_with_fallbacks, fallbacks

pytestmark = pytest.mark.timeout(600)


def answered(qtbot, window, question: str) -> None:
    window.chat.research.setChecked(False)
    window.chat.input.setPlainText(question)
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None and idle(window))


# -- 1. adding documents before the LLM is set up --------------------------------------------


def test_adding_without_an_llm_says_so_before_any_work_and_offers_settings(
    qtbot, make_window, recorder, prefs, tmp_path: Path
) -> None:
    """It went ahead, and failed with a DNS error (api.openai.com, and no key)."""
    window = make_window(Preferences())  # a first start: OpenAI, no key yet
    (tmp_path / "memory").mkdir()
    assert window.open_memory(tmp_path / "memory")
    opened: list[bool] = []
    window.open_settings = lambda: opened.append(True)  # (the dialog is modal)
    recorder.answer = False  # Cancel
    drop(window, SAMPLES[:1])
    assert recorder.asked[-1] == (LLM_NOT_SET_UP, ADD_NEEDS_LLM)
    assert recorder.buttons[-1] == ("Open Settings", "Cancel")
    assert not window.operations.running("estimate") and opened == []  # nothing read or sent
    recorder.answer = True  # Open Settings: set up there, then the add goes on

    def set_up() -> None:  # as saving the Settings dialog does
        window.session.set_preferences(prefs, None)
        window.open_memory(tmp_path / "memory")

    window.open_settings = set_up
    drop(window, SAMPLES[:1])
    wait(qtbot, lambda: recorder.asked[-1][0] == "Add these documents?")
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)


# -- 2. the root overview keeps the memory's name --------------------------------------------


def test_the_root_overview_keeps_the_memorys_name_after_another_add(
    qtbot, window, tmp_path: Path
) -> None:
    memory = tmp_path / "Garden Notes"
    built(qtbot, window, memory, SAMPLES[:1])
    assert (memory / "README.md").read_text().startswith("# Garden Notes\n")
    drop(window, SAMPLES[1:])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    assert (memory / "README.md").read_text().startswith("# Garden Notes\n")  # not "# Memory"
    window.open_file("README.md")
    assert window.preview.body.toPlainText().startswith("Garden Notes")


# -- 3. a note written without the LLM, in plain words ---------------------------------------


def test_a_note_written_without_the_llm_says_so_why_and_how_to_fix_it(
    qtbot, window, recorder, llm_server, tmp_path: Path
) -> None:
    """It said "fallback: true" (or one line pointing at a menu), never why."""
    memory = built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path)
    note = fallbacks(memory)[0]
    window.open_file(note.relative_to(memory).as_posix())
    said = window.preview.without_llm
    assert said.isVisible()
    text = said.text()
    assert "Written without the LLM" in text and "fallback" not in text.lower()
    reason = reason_of(note)  # the error its call gave ("the reply contained no JSON")
    assert "JSON" in reason and f"<b>Why:</b> {html.escape(reason)}." in text
    assert 'href="summarize:"' in text  # the fix, as a link
    said.linkActivated.emit("summarize:")  # the link summarizes them again
    wait(qtbot, lambda: idle(window) and window.status_label.text().startswith("Summarized"), LONG)
    assert fallbacks(memory) == []
    assert not window.preview.without_llm.isVisible()  # the note, summarized, says nothing


def test_nothing_summarized_again_says_this_runs_error_redacted(
    qtbot, window, recorder, llm_server, tmp_path: Path, monkeypatch
) -> None:
    """ "The LLM failed again for 4 notes" said nothing of why; then it quoted the error the
    notes keep (their add's: a reply with no JSON), not this run's (the server failing),
    which is said without the secrets the process knows (as the log and the notes are)."""
    from gam_desktop.engine.llm import redact
    from gam_desktop.selfcheck.scripted_llm import Fault

    built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path)
    wait(qtbot, lambda: window.menus.summarize_again.isEnabled(), LONG)
    kept = reason_of(fallbacks(tmp_path / "memory")[0])
    # A secret this run's error holds (a server quoting a key; here, its own address)
    secret = llm_server.base_url.split("//", 1)[1].split("/", 1)[0]
    known = redact._known_pattern
    either = f"{known.pattern}|{re.escape(secret)}" if known is not None else re.escape(secret)
    monkeypatch.setattr(redact, "_known_pattern", re.compile(either))
    llm_server.state.faults.append(Fault("500", times=10_000, task="memorize"))
    told = len(recorder.told)
    window.menus.summarize_again.trigger()
    wait(qtbot, lambda: len(recorder.told) > told and idle(window), LONG)
    title, text = recorder.told[-1]
    assert title == "Nothing was summarized again"
    assert "JSON" in kept and kept not in text  # not the add's error...
    assert "The LLM's error this time: " in text and "(HTTP 500)" in text  # ...this run's
    assert secret not in text and f"http://{redact.LABEL}/v1" in text
    assert "Test connection" in text


def reason_of(note: Path) -> str:
    """Why a note was written without the LLM, as its front matter keeps it."""
    from gam_desktop.engine.store.markdown import front_of

    return str(front_of(note.read_text(encoding="utf-8"))["fallback_reason"]).rstrip(". ")


def test_the_reason_kept_in_a_note_has_no_secret() -> None:
    key = "sk-walkthrough-0123456789abcdef"
    Redactor([key])  # a key this process sends (the client makes one per setting)
    said = fallback_reason(RuntimeError(f"refused: Incorrect API key provided: {key}\n(401)"))
    assert key not in said and LABEL in said and "\n" not in said


# -- 4. a note a rollback removed ------------------------------------------------------------


def test_a_note_removed_by_a_rollback_says_what_removed_it_and_how_to_get_it_back(
    qtbot, window, tmp_path: Path
) -> None:
    """It showed "… no longer exists" over an empty page."""
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    drop(window, SAMPLES[1:2])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    added = history(qtbot, window)[0]
    note = next(
        p.relative_to(memory).as_posix()
        for p in sorted(memory.glob("*/*.md"))
        if p.name != "README.md" and SAMPLES[1].name in p.read_text()
    )
    window.open_file(note)
    window.roll_back(added)
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    wait(qtbot, lambda: "was removed by" in window.preview.body.toPlainText())
    text = window.preview.body.toPlainText()
    assert f"This note was removed by “Rolled back: {words.counted_notes(added.summary)}”" in text
    assert "Undo this rollback" in text and "Edit ▸ Undo" in text
    rollback = history(qtbot, window)[0]
    window.tabs.setCurrentWidget(window.chat_split)
    window.preview.body.anchorClicked.emit(QUrl(f"history:{rollback.sha}"))  # "show it"
    assert window.tabs.currentWidget() is window.history
    wait(qtbot, lambda: window.history.current() is not None)
    assert window.history.current().sha == rollback.sha
    assert window.history.rollback.text() == "Undo this rollback…"


# -- 5. room at 800 × 600 ----------------------------------------------------------------------


def test_at_800_by_600_the_preview_and_the_chat_have_room(qtbot, window, tmp_path) -> None:
    """The preview had about 165 px, and the conversations list about 120 px beside the
    chat, whose links broke mid-word."""
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    answered(qtbot, window, "What is BERT?")
    window.open_file(window.chat.turns[-1].result.sources[0])
    assert window.conversation_list.isVisible()  # 1280 px: room for the list
    window.resize(800, 600)
    wait(qtbot, lambda: window.width() == 800)
    QApplication.processEvents()
    chars = window.fontMetrics().averageCharWidth()
    assert window.preview.width() >= 36 * chars  # about 220 px at least (it had 165)
    assert not window.conversation_list.isVisible()  # hidden by itself: the chat's room
    assert window.chat.transcript.width() >= 50 * chars
    toggle = window.chat.list_toggle
    assert toggle.isVisible() and not toggle.isChecked()
    assert toggle.toolTip() == "Show the conversations list"
    toggle.click()  # the person wants it: shown, at a width of its own
    assert window.conversation_list.isVisible() and toggle.isChecked()
    listed = window.conversation_list
    assert listed.width() >= listed.minimumSizeHint().width() and listed.fresh.isVisible()
    toggle.click()
    assert not window.conversation_list.isVisible()
    window.resize(1280, 800)  # the choice stays, whatever the width
    wait(qtbot, lambda: window.width() == 1280)
    assert not window.conversation_list.isVisible()


# -- 6. Ctrl+Z -------------------------------------------------------------------------------


def test_ctrl_z_undoes_the_last_operation_as_history_does(
    qtbot, window, recorder, tmp_path: Path
) -> None:
    undo = window.menus.undo
    assert undo.shortcut() == QKeySequence(QKeySequence.StandardKey.Undo)
    assert not undo.isEnabled() and undo.toolTip() == NO_MEMORY
    assert window.open_memory(tmp_path / "memory")
    wait(qtbot, lambda: idle(window))
    assert not undo.isEnabled() and undo.toolTip() == NOTHING_YET
    drop(window, SAMPLES[:1])
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0 and undo.isEnabled())
    build = history(qtbot, window)[0]
    assert undo.text() == f"&Undo “{words.counted_notes(build.summary)}”"
    active(qtbot, window)
    window.tree.setFocus()
    recorder.answer = False  # asked first, as from History: Cancel changes nothing
    press(qtbot, Key.Key_Z, Mod.ControlModifier)
    wait(qtbot, lambda: recorder.asked[-1][0] == "Roll back this operation?")
    assert recorder.buttons[-1] == ("Roll back", "Cancel")
    assert idle(window) and history(qtbot, window)[0].sha == build.sha
    recorder.answer = True
    press(qtbot, Key.Key_Z, Mod.ControlModifier)
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert window.tree.memory_count() == 0
    wait(qtbot, lambda: undo.text().startswith("&Undo “Rolled back: "))
    undo.trigger()  # and undone in turn
    wait(qtbot, lambda: recorder.asked[-1][0] == "Undo this rollback?")
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)


def test_ctrl_z_in_a_text_box_undoes_the_typing(qtbot, window, recorder, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    wait(qtbot, lambda: window.menus.undo.isEnabled())
    active(qtbot, window)
    window.chat.input.setFocus()
    qtbot.keyClicks(window.chat.input, "typo")
    asked = len(recorder.asked)
    press(qtbot, Key.Key_Z, Mod.ControlModifier)
    assert window.chat.input.toPlainText() != "typo" and len(recorder.asked) == asked


# -- 7. a folder of documents ----------------------------------------------------------------


def test_add_a_folder_adds_every_readable_file_under_it(
    qtbot, window, recorder, tmp_path: Path
) -> None:
    folder = tmp_path / "papers"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "notes.md").write_text(topic_document({"git": 2}))
    (folder / "other.txt").write_text(topic_document({"docker": 2}))
    (folder / "sheet.xlsx").write_bytes(b"PK")  # not read: named, as a drop names it
    assert window.open_memory(tmp_path / "memory")
    window.choose_folder_to_add = lambda _parent: folder  # (the system's folder dialog)
    assert window.menus.add_folder.text() == "Add a &folder…"
    window.menus.add_folder.trigger()
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    title, text = recorder.told[0]
    assert title == "Some files were not added" and "sheet.xlsx" in text
    assert history(qtbot, window)[0].summary.startswith("Built 2 documents")


# -- 8. llama.cpp in Settings ----------------------------------------------------------------


def test_llama_cpp_is_a_provider_with_its_default_address(
    qtbot, window, prefs, providers_absent
) -> None:
    from gam_desktop.gui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(prefs, None, window)
    qtbot.addWidget(dialog)
    names = [dialog.provider.itemText(i) for i in range(dialog.provider.count())]
    assert names.index("llama.cpp") > names.index("LM Studio")
    dialog.provider.setCurrentText("llama.cpp")
    assert dialog.base_url.text() == "http://127.0.0.1:8080/v1"
    assert dialog.result_preferences().llm_missing(None) is None  # no key needed
    assert PRESETS["llama.cpp"][2] is False


# -- 9. Shift+Tab through the chat -----------------------------------------------------------


def test_shift_tab_from_the_question_goes_back_through_the_conversation(
    qtbot, window, answered_chat
) -> None:
    """Shift+Tab went from the question box to the conversations list, past the answer
    above it; Tab and Shift+Tab are now the same way there and back."""
    chat = answered_chat
    active(qtbot, window)

    def stop() -> str:
        where = focused()
        if where is chat.transcript:
            link = chat.transcript.textCursor().selectedText()
            return f"link {link}" if link else "conversation"
        return where.accessibleName() or type(where).__name__

    chat.input.setFocus()
    back = []
    for _ in range(5):
        press(qtbot, Key.Key_Tab, Mod.ShiftModifier)
        back.append(stop())
    assert back == [
        "link Show the 2 steps",  # the latest answer's links, the last first
        "link new/two.md",
        "link new/one.md",
        "conversation",  # the conversation itself (read by screen readers)
        "Conversations list",  # then what is before it (the list's toggle)
    ]
    forth = []
    for _ in range(5):
        press(qtbot, Key.Key_Tab)
        forth.append(stop())
    assert forth == [*reversed(back[:-1]), "Question"]


# -- 10. a saved report after a restart ------------------------------------------------------


def test_a_saved_report_shows_as_saved_after_a_restart_and_is_saved_once(
    qtbot, make_window, prefs, make_workflow, tmp_path: Path
) -> None:
    """Its "Save to memory" link came back after a restart, and a second click saved a
    numbered copy."""
    from tests.engine.test_answers import built_policies
    from tests.gui.test_research import COMPARE, research

    memory = built_policies(make_workflow, tmp_path).folder.root
    window = make_window(prefs, "settings.ini")
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    window.chat.transcript.anchorClicked.emit(QUrl("save:0"))
    turn = window.chat.turns[0]
    wait(qtbot, lambda: turn.saved is not None and idle(window))
    wait(qtbot, lambda: len(window.conversations.conversations) == 1)
    window.close()
    again = make_window(prefs, "settings.ini")  # the next start
    assert again.open_memory(memory)
    wait(qtbot, lambda: [t.question for t in again.chat.turns] == [COMPARE] and idle(again))
    text = again.chat.transcript.toPlainText()
    assert f"Saved as {turn.saved}" in text and "Save to memory" not in text
    again.chat.transcript.anchorClicked.emit(QUrl("save:0"))  # (an old link, or a script)
    wait(qtbot, lambda: idle(again))
    assert [p.name for p in (memory / "research").iterdir()] == [Path(turn.saved).name]


# -- 11. words: notes, the memory; never chunks or parts -------------------------------------


def test_the_window_says_notes_and_passages_never_chunks_or_parts(
    qtbot, window, providers_absent
) -> None:
    from gam_desktop.engine.ingest.resume import PendingAdd
    from gam_desktop.gui.settings_dialog import SettingsDialog

    for engine, said in (
        ("Cutting 3 documents into chunks", "Cutting 3 documents into passages"),
        ("Summarizing 4 of 12 chunks", "Summarizing 4 of 12 passages"),
        (
            "Resuming: 1 of 1 chunk already summarized",
            "Resuming: 1 of 1 passage already summarized",
        ),
    ):
        assert words.passages(engine) == said
    assert words.counted_notes("Added 9 documents (34 memories)") == "Added 9 documents (34 notes)"
    assert words.counted_notes("Built 1 document (1 memory)") == "Built 1 document (1 note)"
    assert words.counted_notes("Opened the memory") == "Opened the memory"
    pending = PendingAdd(["a.pdf"], {}, "scripted", "", parts=120, parts_kept=20)
    assert kept_parts(pending) == "20 of 120 passages already summarized"
    dialog = SettingsDialog(Preferences(), None, window)
    qtbot.addWidget(dialog)
    labels = " ".join(label.text() for label in dialog.findChildren(type(dialog.models_status)))
    assert not re.search(r"\bchunks?\b|\bparts?\b", labels, re.IGNORECASE), labels
    guide = guide_path().read_text(encoding="utf-8")
    assert not re.search(r"\bchunks?\b|\bparts? of\b|\bparts\b", guide), "the guide"


def test_history_and_the_status_bar_count_notes(qtbot, window, tmp_path) -> None:
    """ "Added 9 documents (34 memories)": the notes were called memories there."""
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    assert re.fullmatch(r"Built 1 document \(\d+ notes?\)", window.status_label.text())
    history(qtbot, window)
    row = window.history.list.topLevelItem(0)
    assert re.fullmatch(r"Built 1 document \(\d+ notes?\)", row.text(2)), row.text(2)


# -- 12. the guide's pictures ----------------------------------------------------------------


def test_the_guides_pictures_are_the_windows_own_of_this_version() -> None:
    """They were stale (a window before the conversations list, "Tokens:" in the preview):
    tests/gui/shots.py makes them again from the window itself and marks each one."""
    from tests.gui.shots import PICTURE_KEY

    for picture in sorted(guide_path().parent.glob("*.png")):
        image = QImage(str(picture))
        assert image.text(PICTURE_KEY).startswith("tests/gui/shots.py"), picture.name
        assert image.width() == 760, picture.name
