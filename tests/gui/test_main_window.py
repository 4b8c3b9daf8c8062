"""The desktop app with pytest-qt, offscreen, against the scripted server over HTTP."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from gam_desktop.engine.history.log import Operation
from gam_desktop.engine.llm import LLMAuthError, LLMCallFailed, LLMUnreachable
from gam_desktop.engine.llm.tokenizer import resources_dir
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.gui import error_advice
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.crash import crash_mid_add
from tests.documents import topic_document

SAMPLES = sorted((resources_dir() / "samples").iterdir())
WAIT = 100_000  # ms: a guard against hanging (under the 120 s test timeout), not a speed limit


def wait(qtbot, condition, timeout: int = WAIT) -> None:
    qtbot.waitUntil(lambda: bool(condition()), timeout=timeout)


def drop(window, paths: list[Path]) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(
        window.rect().center(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dragEnterEvent(enter)
    assert window.drop_hint.isVisible()  # a visible drop target while dragging
    event = QDropEvent(
        QPointF(window.rect().center()),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    assert not window.drop_hint.isVisible()


def ops(window) -> list[Operation]:
    """The operations the History tab shows, brought to the front as a person would; none
    while it is still loading (its git calls run on worker threads)."""
    window.tabs.setCurrentWidget(window.history)
    return [] if window.history.loading() else window.history.operations


def newest_is(window, kind: str, summary: str = "") -> bool:
    shown = ops(window)
    return bool(shown) and shown[0].kind == kind and shown[0].summary.startswith(summary)


def history(qtbot, window) -> list[Operation]:
    """The History tab's operations, once loaded."""
    wait(qtbot, lambda: ops(window))
    return ops(window)


def idle(window) -> bool:
    return not window.tasks.running()


def built(qtbot, window, memory: Path, paths: list[Path]) -> None:
    assert window.open_memory(memory)
    drop(window, paths)
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)


def test_dropped_files_are_built_into_a_memory(qtbot, window, recorder, tmp_path) -> None:
    odd = tmp_path / "sheet.xlsx"
    odd.write_bytes(b"PK")
    assert window.open_memory(tmp_path / "memory")
    assert window.preview.title.text() == "This memory is empty"  # says how to start
    built(qtbot, window, tmp_path / "memory", [*SAMPLES, odd])
    assert (
        recorder.told[0][0] == "Some files were not added" and "sheet.xlsx" in recorder.told[0][1]
    )
    title, estimate = recorder.asked[-1]
    assert title == "Add these documents?" and "LLM calls" in estimate and "3 documents" in estimate
    assert window.tree.memory_count() == len(
        [p for p in (tmp_path / "memory").rglob("*.md") if p.name != "README.md"]
    )
    assert history(qtbot, window)[0].kind == "build"
    assert window.status_label.text().startswith("Built 3 documents")


def test_a_dropped_folder_is_searched_for_documents(qtbot, window, tmp_path) -> None:
    folder = tmp_path / "papers"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "notes.md").write_text(topic_document({"git": 2}))
    (folder / "other.txt").write_text(topic_document({"docker": 2}))
    built(qtbot, window, tmp_path / "memory", [folder])
    assert history(qtbot, window)[0].summary.startswith("Built 2 documents")


def test_drops_during_a_build_are_queued(qtbot, window, llm_server, tmp_path) -> None:
    llm_server.state.latency_s = 0.2
    assert window.open_memory(tmp_path / "memory")
    drop(window, SAMPLES[:1])
    wait(qtbot, lambda: bool(window.tasks.running("build")))
    drop(window, SAMPLES[1:])
    assert "queued" in window.status_label.text()
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    assert [op.kind for op in history(qtbot, window)] == ["add", "build"]


def test_chat_round_trip_with_clickable_sources(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    steps: list[str] = []
    window.chat.add_step = lambda text, original=window.chat.add_step: (
        steps.append(text),
        original(text),
    )
    qtbot.keyClicks(window.chat.input, "What is BERT?")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)  # Enter sends
    wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    result = window.chat.turns[-1].result
    assert "2018" in result.answer and result.sources
    assert steps and steps[0].startswith("read 3 passages: ")  # live steps
    assert "Confidence 80%" in window.chat.transcript.toPlainText()  # its quotes checked
    window.chat.transcript.anchorClicked.emit(QUrl(f"source:{result.sources[0]}"))
    assert window.preview.path == result.sources[0]
    assert "15 percent" in window.preview.body.toPlainText()  # the BERT note itself
    window.chat.copy_answer()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == result.answer


def test_shift_enter_breaks_the_line(qtbot, window, tmp_path) -> None:
    assert window.open_memory(tmp_path / "memory")  # the question box waits for a memory
    qtbot.keyClicks(window.chat.input, "first")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.chat.input, "second")
    assert window.chat.input.toPlainText() == "first\nsecond" and window.chat.turns == []


def test_a_follow_up_in_one_conversation_then_a_new_one(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    for question in ("What is BERT?", "And when was it released?"):
        window.chat.input.setPlainText(question)
        window.chat.send.click()
        wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    assert "2018" in window.chat.turns[-1].result.answer
    assert [turn.number for turn in window.chat.turns] == [1, 2]  # one saved conversation
    window.conversation_list.fresh.click()
    assert window.chat.turns == [] and window.questions.conversation_id is None


def test_rollback_and_undo_through_the_history_panel(qtbot, window, tmp_path, git_threads) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    drop(window, SAMPLES[1:])
    wait(qtbot, lambda: idle(window) and newest_is(window, "add"))
    before_rollback = window.tree.memory_count()
    window.history.select(history(qtbot, window)[0].sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert window.tree.memory_count() < before_rollback
    assert any("will be reversed" in text for _, text in window_recorder_texts(window))
    assert window.history.rollback.text() == "Undo this rollback…"
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback", "Undid rollback"))
    assert window.tree.memory_count() == before_rollback
    assert threading.main_thread() not in git_threads  # the panel and rollback asked workers
    window.history.select(history(qtbot, window)[0].sha)
    assert window.history.rollback.text() == "Roll back again…"  # (not "Undo this rollback…")
    recorder = window.confirm.__self__
    recorder.answer = False  # asked, and declined
    window.history.restore.click()
    assert recorder.buttons[-3:] == [  # each question's buttons say what they do, not Yes/No
        ("Roll back", "Cancel"),
        ("Undo this rollback", "Cancel"),
        ("Restore", "Cancel"),
    ]


def window_recorder_texts(window) -> list[tuple[str, str]]:
    return window.confirm.__self__.asked


def test_reorganize_shows_the_plan_then_history_shows_moves(
    qtbot, window, recorder, llm_server, tmp_path
) -> None:
    # Three invalid plans are repaired into the model's single folder "all/", mixing topics.
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    mixed = tmp_path / "mixed.md"
    mixed.write_text(topic_document({"python": 4, "rust": 4}))
    built(qtbot, window, tmp_path / "memory", [mixed])
    window.plan_reorganization("all")
    wait(qtbot, lambda: idle(window) and newest_is(window, "reorganize"))
    plan = recorder.plans[-1]
    assert plan.directory == "all" and len(plan.moved_files) == 8
    assert history(qtbot, window)[0].summary.startswith("Reorganized all/ into 2 folders")
    rows = [
        (window.history.files.topLevelItem(i).text(0), window.history.files.topLevelItem(i).text(1))
        for i in range(window.history.files.topLevelItemCount())
    ]
    moves = [label for kind, label in rows if kind == "moved"]
    assert len(moves) == 8 and all(label.startswith("all/") and "→" in label for label in moves)
    window.history.files.setCurrentItem(
        window.history.files.topLevelItem([kind for kind, _ in rows].index("moved"))
    )
    wait(qtbot, lambda: "Moved from all/" in window.history.diff.toPlainText())  # (words.py)


def test_a_cancelled_build_leaves_the_folder_unchanged(qtbot, window, llm_server, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    before = {
        p: p.read_bytes()
        for p in memory.rglob("*")
        if p.is_file() and ".git" not in p.parts and "cache" not in p.parts and "lock" not in p.name
    }
    llm_server.state.latency_s = 0.5
    drop(window, SAMPLES[1:])
    wait(qtbot, lambda: window.cancel_button.isVisible() and bool(window.tasks.running("build")))
    window.cancel_button.click()
    wait(qtbot, lambda: idle(window))
    assert window.status_label.text() == "Cancelled; the memory was not changed"
    after = {
        p: p.read_bytes()
        for p in memory.rglob("*")
        if p.is_file() and ".git" not in p.parts and "cache" not in p.parts and "lock" not in p.name
    }
    assert after == before


def test_the_window_stays_responsive_while_building(qtbot, window, llm_server, tmp_path) -> None:
    llm_server.state.latency_s = 0.3
    assert window.open_memory(tmp_path / "memory")
    drop(window, SAMPLES)
    wait(qtbot, lambda: bool(window.tasks.running("build")))
    window.tabs.setCurrentWidget(window.history)  # the GUI thread answers meanwhile
    window.chat.input.setPlainText("still typing")
    assert window.tasks.running("build")
    wait(qtbot, lambda: idle(window))


def test_an_outside_edit_appears_in_the_tree_and_history(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    count = window.tree.memory_count()
    (memory / "quokkas.md").write_text(
        render_memory({"title": "quokkas", "tldr": "Q."}, "Quokkas live on Rottnest Island.")
    )
    wait(qtbot, lambda: window.tree.memory_count() == count + 1)
    wait(qtbot, lambda: newest_is(window, "manual-edit"))
    assert "changed outside the app" in window.status_label.text()
    assert window.tree.item_at("quokkas.md") is not None


def test_a_second_window_on_the_same_memory_is_refused(
    qtbot, make_window, prefs, recorder, tmp_path
) -> None:
    first, second = make_window(prefs), make_window(prefs)
    assert first.open_memory(tmp_path / "memory")
    assert not second.open_memory(tmp_path / "memory")
    assert recorder.told[-1][0] == "This memory is already open"
    assert first.open_memory(tmp_path / "memory")  # the window that holds it may re-open it
    first.close()
    assert second.open_memory(tmp_path / "memory")  # free again once the first closed


def test_a_folder_that_is_not_a_memory_is_not_written_silently(
    qtbot, window, recorder, tmp_path
) -> None:
    folder = tmp_path / "taxes"
    folder.mkdir()
    (folder / "2024.xlsx").write_bytes(b"PK")
    recorder.answer = False
    assert not window.open_memory(folder)
    assert recorder.asked[-1][0] == "Make this folder a memory?"
    assert sorted(p.name for p in folder.iterdir()) == ["2024.xlsx"]
    recorder.answer = True
    assert window.open_memory(folder)
    assert (folder / ".gam_meta.json").exists() and (folder / "2024.xlsx").exists()
    assert history(qtbot, window)[0].summary == "Made this folder a memory"


@pytest.mark.parametrize(
    "fault,expected",
    [("unreachable", LLMUnreachable), ("401", LLMAuthError), ("429", LLMCallFailed)],
)
def test_llm_errors_are_shown_as_messages(
    qtbot, make_window, prefs, recorder, llm_server, tmp_path, fault, expected
) -> None:
    if fault == "unreachable":
        prefs.base_url = "http://127.0.0.1:9/v1"
    else:
        llm_server.state.faults.append(Fault(fault, times=1000, seconds=0.01))
    window = make_window(prefs)
    assert window.open_memory(tmp_path / "memory")
    window.workflow.settings = window.workflow.settings.model_copy(
        update={"max_retries": 1, "backoff_base": 0.01}
    )
    drop(window, SAMPLES[:1])
    wait(
        qtbot,
        lambda: recorder.errors or (idle(window) and window.tree.memory_count()),
        timeout=WAIT,
    )
    if fault == "429":  # every memorize call failed: fallbacks are written and reported
        wait(qtbot, lambda: recorder.told and idle(window))
        assert "written without the LLM" in recorder.told[-1][1]
        return
    assert isinstance(recorder.errors[0], expected)
    message = error_advice.describe(recorder.errors[0])
    assert message.title in ("The LLM server cannot be reached", "The API key was refused")
    assert "Settings" in message.advice
    assert window.status_label.text() == "Failed"


def test_a_bad_pdf_is_named_and_nothing_is_added(qtbot, window, recorder, tmp_path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    assert window.open_memory(tmp_path / "memory")
    drop(window, [bad])
    wait(qtbot, lambda: bool(recorder.told) and idle(window))
    assert recorder.told[-1][0] == "Nothing to add" and "broken.pdf" in recorder.told[-1][1]


def test_history_unavailable_without_git(make_window, prefs, tmp_path, monkeypatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    window = make_window(prefs)
    assert window.open_memory(tmp_path / "memory")
    assert "history is off" in window.status_label.text()
    window.tabs.setCurrentWidget(window.history)
    assert not window.history.notice.isHidden()
    assert "git was not found" in window.history.notice.text()


def test_a_crash_found_on_open_is_offered_recovery(
    qtbot, make_window, prefs, recorder, tmp_path, llm_server
) -> None:

    memory = tmp_path / "memory"
    first = make_window(prefs)
    built(qtbot, first, memory, SAMPLES[:1])
    first.close()
    crash_mid_add(memory, llm_server.base_url, topic_document({"rust": 3}))
    window = make_window(prefs)
    assert window.open_memory(memory)
    assert recorder.asked[-1][0] == "An operation was interrupted"
    wait(qtbot, lambda: idle(window) and "Recovery" in window.status_label.text(), timeout=WAIT)
    assert window.workflow.interrupted() is None


def test_a_first_build_that_died_is_offered_recovery_not_consent(
    qtbot, window, recorder, tmp_path, llm_server
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    crash_mid_add(memory, llm_server.base_url, topic_document({"rust": 3}), 2)
    assert window.open_memory(memory)
    assert [title for title, _ in recorder.asked] == ["An operation was interrupted"]
    wait(qtbot, lambda: idle(window) and "Recovery" in window.status_label.text(), timeout=WAIT)
    assert window.workflow.interrupted() is None
    assert sorted(p.name for p in memory.iterdir()) == [".gam"]  # restored: as before


def test_read_only_memory_folder_is_a_clear_error(
    qtbot, window, recorder, tmp_path, monkeypatch
) -> None:
    from gam_desktop.engine.store import folder as folder_module

    assert window.open_memory(tmp_path / "memory")

    def refuse(self) -> None:
        raise PermissionError(
            13,
            f"the memory folder {self.root} cannot be written "
            "(Read-only file system); check its permissions",
        )

    monkeypatch.setattr(folder_module.MemoryFolder, "check_writable", refuse)
    drop(window, SAMPLES[:1])
    wait(qtbot, lambda: bool(recorder.errors))
    assert error_advice.describe(recorder.errors[0]).title == "The memory folder cannot be written"
