"""The chat as a finished app has it (issue 39, items 4, 5, 7 and 14): headings in an answer
at the size of a heading in a chat, Tab to the question before the answers' links, the
keyboard left where it was after a rollback or a Forget, a stated fact without "Sources:
none · Confidence 100%", a reopened conversation with its steps and pages, each chat turn
in the History by its own question, the transcript's links and Learned box in the theme's
colours, and steps in words."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QTextCharFormat
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.facts.learn import Learned
from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.models import ChatResult, Citation
from gam_desktop.gui import theme
from gam_desktop.gui.app import make_app
from gam_desktop.gui.chat_panel import ChatPanel, Turn
from gam_desktop.gui.learned import LearnedNote
from gam_desktop.gui.tree_panel import IS_DIR_ROLE
from tests.documents import make_pdf
from tests.gui.test_main_window import SAMPLES, built, history, idle, newest_is, wait

pytestmark = pytest.mark.timeout(180)

Key = Qt.Key


def ask(qtbot, window, question: str) -> None:
    window.chat.input.setPlainText(question)
    window.chat.send.click()
    wait(qtbot, lambda: window.chat.turns[-1].result is not None or window.chat.turns[-1].error)
    assert window.chat.turns[-1].error is None, window.chat.turns[-1].error
    wait(qtbot, lambda: idle(window))


def focused():
    return QApplication.focusWidget()


def active(qtbot, window) -> None:
    window.activateWindow()
    wait(qtbot, window.isActiveWindow)


def answered(panel: ChatPanel, answer: str, **fields) -> None:
    panel.input.setPlainText("A question?")
    panel.send.click()
    panel.show_result(ChatResult(question="A question?", answer=answer, **fields))


def block_size(panel: ChatPanel, text: str) -> float:
    """The point size the transcript draws the block holding `text` in."""
    block = panel.transcript.document().begin()
    while block.isValid():
        if block.text().strip() == text:
            return block.begin().fragment().charFormat().font().pointSizeF()
        block = block.next()
    raise AssertionError(f"{text!r} is not in the transcript")


# -- 4: headings, Tab, focus, statements, reopened conversations ----------------------------


def test_a_heading_in_an_answer_is_a_heading_not_a_title(qtbot) -> None:
    make_app([])
    panel = ChatPanel()
    qtbot.addWidget(panel)
    answered(panel, "# Water\n\nDrink two litres a day.\n\n### Why\n\nIt helps.")
    body = block_size(panel, "Drink two litres a day.")
    assert block_size(panel, "Water") <= body * 1.25  # was twice the text's size
    assert block_size(panel, "Why") <= body * 1.05


def test_tab_reaches_the_question_past_the_latest_answers_links_only(
    qtbot, window, tmp_path
) -> None:
    """Tab stopped on every source of every answer before it reached the question box. It
    goes through the chat as it reads (the conversation, then the question under it: the
    second walkthrough found Shift+Tab skipping the conversation when its links came after
    Ask), and on the way stops on the latest answer's links only."""
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    ask(qtbot, window, "What is BERT?")
    ask(qtbot, window, "What is GPT?")
    assert window.chat.transcript.toHtml().count("source:") >= 2  # links Tab could stop on
    active(qtbot, window)
    window.chat.list_toggle.setFocus()  # (above the conversation)
    links = []
    for _ in range(12):
        qtbot.keyClick(focused(), Key.Key_Tab)
        if focused() is window.chat.input:
            break
        links.append(window.chat.transcript.textCursor().selectedText())
    assert focused() is window.chat.input
    latest = window.chat.turns[-1].result
    sources = [link for link in links if link.endswith(".md")]
    assert sources == [c.path for c in latest.citations] or sources == latest.sources
    assert links[0] == ""  # first the conversation itself (screen readers read it)


def test_the_keyboard_stays_on_roll_back_after_a_rollback(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    built(qtbot, window, memory, SAMPLES[1:2])
    active(qtbot, window)
    history(qtbot, window)
    window.history.rollback.setFocus()
    qtbot.keyClick(window.history.rollback, Key.Key_Space)  # Roll back… (the recorder: Yes)
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    wait(qtbot, lambda: window.history.rollback.isEnabled())
    assert focused() is window.history.rollback  # it was on the Find box
    assert window.history.rollback.text() == "Undo this rollback…"


def test_the_keyboard_stays_in_the_facts_after_a_forget(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    for said in ("I live in Porto.", "I am a vegetarian."):
        ask(qtbot, window, said)
    wait(qtbot, lambda: len(window.facts.rows) == 2)
    window.tabs.setCurrentWidget(window.facts)
    active(qtbot, window)
    window.facts.list.setCurrentItem(window.facts.list.topLevelItem(0))
    window.facts.forget.setFocus()
    qtbot.keyClick(window.facts.forget, Key.Key_Space)
    wait(qtbot, lambda: idle(window) and len(window.facts.rows) == 1)
    assert focused() is window.facts.forget  # on the fact now selected, not the Find box
    assert window.facts.selected() is not None
    qtbot.keyClick(window.facts.forget, Key.Key_Space)
    wait(qtbot, lambda: idle(window) and not window.facts.rows)
    assert focused() is not None and window.facts.isAncestorOf(focused())


def test_a_stated_fact_shows_no_sources_and_no_confidence(
    qtbot, make_window, prefs, tmp_path
) -> None:
    memory = tmp_path / "memory"
    window = make_window(prefs, "settings.ini")
    built(qtbot, window, memory, SAMPLES[:1])
    ask(qtbot, window, "I live in Porto.")
    shown = window.chat.transcript.toPlainText()
    assert "Noted" in shown and "Sources: none" not in shown and "Confidence" not in shown
    window.close()
    again = make_window(prefs, "settings.ini")  # the app started again: read from the file
    assert again.open_memory(memory)
    wait(qtbot, lambda: [t.question for t in again.chat.turns] == ["I live in Porto."])
    shown = again.chat.transcript.toPlainText()
    assert "Noted" in shown and "Sources" not in shown and "Confidence" not in shown


def test_a_reopened_conversation_keeps_its_steps_and_pages(
    qtbot, make_window, prefs, tmp_path
) -> None:
    memory = tmp_path / "memory"
    pdf = make_pdf(
        tmp_path / "handbook.pdf",
        ["Cover page.", "BERT was released by Google in 2018.\nIt reads text in both directions."],
    )
    window = make_window(prefs, "settings.ini")
    built(qtbot, window, memory, [pdf])
    ask(qtbot, window, "When was BERT released?")
    where = window.chat.turns[0].result.citations[0].where()
    assert where.startswith("handbook.pdf, p. ") and where in window.chat.transcript.toPlainText()
    window.close()
    again = make_window(prefs, "settings.ini")
    assert again.open_memory(memory)
    wait(qtbot, lambda: [t.question for t in again.chat.turns] == ["When was BERT released?"])
    shown = again.chat.transcript.toPlainText()
    assert where in shown  # the pages the answer's wording is on
    steps = again.chat.turns[0].result.trajectory.splitlines()
    assert steps and f"Show the {len(steps)} step" in shown


# -- 5: the History names each turn by its question -------------------------------------------


def test_each_chat_turn_is_in_the_history_by_its_question(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    questions = ["What is BERT?", "When was it released?", "Who made it?"]
    for question in questions:
        ask(qtbot, window, question)
    wait(qtbot, lambda: newest_is(window, "chat", "Chat: Who made it?"))
    chats = [op.summary for op in history(qtbot, window) if op.kind == "chat"]
    assert chats == [f"Chat: {q}" for q in reversed(questions)]


# -- 7: themes ---------------------------------------------------------------------------------


def link_colour(panel: ChatPanel) -> QColor:
    """The colour the transcript draws its first link in."""
    block = panel.transcript.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            form: QTextCharFormat = it.fragment().charFormat()
            if form.isAnchor() and form.anchorHref().startswith("source:"):
                return form.foreground().color()
            it += 1
        block = block.next()
    raise AssertionError("no source link in the transcript")


@pytest.fixture
def themed():
    app = make_app([])
    yield app
    theme.choose(app, theme.SYSTEM)


def test_the_chat_follows_dark_then_light(qtbot, themed) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    theme.choose(themed, theme.DARK_CHOICE)
    answered(panel, "On Rottnest Island.", sources=["quokkas.md"])
    fact = Fact(id="f1", statement="I live in Porto.", subject="user", path="facts/porto.md")
    panel.turns[-1].number = 1
    panel.show_learned(LearnedNote.of("c1", 1, Learned(added=[fact]), "abc"))
    assert link_colour(panel) == QColor(theme.DARK["link"])
    assert theme.DARK["note_bg"] in panel.transcript.toHtml()  # the Learned box is dark
    theme.choose(themed, theme.LIGHT_CHOICE)
    QGuiApplication.processEvents()
    assert link_colour(panel) == QColor(theme.LIGHT["link"])  # was the dark theme's pale blue
    assert theme.LIGHT["note_bg"] in panel.transcript.toHtml()


# -- 14: steps in words ------------------------------------------------------------------------


def test_the_steps_are_said_in_words(qtbot) -> None:
    make_app([])
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.input.setPlainText("What is BERT?")
    panel.send.click()
    panel.add_step("reading neural/README.md")
    assert panel.live.text() == "… Reading the overview of neural/"
    trajectory = "\n".join(
        [
            '1. cat("README.md") -> # Mem (+8 lines)',
            '2. ls("neural") -> file\tREADME.md (+5 lines)',
            '3. bm25_search("bert release") -> neural/bert.md (+2 lines)',
            '4. cat("neural/bert.md", true) -> BERT was (+3 lines)',
            "answer (confidence 0.90)",
        ]
    )
    panel.show_result(
        ChatResult(
            question="What is BERT?",
            answer="A model.",
            sources=["neural/bert.md"],
            citations=[Citation(path="neural/bert.md", source="bert.pdf", pages=[3, 4])],
            trajectory=trajectory,
        )
    )
    panel.turns[-1].show_steps = True
    panel._render()
    shown = panel.transcript.toPlainText()
    for said in (
        "Read the memory's overview",
        "Looked at what neural/ holds",
        "Searched the text for “bert release”",
        "Read the original text of “neural/bert.md”",
        "Answered, confidence 90%",
    ):
        assert said in shown
    assert 'cat("' not in shown and "bm25" not in shown
    assert "bert.pdf, p. 3-4" in shown


def test_open_folders_stay_open_when_a_rollback_is_undone(qtbot, window, tmp_path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    folders = [p for p in window.tree.matches() if window.tree.item_at(p).data(0, IS_DIR_ROLE)]
    window.tree.item_at(folders[0]).setExpanded(True)  # as a click on its arrow does
    build = history(qtbot, window)[0]
    window.history.select(build.sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback"))
    assert window.tree.item_at(folders[0]) is None  # gone with the build
    window.history.select(history(qtbot, window)[0].sha)
    window.history.rollback.click()  # Undo this rollback…
    wait(qtbot, lambda: idle(window) and newest_is(window, "rollback", "Undid"))
    wait(qtbot, lambda: window.tree.item_at(folders[0]) is not None)
    assert window.tree.item_at(folders[0]).isExpanded()  # it came back collapsed


def test_the_latest_turn_stays_in_view_when_the_window_narrows(
    qtbot, window, answered_chat
) -> None:
    """Seen in the screenshots: at the end of the conversation (a fact just learned), the
    window made narrower wrapped the text onto more lines and the same scroll position
    showed an earlier answer; the learned fact was out of view. Scrolled back by the person,
    the view stays where they left it."""
    chat = answered_chat
    long = ChatResult(question="Long?", answer="A long answer sentence. " * 40, confidence=0.7)
    chat.turns += [Turn(f"Long {n}?", long, number=3 + n) for n in range(3)]
    chat._render()
    bar = chat.transcript.verticalScrollBar()
    wait(qtbot, lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    window.resize(800, 600)
    wait(qtbot, lambda: window.width() == 800)
    for _ in range(5):
        QApplication.processEvents()
    assert bar.value() == bar.maximum() > 0  # the end, wrapped onto more lines
    bar.setValue(bar.maximum() // 3)  # the person reads an earlier answer
    kept = bar.value()
    window.resize(1280, 800)
    wait(qtbot, lambda: window.width() == 1280)
    QApplication.processEvents()
    assert bar.value() == min(kept, bar.maximum())
