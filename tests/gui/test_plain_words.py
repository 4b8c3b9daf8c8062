"""The window in people's words (issue 39): the Markdown files are "notes" and the whole
folder "the memory", everywhere the window says it; no `fallback: true`, no "Tokens", and an
estimate in notes and words, not "memories" and "prompt and completion tokens"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gam_desktop.engine.models import ReorganizeOperation
from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.gui.chat_panel import ChatPanel, Turn
from gam_desktop.gui.reorganize_plan_dialog import ReorganizePlanDialog
from tests.gui.test_main_window import idle, wait
from tests.gui.test_summarize_again import LONG, built_with_fallbacks, fallbacks

pytestmark = pytest.mark.timeout(600)

# A file called a memory ("3 memories", "Memory text") or engine words shown as they are.
OLD_WORDS = re.compile(
    r"\b\d[\d,]* memor(y|ies)\b|Memory text|a memory or a folder|this memory was written"
    r"|The memory, or the original|Tokens|fallback|prompt token|completion token",
)


def said_by(widget: QWidget) -> list[str]:
    """Everything the window says in `widget` and below it: texts, tooltips, accessible
    names and descriptions, placeholders, and its actions' words."""
    said = []
    for w in [widget, *widget.findChildren(QWidget)]:
        for getter in ("text", "toolTip", "accessibleName", "accessibleDescription"):
            value = getattr(w, getter, None)
            if callable(value):
                try:
                    got = value()
                except TypeError:  # text(column) of items, not of widgets
                    continue
                if isinstance(got, str) and got:
                    said.append(got)
        placeholder = getattr(w, "placeholderText", None)
        if callable(placeholder) and placeholder():
            said.append(placeholder())
    for action in widget.findChildren(QAction):
        said += [action.text(), action.toolTip()]
    return said


def fields(window) -> list[str]:
    form = window.preview.form
    return [
        form.itemAt(i).widget().text()
        for i in range(form.count())
        if isinstance(form.itemAt(i).widget(), QLabel)
    ]


def test_the_window_says_notes_and_people_words(
    qtbot, window, recorder, llm_server, tmp_path: Path
) -> None:
    memory = built_with_fallbacks(qtbot, window, recorder, llm_server, tmp_path)
    title, estimate = recorder.asked[0]
    assert title == "Add these documents?"
    assert re.search(r"about \d+ notes?: about \d+ LLM calls? reading about [\d,]+ words", estimate)
    assert not OLD_WORDS.search(estimate) and "memories" not in estimate, estimate
    assert window.open_memory(memory)  # (again: the status says what it holds)
    wait(qtbot, lambda: idle(window))
    assert re.search(r"— \d+ notes$", window.status_label.text()), window.status_label.text()
    note = fallbacks(memory)[0].relative_to(memory).as_posix()
    window.open_file(note)
    shown = fields(window)
    assert "Written without the LLM" in window.preview.without_llm.text()  # (walkthrough 2)
    assert not any("fallback" in field.lower() for field in shown)
    assert "Original:" in shown and any(re.fullmatch(r"about [\d,]+ words?", f) for f in shown)
    assert "Tokens:" not in shown
    window.preview.original.setChecked(True)
    assert window.preview.original.text() == "Note text"
    assert window.preview.original.toolTip() == "Show the note again"
    QApplication.processEvents()
    for page in (window.chat_split, window.facts, window.history):
        window.tabs.setCurrentWidget(page)
        wait(qtbot, lambda: idle(window), LONG)
        said = [s for s in said_by(window) if OLD_WORDS.search(s)]
        assert said == [], said


def test_a_reorganization_plan_counts_notes(qtbot) -> None:
    plan = ReorganizeOperation(
        directory="notes",
        moved_files=[("notes/a.md", "notes/x/a.md"), ("notes/b.md", "notes/x/b.md")],
        new_directories=["notes/x"],
        kept_files=["notes/c.md"],
    )
    dialog = ReorganizePlanDialog(plan)
    qtbot.addWidget(dialog)
    said = " ".join(said_by(dialog))
    assert "2 notes would move into 1 new folder; 1 note would stay where it is" in said


def test_a_research_report_says_its_size_in_words(qtbot) -> None:
    chat = ChatPanel()
    qtbot.addWidget(chat)
    report = ResearchReport(question="How do they escalate?", llm_calls=3, tokens=4210, seconds=12)
    chat.turns = [Turn(report.question, research=True)]
    chat.show_report(report)
    text = chat.transcript.toPlainText()
    assert "3 LLM calls · about 3,200 words read and written · 12 s" in text
    assert "token" not in text
