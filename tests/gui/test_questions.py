"""The app's questions are one builder (`dialogs.question_box`, its buttons given by the
caller) and leave nothing behind: each message box was made a child of the window and never
freed, one more per question (a Yes/No, the close question, the welcome). Here the real
message boxes are shown, their exec replaced by a click on one of their buttons."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest
from PySide6.QtWidgets import QAbstractButton, QMessageBox

from gam_desktop.gui import dialogs
from gam_desktop.gui.closing import CloseChoice, answers, question
from gam_desktop.gui.dialogs import MessageBoxes, Welcome

QUESTIONS = 5


@pytest.fixture
def shown(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[Callable[[QMessageBox], QAbstractButton]], list]:
    """`answer(pick)`: from now on a message box's exec clicks the button `pick(box)` chooses
    instead of waiting for a person; returns the weak references to every box shown (one
    list, growing)."""
    boxes: list[weakref.ref[QMessageBox]] = []

    def answer(pick: Callable[[QMessageBox], QAbstractButton]) -> list:
        def clicked(box: QMessageBox) -> int:
            boxes.append(weakref.ref(box))
            pick(box).click()
            return 0

        monkeypatch.setattr(QMessageBox, "exec", clicked)
        return boxes

    return answer


def by_text(text: str) -> Callable[[QMessageBox], QAbstractButton]:
    return lambda box: next(b for b in box.buttons() if b.text() == text)


def boxes_of(window) -> int:
    return len(window.findChildren(QMessageBox))


def freed(boxes: list) -> bool:
    gc.collect()
    return all(ref() is None for ref in boxes)


def test_yes_no_questions_leave_no_message_box_behind(window, shown) -> None:
    confirm = MessageBoxes(window).confirm  # the real message boxes
    before = boxes_of(window)
    boxes = shown(by_text("Cancel"))
    delete = ("Delete", "Cancel")
    assert [
        confirm("Delete this conversation?", "It is gone then.", buttons=delete)
        for _ in range(QUESTIONS)
    ] == [False] * QUESTIONS
    shown(lambda box: box.defaultButton())
    add = ("Add 2 documents", "Cancel")
    assert confirm("Add these documents?", "", buttons=add) is True  # Enter: go ahead
    make = ("Make it a memory", "Leave it as it is")
    assert confirm(dialogs.MAKE_MEMORY_TITLE, "", default_no=True, buttons=make) is False
    assert len(boxes) == QUESTIONS + 2
    assert boxes_of(window) == before  # one more per question, before
    assert freed(boxes)


def test_the_close_question_leaves_no_message_box_behind(window, shown) -> None:
    guard = window.closing
    title, text = question("build", "Research", 40)
    labels = answers("build")
    before = boxes_of(window)
    boxes = shown(by_text(labels[CloseChoice.FINISH]))
    assert [guard._ask_box("build", title, text, labels) for _ in range(QUESTIONS)] == [
        CloseChoice.FINISH
    ] * QUESTIONS
    shown(lambda box: box.defaultButton())
    assert guard._ask_box("build", title, text, labels) is CloseChoice.KEEP  # Enter: keep
    shown(lambda box: box.escapeButton())
    assert guard._ask_box("build", title, text, labels) is CloseChoice.KEEP  # Esc too
    assert boxes_of(window) == before
    assert freed(boxes)


def test_the_open_question_names_both_memories_on_its_buttons(window, shown) -> None:
    labels = answers("build", opening="Taxes")
    title, text = question("build", "Research", None, opening="Taxes")
    seen: list[list[str]] = []

    def cancel(box: QMessageBox) -> QAbstractButton:
        seen.append([b.text() for b in box.buttons()])
        return by_text(labels[CloseChoice.CANCEL])(box)

    shown(cancel)
    assert window.closing._ask_box("build", title, text, labels) is CloseChoice.CANCEL
    assert sorted(seen[0]) == sorted(
        ["Finish the build, then open “Taxes”", "Cancel the build and open “Taxes”", "Keep working"]
    )
    assert "“Research”" in text and "“Taxes”" in text


def test_the_welcome_question_leaves_no_message_box_behind(window, shown) -> None:
    before = boxes_of(window)
    boxes = shown(by_text("Later"))
    assert [dialogs.ask_where_memory_lives(window) for _ in range(QUESTIONS)] == [
        Welcome.LATER
    ] * QUESTIONS
    shown(by_text("Open an existing memory…"))
    assert dialogs.ask_where_memory_lives(window) is Welcome.OPEN_EXISTING
    shown(lambda box: box.defaultButton())
    assert dialogs.ask_where_memory_lives(window) is Welcome.CREATE
    shown(lambda box: box.escapeButton())
    assert dialogs.ask_where_memory_lives(window) is Welcome.LATER
    assert boxes_of(window) == before
    assert freed(boxes)
