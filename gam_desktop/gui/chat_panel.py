"""The chat panel: one conversation's questions, live exploration steps, answers with
sources and confidence, research reports (the Research switch: the plan live with its
sub-questions ticked as they are answered, then the report with clickable citations and
Save to memory), and under an answer the "Learned" line (the facts that turn added,
updated or removed, each with its Undo). A source's link follows its file when the memory
changes: to its new place after a move, shown as removed once it is gone (and a link again
if it comes back); a learned fact is shown undone once its file went."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from math import ceil

from PySide6.QtCore import QEvent, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QGuiApplication,
    QKeyEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import (
    STATEMENT,
    Changes,
    ChatResult,
    Citation,
    ConversationRecord,
    ResearchReport,
    ResearchStep,
    is_report,
    plural,
    report_markdown,
)
from gam_desktop.engine.api import Turn as SavedTurn
from gam_desktop.gui import local_time, theme, words
from gam_desktop.gui.headings import tame_headings
from gam_desktop.gui.labels import ElidedLabel, never_widens
from gam_desktop.gui.learned import LearnedItem, LearnedNote

NEW_HINT = (
    "Ask a question about your memory. The conversation is saved in this memory and listed "
    "on the left; what you tell it about yourself is learned as facts."
)
PLACEHOLDER = "Ask a question… (Enter sends, Shift+Enter for a new line)"
UNSAVED_HINT = (
    "Ask a question about your memory. Saving conversations is off for this memory: this "
    "one is kept only until you start another or close the app."
)


class QuestionBox(QPlainTextEdit):
    """Enter sends; Shift+Enter breaks the line. Three lines high in its own font (not a
    fixed height in pixels: a larger font would not fit). Signals: submitted()."""

    submitted = Signal()
    LINES = 3

    def sizeHint(self) -> QSize:
        self.ensurePolished()  # the stylesheet's font and padding
        frame = self.contentsMargins()  # the frame and the stylesheet's padding
        text = self.fontMetrics().lineSpacing() * self.LINES
        height = text + 2 * self.document().documentMargin() + frame.top() + frame.bottom()
        return QSize(super().sizeHint().width(), ceil(height))

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), self.sizeHint().height())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


def fragment(
    document: QTextDocument, wanted: Callable[[QTextCharFormat], bool], after: int = 0
) -> tuple[int, int] | None:
    """Where the first piece of `document` from `after` on whose format is `wanted` starts
    and ends."""
    block = document.findBlock(after)
    while block.isValid():
        pieces = block.begin()
        while not pieces.atEnd():
            piece = pieces.fragment()
            if piece.isValid() and piece.position() >= after and wanted(piece.charFormat()):
                return piece.position(), piece.position() + piece.length()
            pieces += 1
        block = block.next()
    return None


class Transcript(QTextBrowser):
    """The conversation: in the Tab chain, its links reached with Tab (Shift+Tab back) and
    followed with Enter. Tab into it stops on the conversation itself, then goes to the
    latest turn's links (`start`), the answer just given, not the first source of the
    conversation's first answer; Shift+Tab is the same way back: from the question box to
    the latest turn's last link, back through its links to the conversation itself, then
    out (it went from the question box to the conversations list, past the answer)."""

    def __init__(self) -> None:
        super().__init__()
        self.start = 0  # where the latest turn begins
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        # The end of the conversation stays in view while it is: a narrower window wraps
        # the text onto more lines (laid out bit by bit, after the resize), and the same
        # scroll position then showed an earlier answer (a fact just learned, out of view).
        self.at_end = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(lambda value: setattr(self, "at_end", value >= bar.maximum()))
        bar.rangeChanged.connect(lambda _low, high: bar.setValue(high) if self.at_end else None)

    def focusNextPrevChild(self, next: bool) -> bool:
        if not self.hasFocus():
            return super().focusNextPrevChild(next)
        cursor = self.textCursor()
        if next and not cursor.hasSelection() and self.start:
            link = fragment(self.document(), lambda f: bool(f.anchorHref()), self.start)
            if link is not None:
                self.select(*link)
                return True
        if next:
            return super().focusNextPrevChild(next)
        if not cursor.hasSelection():  # on the conversation itself: out, to what is before
            return QWidget.focusNextPrevChild(self, False)
        before = [link for link in self.latest_links() if link[0] < cursor.selectionStart()]
        if before:
            self.select(*before[-1])
        else:  # back from the latest turn's first link: the conversation itself
            cursor.clearSelection()
            self.setTextCursor(cursor)
        return True

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        if event.reason() == Qt.FocusReason.BacktabFocusReason:  # back from the question
            links = self.latest_links()
            if links:
                self.select(*links[-1])

    def latest_links(self) -> list[tuple[int, int]]:
        """Where each link of the latest turn starts and ends, in order."""
        links: list[tuple[int, int]] = []
        found = fragment(self.document(), lambda f: bool(f.anchorHref()), self.start)
        while found is not None:
            links.append(found)
            found = fragment(self.document(), lambda f: bool(f.anchorHref()), found[1])
        return links

    def select(self, start: int, end: int) -> None:
        """Put the keyboard on the link from `start` to `end` (Enter follows it)."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()


@dataclass
class Turn:
    question: str
    result: ChatResult | None = None
    error: str | None = None
    steps: list[str] = field(default_factory=list)
    show_steps: bool = False
    number: int = 0  # its number in the saved conversation (0: not saved)
    when: datetime | None = None
    restored: bool = False  # read back from the conversation's file (no steps kept)
    note: LearnedNote | None = None  # what it taught
    learning: bool = False  # being learned from now
    research: bool = False  # asked with the Research switch on
    plan: list[tuple[str, bool]] = field(default_factory=list)  # sub-question, answered
    report: ResearchReport | None = None
    saved: str | None = None  # where the report was saved in the memory


def markdown_html(text: str) -> str:
    document = QTextDocument()
    document.setMarkdown(text)
    tame_headings(document)
    body = document.toHtml()
    return body.split("<body", 1)[-1].split(">", 1)[-1].rsplit("</body>", 1)[0]


def _turn_result(turn: SavedTurn) -> ChatResult:
    """A saved turn as the answer it was: its sources with their documents and pages, and
    the steps that found it (kept in the record since issue 39; older records have none)."""
    return ChatResult(
        question=turn.question,
        answer=turn.answer,
        sources=turn.sources,
        citations=turn.citations,
        confidence=turn.confidence or 0.0,
        trajectory="\n".join(turn.steps),
        notes=STATEMENT if turn.statement else None,
    )


class ChatPanel(QWidget):
    """Signals: asked(question), research_asked(question), cancel_requested(),
    source_clicked(path), undo_requested(note, item), save_requested(report)."""

    asked = Signal(str)
    research_asked = Signal(str)
    save_requested = Signal(object)
    cancel_requested = Signal()
    source_clicked = Signal(str)
    undo_requested = Signal(object, object)
    conversations_toggled = Signal(bool)  # the list beside the chat: shown or hidden

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[Turn] = []
        self.conversation_id: str | None = None  # the saved conversation shown, if any
        self._hint = NEW_HINT  # shown while the conversation is empty
        self.not_ready: str | None = None  # why nothing can be asked yet (no memory, no LLM)
        self._busy = False
        # A cited path -> where its file is now, and whether it is still there.
        self._where: dict[str, tuple[str, bool]] = {}
        self._turn_wanted: tuple[str, int] | None = None  # scrolled to once it is shown
        self.heading = QLabel()
        self.heading.setObjectName("conversationTitle")
        self.heading.setWordWrap(True)
        never_widens(self.heading)  # a question naming a long path
        # The conversations list beside the chat, shown or hidden: in a window 800 px wide
        # it took 120 px of the chat's room, and links broke mid-word.
        self.list_toggle = QToolButton()
        self.list_toggle.setObjectName("conversationsToggle")
        self.list_toggle.setText("☰")
        self.list_toggle.setCheckable(True)
        self.list_toggle.setAccessibleName("Conversations list")
        self.list_toggle.toggled.connect(self._list_toggled)
        self._list_toggled(False, announce=False)
        self.caption = QLabel()
        self.caption.setObjectName("conversationCaption")
        self.caption.setWordWrap(True)
        never_widens(self.caption)
        self.transcript = Transcript()
        self.transcript.setAccessibleName("Conversation")
        self.transcript.setAccessibleDescription(
            "Questions and answers; Tab moves through the answers' sources and steps"
        )
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        # one line cut with "…": a step quoting the whole question widened the window
        self.live = ElidedLabel()
        self.live.setObjectName("liveStep")
        self.input = QuestionBox()
        self.input.setPlaceholderText(PLACEHOLDER)
        self.input.setAccessibleName("Question")
        self.input.setAccessibleDescription("Enter sends it, Shift+Enter starts a new line")
        self.input.setTabChangesFocus(True)  # Tab goes on to the buttons, as in a form
        self.input.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.input.submitted.connect(self._send)
        self.send = QPushButton("Ask")
        self.send.setDefault(True)
        self.send.clicked.connect(self._send)
        self.send.setAccessibleDescription("Send the question (Enter in the question box)")
        self.stop = QPushButton("Stop")
        self.stop.setAccessibleName("Stop answering")
        self.stop.clicked.connect(self.cancel_requested)
        self.stop.hide()
        self.copy = QPushButton("Copy")  # short: the chat fits a window 800 px wide
        self.copy.setAccessibleName("Copy answer")
        self.copy.setToolTip("Copy the last answer to the clipboard")
        self.copy.setAccessibleDescription("Copy the last answer to the clipboard")
        self.copy.clicked.connect(self.copy_answer)
        self.research = QCheckBox("Research")
        self.research.setToolTip(
            "Research the question across the memory: sub-questions searched and checked, "
            "ending in a report whose every claim cites its file"
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy)
        buttons.addWidget(self.research)
        buttons.addStretch(1)
        buttons.addWidget(self.stop)
        buttons.addWidget(self.send)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        top = QHBoxLayout()
        top.addWidget(self.list_toggle, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.heading, 1)
        layout.addLayout(top)
        layout.addWidget(self.caption)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.live)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        self.set_busy(False)
        self.new_conversation()

    # -- driven by the main window ------------------------------------------------------

    def reading_order(self) -> None:
        """The window's Tab order through the chat as it reads, top to bottom: the
        conversation (then the latest answer's links), the question box, its buttons; and
        Shift+Tab the same way back. With the links after Ask, Shift+Tab from the question
        box skipped the conversation. (Called once the panel is in its window.)"""
        chain = [self.transcript, self.input, self.copy, self.research, self.stop, self.send]
        for at in range(len(chain) - 1):
            QWidget.setTabOrder(chain[at], chain[at + 1])

    def show_list_shown(self, shown: bool) -> None:
        """The toggle says whether the conversations list is shown (not a click on it)."""
        self.list_toggle.blockSignals(True)
        self.list_toggle.setChecked(shown)
        self.list_toggle.blockSignals(False)
        self._list_toggled(shown, announce=False)

    def _list_toggled(self, shown: bool, announce: bool = True) -> None:
        tip = "Hide the conversations list" if shown else "Show the conversations list"
        self.list_toggle.setToolTip(tip)
        self.list_toggle.setAccessibleDescription(tip)
        if announce:
            self.conversations_toggled.emit(shown)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.stop.setVisible(busy)
        self.live.setVisible(busy)
        if not busy:
            self.live.clear()
        self._enable()

    def set_ready(self, not_ready: str | None) -> None:
        """Whether a question can be asked: `not_ready` says why not (no memory open, no LLM
        set up), in the conversation and the question box, until there is one. Ask, Copy
        and the question box were there to use before either existed."""
        if not_ready == self.not_ready:
            return
        self.not_ready = not_ready
        self.input.setPlaceholderText(not_ready or PLACEHOLDER)
        self._enable()
        self._render()

    def _enable(self) -> None:
        ready = self.not_ready is None
        self.input.setEnabled(ready)
        self.research.setEnabled(ready)
        self.send.setEnabled(ready and not self._busy)
        answered = any(t.result is not None or t.report is not None for t in self.turns)
        self.copy.setEnabled(answered)

    def add_step(self, text: str) -> None:
        if self.turns:
            self.turns[-1].steps.append(text)
        self.live.setText(f"… {words.live_step(text)}")

    def show_research_step(self, step: ResearchStep) -> None:
        """A research step: the plan so far (ticked as answered) and what it is doing."""
        if not self.turns or not self.turns[-1].research:
            return
        turn = self.turns[-1]
        turn.plan = list(zip(step.sub_questions, step.answered, strict=False))
        turn.steps.append(step.message)
        self.live.setText(f"… {step.message}")
        self._render()

    def show_report(self, report: ResearchReport) -> None:
        self.turns[-1].report = report
        self.set_busy(False)
        self._render()

    def show_saved(self, report: ResearchReport, path: str) -> None:
        for turn in self.turns:
            if turn.report is report:
                turn.saved = path
        self._render()

    def show_result(
        self, result: ChatResult, number: int = 0, conversation_id: str | None = None
    ) -> None:
        """The answer to the last question: turn `number` of the saved conversation
        `conversation_id` (0 and None when it was not saved)."""
        turn = self.turns[-1]
        turn.result, turn.number = result, number
        if conversation_id is not None:
            self.conversation_id = conversation_id
        self.set_busy(False)
        self._render()

    def new_conversation(self, saving: bool = True) -> None:
        """An empty conversation: the next question starts one."""
        self.turns.clear()
        self._where.clear()
        self.conversation_id = None
        self._hint = NEW_HINT if saving else UNSAVED_HINT
        self.heading.setText("New conversation")
        self.caption.setText(
            "Saved in this memory once you ask."
            if saving
            else "Not saved: saving conversations is off for this memory (Memory menu)."
        )
        self.set_busy(False)
        self._render()

    def show_conversation(
        self,
        record: ConversationRecord,
        notes: dict[int, LearnedNote] | None = None,
        reports: dict[int, tuple[ResearchReport | None, str | None]] | None = None,
    ) -> None:
        """A saved conversation's turns, read from its file, to continue it; `notes`: what
        its turns taught, by turn number (those learned while the app was open); `reports`:
        the research reports kept in it while the app was open, by turn number, with where
        each was saved. A report is shown as a report with its Save link, also after a
        restart (the file keeps it); one whose file kept only its text (older files) is
        shown as it was written, its sources once."""
        notes, reports = notes or {}, reports or {}
        self.turns = []
        for number, t in enumerate(record.turns, 1):
            report, saved = reports.get(number, (None, None))
            report = report or ResearchReport.from_kept(t.report)
            self.turns.append(
                Turn(
                    t.question,
                    _turn_result(t),
                    number=number,
                    when=t.time,
                    restored=True,
                    note=notes.get(number),
                    research=report is not None or is_report(t.answer),
                    report=report,
                    saved=saved,
                )
            )
        self._where.clear()
        self.conversation_id = record.id
        self.set_title(record.title, len(record.turns), record.started)
        self.set_busy(False)
        self._render()

    def set_title(self, title: str, turns: int, started: datetime | None) -> None:
        self.heading.setText(title)
        since = f" · started {local_time.when(started, in_sentence=True)}" if started else ""
        self.caption.setText(f"Saved in this memory · {plural(turns, 'turn')}{since}")

    def show_learning(self, number: int) -> None:
        """Turn `number` is being learned from."""
        turn = self._turn(number)
        if turn is not None:
            turn.learning = True
            self._render()

    def show_learned(self, note: LearnedNote) -> None:
        """What turn `note.turn` taught (nothing shown when it taught nothing)."""
        turn = self._turn(note.turn)
        if turn is not None:
            turn.learning = False
            turn.note = note if note.items or note.problem else None
            self._render()

    def _turn(self, number: int) -> Turn | None:
        return next((t for t in self.turns if number and t.number == number), None)

    def show_error(self, text: str) -> None:
        self.turns[-1].error = text
        self.set_busy(False)
        self._render()

    def memory_changed(self, changes: Changes) -> None:
        """Follow the cited files that moved, went or came back."""
        followed = False
        for cited in self._cited():
            now, present = self._where.get(cited, (cited, True))
            moved = changes.moved_to(now) if present else None
            if moved:
                self._where[cited] = (moved, True)
            elif present and now in changes.removed:
                self._where[cited] = (now, False)
            elif not present and now in changes.added | changes.modified:
                self._where[cited] = (now, True)
            else:
                continue
            followed = True
        for turn in self.turns:
            note = turn.note
            if note is not None and (note.follow(changes) or note.touched(changes)):
                followed = True
        if followed:
            self._render()

    def _cited(self) -> set[str]:
        results = [turn.result for turn in self.turns if turn.result is not None]
        return {c.path for r in results for c in r.citations} | {
            s for r in results for s in r.sources
        }

    def changeEvent(self, event: QEvent) -> None:
        """Light or dark chosen: the transcript is drawn again, its links and the Learned
        box in the new colours (Qt fixes a link's colour when the HTML is set)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._render()

    def copy_answer(self) -> None:
        answers = [t.result.answer for t in self.turns if t.result] + [
            report_markdown(t.report) for t in self.turns[-1:] if t.report
        ]
        if answers:
            QGuiApplication.clipboard().setText(answers[-1])

    # -- internals ------------------------------------------------------------------------

    def _send(self) -> None:
        question = self.input.toPlainText().strip()
        if not question or not self.send.isEnabled():
            return
        self.input.clear()
        research = self.research.isChecked()
        self.turns.append(Turn(question, research=research))
        self.set_busy(True)
        self.live.setText("… planning the research" if research else "… thinking")
        self._render()
        (self.research_asked if research else self.asked).emit(question)

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "source":
            self.source_clicked.emit(url.path())
        elif url.scheme() == "steps":
            turn = self.turns[int(url.path())]
            turn.show_steps = not turn.show_steps
            self._render()
        elif url.scheme() == "save":
            report = self.turns[int(url.path())].report
            if report is not None:
                self.save_requested.emit(report)
        elif not url.scheme() and url.path():  # a saved report's citation, read back
            self.source_clicked.emit(url.path())
        elif url.scheme() == "undo":
            index, item = (int(part) for part in url.path().split("/"))
            note = self.turns[index].note
            if note is not None and note.can_undo(note.items[item]):
                self.undo_requested.emit(note, note.items[item])

    def scroll_to_turn(self, conversation_id: str, number: int) -> None:
        """Show turn `number` of the conversation once it is on screen (the Facts view's
        link to the turn that stated a fact)."""
        self._turn_wanted = (conversation_id, number)
        self._scroll_to_wanted()

    def _scroll_to_wanted(self) -> bool:
        wanted = self._turn_wanted
        if wanted is None or wanted[0] != self.conversation_id or self._turn(wanted[1]) is None:
            return False
        self._turn_wanted = None
        self.transcript.scrollToAnchor(f"turn-{wanted[1]}")
        return True

    def _render(self) -> None:
        """The transcript drawn again. The keyboard's link stays where it was (Enter on
        "Show the steps" sent the next Tab back to the first link of the conversation);
        otherwise Tab goes first to the latest turn's links, the answer just given."""
        kept = self._focused_link() if self.transcript.hasFocus() else None
        parts = [self._turn_html(i, turn) for i, turn in enumerate(self.turns)]
        if not parts:  # an empty conversation: what to do, and what becomes of it
            hint = self.not_ready or self._hint
            parts = [f'<p style="color:#8a8f98">{html.escape(hint)}</p>']
        self.transcript.setHtml("".join(parts))
        latest = self._fragment(lambda f: f"q-{len(self.turns) - 1}" in f.anchorNames())
        self.transcript.start = latest[0] if latest is not None else 0
        if kept and self._select_link(kept):
            return
        if not self._scroll_to_wanted():
            bar = self.transcript.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _focused_link(self) -> str | None:
        """The href of the link the keyboard is on, if it is on one."""
        cursor = self.transcript.textCursor()
        if not cursor.hasSelection():
            return None
        start = QTextCursor(self.transcript.document())
        start.setPosition(cursor.selectionStart() + 1)  # (the format before the position)
        return start.charFormat().anchorHref() or None

    def _fragment(self, wanted: Callable[[QTextCharFormat], bool]) -> tuple[int, int] | None:
        return fragment(self.transcript.document(), wanted)

    def _select_link(self, href: str) -> bool:
        found = self._fragment(lambda f: f.isAnchor() and f.anchorHref() == href)
        if found is not None:
            self.transcript.select(*found)
        return found is not None

    def _turn_html(self, index: int, turn: Turn) -> str:
        when = (
            f' <span style="color:#8a8f98">· {local_time.when(turn.when)}</span>'
            if turn.when
            else ""
        )
        anchor = f'<a name="q-{index}"></a>'  # where Tab starts: the latest turn's
        anchor += f'<a name="turn-{turn.number}"></a>' if turn.number else ""
        out = [
            f'<p style="margin-top:14px">{anchor}<b>You:</b> {html.escape(turn.question)}{when}</p>'
        ]
        if turn.error:
            said = html.escape(turn.error).replace("\n", "<br>")  # what happened, then advice
            out.append(f'<p style="color:{theme.current()["diff_del"]}">{said}</p>')
        if turn.research:
            out.append(self._research_html(index, turn))
            return "".join(out)
        result = turn.result
        if result is None:
            return "".join(out)
        out.append(markdown_html(result.answer))
        out.append(self._about_html(index, turn, result))
        if turn.show_steps:
            rows = "<br>".join(html.escape(s) for s in words.steps(result.trajectory))
            out.append(f'<p style="color:#8a8f98">{rows}</p>')
        out.append(self._learned_html(index, turn))
        return "".join(out)

    def _about_html(self, index: int, turn: Turn, result: ChatResult) -> str:
        """Sources, confidence and the steps' link; nothing for a statement (told, not
        asked: "Sources: none · Confidence 100%" said nothing true)."""
        steps = words.steps(result.trajectory)
        if result.notes == STATEMENT or (turn.restored and not result.sources and not steps):
            return ""  # (a record from before statements were marked: nothing was looked up)
        links = ", ".join(self._source_link(c) for c in result.citations) or ", ".join(
            self._path_link(s) for s in result.sources
        )
        about = [f"Sources: {links or 'none'}"]
        confidence = round(result.confidence * 100)
        colours = theme.current()  # readable on dark too (the light theme's green was not)
        colour = (
            colours["diff_add"]
            if confidence >= 60
            else colours["warning_text"]
            if confidence >= 30
            else colours["diff_del"]
        )
        facts = [f'<span style="color:{colour}">Confidence {confidence}%</span>']
        if steps:
            label = "Hide" if turn.show_steps else "Show"
            facts.append(f'<a href="steps:{index}">{label} the {plural(len(steps), "step")}</a>')
        elif turn.restored and not result.confidence:
            facts = []
        if facts:
            about.append(" · ".join(facts))
        return f'<p style="color:#8a8f98">{"<br>".join(about)}</p>'

    def _research_html(self, index: int, turn: Turn) -> str:
        """The plan while it runs; then the report, its citations links to the files."""
        report = turn.report
        if report is None and turn.result is not None:  # read back: the report as kept
            return markdown_html(turn.result.answer)
        if report is None:
            rows = [
                f"{'✓' if answered else '○'} {html.escape(question)}"
                for question, answered in turn.plan
            ]
            plan = "<br>".join(rows) or "<i>Planning…</i>"
            return f'<p style="color:#6b7280"><b>Research plan</b><br>{plan}</p>'
        text = report_markdown(report, link_prefix="source:", title=False, level=4)
        if turn.saved:
            kept = f"Saved as {self._path_link(turn.saved)}"
        else:
            kept = f'<a href="save:{index}">Save to memory</a>'
        # the model's reading and writing in words, not "4,210 tokens"
        size = f" · {words.approximate_words(report.tokens)} read and written" * bool(report.tokens)
        figures = f"{plural(report.llm_calls, 'LLM call')}{size} · {report.seconds:.0f} s"
        return markdown_html(text) + f'<p style="color:#8a8f98">{kept} · {figures}</p>'

    def _learned_html(self, index: int, turn: Turn) -> str:
        """The "Learned" line: each fact with its Undo, or why nothing was learned."""
        grey = 'style="color:#6b7280"'
        if turn.learning:
            return f"<p {grey}><i>Learning from what you said…</i></p>"
        note = turn.note
        if note is None:
            return ""
        if not note.items:
            return f"<p {grey}>Nothing learned: {html.escape(note.problem or '')}</p>"
        rows = [self._learned_item(index, i, note, item) for i, item in enumerate(note.items)]
        colours = theme.current()  # the box follows light and dark (it stayed near-white)
        return (
            f'<p style="color:{colours["note_text"]};background-color:{colours["note_bg"]}">'
            f"<b>Learned</b> from what you said:<br>{'<br>'.join(rows)}</p>"
        )

    def _learned_item(self, index: int, number: int, note: LearnedNote, item: LearnedItem) -> str:
        text = f"{item.sign} {html.escape(item.text)}"
        if item.undone:
            return f'<span style="color:#8a8f98"><s>{text}</s> (undone)</span>'
        if not note.can_undo(item):
            return text
        label = html.escape(note.undo_label(item))
        return f'{text} · <a href="undo:{index}/{number}">{label}</a>'

    def _source_link(self, citation: Citation) -> str:
        """A cited memory as a link, with the document (and pages) its wording comes from."""
        link = self._path_link(citation.path)
        where = citation.where()
        if not where:
            return link
        return f'{link} <span style="color:#8a8f98">({html.escape(where)})</span>'

    def _path_link(self, cited: str) -> str:
        """A link to where the cited file is now, or its name marked removed."""
        path, present = self._where.get(cited, (cited, True))
        if not present:
            return f'<span style="color:#8a8f98">{html.escape(path)} (removed)</span>'
        return f'<a href="source:{html.escape(path)}">{html.escape(path)}</a>'
