"""The chat panel: questions, live exploration steps, answers with sources and confidence.
A source's link follows its file when the memory changes: to its new place after a move,
shown as removed once it is gone (and a link again if it comes back)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.models import ChatResult, Citation
from gam_desktop.engine.store.changes import Changes


class QuestionBox(QPlainTextEdit):
    """Enter sends; Shift+Enter breaks the line. Signals: submitted()."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


@dataclass
class Turn:
    question: str
    result: ChatResult | None = None
    error: str | None = None
    steps: list[str] = field(default_factory=list)
    show_steps: bool = False


def markdown_html(text: str) -> str:
    document = QTextDocument()
    document.setMarkdown(text)
    body = document.toHtml()
    return body.split("<body", 1)[-1].split(">", 1)[-1].rsplit("</body>", 1)[0]


class ChatPanel(QWidget):
    """Signals: asked(question), cancel_requested(), new_conversation(),
    source_clicked(path)."""

    asked = Signal(str)
    cancel_requested = Signal()
    new_conversation = Signal()
    source_clicked = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[Turn] = []
        # A cited path -> where its file is now, and whether it is still there.
        self._where: dict[str, tuple[str, bool]] = {}
        self.transcript = QTextBrowser()
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        self.transcript.setPlaceholderText("Ask a question about your memory.")
        self.live = QLabel()
        self.live.setObjectName("liveStep")
        self.input = QuestionBox()
        self.input.setPlaceholderText("Ask a question… (Enter sends, Shift+Enter for a new line)")
        self.input.setFixedHeight(72)
        self.input.submitted.connect(self._send)
        self.send = QPushButton("Ask")
        self.send.setDefault(True)
        self.send.clicked.connect(self._send)
        self.stop = QPushButton("Stop")
        self.stop.clicked.connect(self.cancel_requested)
        self.stop.hide()
        self.copy = QPushButton("Copy answer")
        self.copy.clicked.connect(self.copy_answer)
        self.fresh = QPushButton("New conversation")
        self.fresh.clicked.connect(self._new)
        buttons = QHBoxLayout()
        for widget in (self.fresh, self.copy):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        buttons.addWidget(self.stop)
        buttons.addWidget(self.send)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.live)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        self.set_busy(False)

    # -- driven by the main window ------------------------------------------------------

    def set_busy(self, busy: bool) -> None:
        self.send.setEnabled(not busy)
        self.stop.setVisible(busy)
        self.live.setVisible(busy)
        if not busy:
            self.live.clear()

    def add_step(self, text: str) -> None:
        if self.turns:
            self.turns[-1].steps.append(text)
        self.live.setText(f"… {text}")

    def show_result(self, result: ChatResult) -> None:
        self.turns[-1].result = result
        self.set_busy(False)
        self._render()

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
        if followed:
            self._render()

    def _cited(self) -> set[str]:
        results = [turn.result for turn in self.turns if turn.result is not None]
        return {c.path for r in results for c in r.citations} | {
            s for r in results for s in r.sources
        }

    def copy_answer(self) -> None:
        answers = [t.result.answer for t in self.turns if t.result]
        if answers:
            QGuiApplication.clipboard().setText(answers[-1])

    # -- internals ------------------------------------------------------------------------

    def _send(self) -> None:
        question = self.input.toPlainText().strip()
        if not question or not self.send.isEnabled():
            return
        self.input.clear()
        self.turns.append(Turn(question))
        self.set_busy(True)
        self.live.setText("… thinking")
        self._render()
        self.asked.emit(question)

    def _new(self) -> None:
        self.turns.clear()
        self._where.clear()
        self._render()
        self.new_conversation.emit()

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "source":
            self.source_clicked.emit(url.path())
        elif url.scheme() == "steps":
            turn = self.turns[int(url.path())]
            turn.show_steps = not turn.show_steps
            self._render()

    def _render(self) -> None:
        parts = [self._turn_html(i, turn) for i, turn in enumerate(self.turns)]
        self.transcript.setHtml("".join(parts))
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _turn_html(self, index: int, turn: Turn) -> str:
        out = [f'<p style="margin-top:14px"><b>You:</b> {html.escape(turn.question)}</p>']
        if turn.error:
            out.append(f'<p style="color:#b3261e">{html.escape(turn.error)}</p>')
        result = turn.result
        if result is None:
            return "".join(out)
        out.append(markdown_html(result.answer))
        confidence = round(result.confidence * 100)
        colour = "#1b7f3a" if confidence >= 60 else "#a86400" if confidence >= 30 else "#b3261e"
        links = ", ".join(self._source_link(c) for c in result.citations) or ", ".join(
            self._path_link(s) for s in result.sources
        )
        steps = result.trajectory.splitlines()
        label = "Hide" if turn.show_steps else "Show"
        out.append(
            f'<p style="color:#555">Sources: {links or "none"}<br>'
            f'<span style="color:{colour}">Confidence {confidence}%</span> · '
            f'<a href="steps:{index}">{label} the {len(steps)} steps</a></p>'
        )
        if turn.show_steps:
            rows = "<br>".join(html.escape(s) for s in steps)
            out.append(f'<p style="font-family:monospace;color:#555">{rows}</p>')
        return "".join(out)

    def _source_link(self, citation: Citation) -> str:
        """A cited memory as a link, with the document (and pages) its wording comes from."""
        link = self._path_link(citation.path)
        where = citation.where()
        return f'{link} <span style="color:#777">({html.escape(where)})</span>' if where else link

    def _path_link(self, cited: str) -> str:
        """A link to where the cited file is now, or its name marked removed."""
        path, present = self._where.get(cited, (cited, True))
        if not present:
            return f'<span style="color:#8a8f98">{html.escape(path)} (removed)</span>'
        return f'<a href="source:{html.escape(path)}">{html.escape(path)}</a>'
