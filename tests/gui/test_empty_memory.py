"""A memory with nothing in it yet (issue 39, item 1): the folder the app made for a new
memory, and a memory whose first build was rolled back (that removes .gam_meta.json). The
first question asked there was refused: "…/memory is not a GAM memory (no .gam_meta.json).
Choose an empty folder or an existing memory." The app had made that folder itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.gui.dialogs import MAKE_MEMORY_TITLE
from tests.gui.test_main_window import SAMPLES, built, history, idle, newest_is, wait

pytestmark = pytest.mark.timeout(180)


def ask(qtbot, window, question: str) -> None:
    window.chat.input.setPlainText(question)
    window.chat.send.click()
    last = window.chat.turns[-1]
    wait(qtbot, lambda: last.result is not None or last.error)
    wait(qtbot, lambda: idle(window))


def test_the_first_question_in_a_new_memory_is_answered(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()  # as File ▸ New memory makes it
    assert window.open_memory(memory)
    ask(qtbot, window, "What is BERT?")
    turn = window.chat.turns[-1]
    assert turn.error is None, turn.error
    assert turn.result is not None and turn.number == 1  # saved, in a conversation
    assert (memory / ".gam_meta.json").is_file()  # the folder is a memory now


def test_a_statement_in_a_new_memory_is_noted(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    assert window.open_memory(memory)
    ask(qtbot, window, "I am a vegetarian.")
    assert window.chat.turns[-1].error is None, window.chat.turns[-1].error


def test_a_question_after_the_first_build_was_rolled_back(
    qtbot, window, recorder, tmp_path
) -> None:
    """Also opened again: the history the rollback left is the memory's own, not someone's
    repository to ask about ("holds other things (.git)")."""
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    build = history(qtbot, window)[0]
    window.history.select(build.sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert not (memory / ".gam_meta.json").exists()
    assert window.open_memory(tmp_path / "other") and window.open_memory(memory)
    assert MAKE_MEMORY_TITLE not in [title for title, _text in recorder.asked]
    ask(qtbot, window, "What is BERT?")
    turn = window.chat.turns[-1]
    assert turn.error is None, turn.error
    assert turn.result is not None


def test_a_new_memory_then_documents_is_still_a_first_build(qtbot, window, tmp_path) -> None:
    """Asking first made the folder a memory: the documents added next are still organized
    as a first build (a taxonomy planned), not placed into an empty tree."""
    memory = tmp_path / "memory"
    memory.mkdir()
    assert window.open_memory(memory)
    ask(qtbot, window, "What is BERT?")
    built(qtbot, window, memory, SAMPLES)
    kinds = [op.kind for op in history(qtbot, window)]
    assert "build" in kinds and Path(memory / "README.md").is_file()
