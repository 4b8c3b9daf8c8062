"""Asking the open memory a question in a saved conversation, then learning from it.

One task per question: `Workflow.chat` answers in the current conversation (a new one
when there is none) and commits the turn; its exploration steps are reported as they
happen. Once the answer is shown, `Workflow.learn_from_turn` runs as a second task, off the
answer's path, one at a time in the order asked; what it learned is shown under the
answer with its Undo (forgetting an added fact, or rolling back the learning's commit
through the History's rollback).

Answers and learning that arrive after the person moved to another conversation or memory
are saved all the same, but not shown in the conversation now on screen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from gam_desktop.engine.api import (
    LEARN,
    TRAILER_KIND,
    Changes,
    ChatTurn,
    Conversation,
    Learned,
    Operation,
    ResearchReport,
    Workflow,
    report_markdown,
)
from gam_desktop.gui import error_advice
from gam_desktop.gui.learned import FORGET, LearnedItem, LearnedNote
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.workers import Worker

Learning = tuple[Path, str | None, int, str, int]  # memory, conversation, turn, message, view


@dataclass
class KeptReport:
    """A research report kept in a conversation, and where it was saved in the memory (if
    it was): read back, the turn shows the report again, its Save link with it."""

    report: ResearchReport
    saved: str | None = None


class ChatController(QObject):
    """Signals: answered(turn: ChatTurn), failed(text), step(text), learning(turn number),
    learned(note: LearnedNote), conversation_started(id) when a new conversation got its
    file, rollback_requested(operation) for an Undo that rolls back a learning."""

    answered = Signal(object)
    failed = Signal(str)
    step = Signal(str)
    learning = Signal(int)
    learned = Signal(object)
    conversation_started = Signal(str)
    rollback_requested = Signal(object)

    def __init__(self, session: MemorySession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.conversation_id: str | None = None  # where the next question goes
        self.notes: dict[tuple[str, int], LearnedNote] = {}  # what saved turns taught
        self.reports: dict[tuple[str, int], KeptReport] = {}  # the research turns' reports
        self.saved_reports: dict[tuple[str, int], str] = {}  # ...as found saved in the memory
        self._view = 0  # changes whenever another conversation (or memory) is shown
        self._unsaved: Conversation | None = None  # follow-ups when saving is off
        self._queue: deque[Learning] = deque()
        # What was learned stands or is undone wherever it is undone from (this chat, the
        # History, another editor), also for the conversations not on screen.
        session.memory_changed.connect(self._follow)

    # -- the conversation answers go to -----------------------------------------------------

    def show(self, conversation_id: str | None) -> None:
        """Answer in `conversation_id` from now on (None: the next question starts one)."""
        self.conversation_id = conversation_id
        self._unsaved = None
        self._view += 1

    def _follow(self, changes: Changes) -> None:
        for note in self.notes.values():
            note.follow(changes)

    def notes_for(self, conversation_id: str) -> dict[int, LearnedNote]:
        return {turn: n for (cid, turn), n in self.notes.items() if cid == conversation_id}

    def reports_for(
        self, conversation_id: str
    ) -> dict[int, tuple[ResearchReport | None, str | None]]:
        """The reports this session kept in the conversation, by turn, with where each was
        saved; and where the reports its file keeps were found saved in the memory (None
        for the report: the panel reads it from the file)."""
        found: dict[int, tuple[ResearchReport | None, str | None]] = {
            turn: (None, path)
            for (cid, turn), path in self.saved_reports.items()
            if cid == conversation_id
        }
        for (cid, turn), kept in self.reports.items():
            if cid == conversation_id:
                found[turn] = (kept.report, kept.saved or found.get(turn, (None, None))[1])
        return found

    def reports_saved_as(self, conversation_id: str, saved: dict[int, str]) -> None:
        """Where the reports of a conversation read back were found saved, by turn: shown as
        saved after a restart too (its Save link came back, and saved a numbered copy)."""
        for key in [k for k in self.saved_reports if k[0] == conversation_id]:
            del self.saved_reports[key]
        self.saved_reports.update({(conversation_id, turn): path for turn, path in saved.items()})

    def report_saved(
        self, report: ResearchReport, path: str, conversation_id: str | None = None, turn: int = 0
    ) -> None:
        """`report` was saved as `path`; a report read back from its conversation's file
        (`conversation_id`, `turn`) is remembered from now on too."""
        for kept in self.reports.values():
            if kept.report is report:
                kept.saved = path
                return
        if conversation_id and turn:
            self.reports[(conversation_id, turn)] = KeptReport(report, path)

    # -- asking -----------------------------------------------------------------------------

    def ask(self, question: str) -> None:
        workflow = self.session.workflow
        if workflow is None:
            self.failed.emit("Open a memory first (File ▸ Open memory).")
            return
        view, conversation_id = self._view, self.conversation_id
        root = workflow.folder.root
        if conversation_id is None and self._unsaved is None:
            self._unsaved = Conversation(workflow.make_llm(workflow.chat_settings))
        unsaved = self._unsaved if conversation_id is None else None

        def job(workflow: Workflow, worker: Worker) -> ChatTurn:
            return _answer(workflow, question, conversation_id, unsaved, worker.report_step)

        def answered(turn: ChatTurn, _changes: Changes | None) -> None:
            if view == self._view:
                if turn.conversation_id and self.conversation_id is None:
                    self.conversation_id = turn.conversation_id
                    self._unsaved = None
                    self.conversation_started.emit(turn.conversation_id)
                self.answered.emit(turn)
            self._learn_later((root, turn.conversation_id, turn.turn, question, view))

        def shown(callback: Callable[[str], None], text: str) -> None:
            if view == self._view:
                callback(text)

        self.session.write_quietly(
            "chat",
            job,
            answered,
            lambda exc: shown(self.failed.emit, error_advice.describe(exc).full()),
            on_step=lambda step: shown(self.step.emit, step.describe()),
            cancelled=lambda: shown(self.failed.emit, "Stopped."),
        )

    def cancel(self) -> None:
        for task in self.session.operations.running("chat"):
            task.cancel.cancel()

    def keep_report(self, report: ResearchReport) -> None:
        """A research report is a turn of the conversation on screen too (a new one when
        there is none), saved as an answer given elsewhere: it vanished from the chat at the
        next start. Nothing is learned from it (the question was a question)."""
        if self.session.workflow is None:
            return
        view, conversation_id = self._view, self.conversation_id
        # the report itself kept with its text: after a restart it can still be saved
        answer = report_markdown(report, title=False, level=4)
        sources = list(report.sources)

        def kept(turn: ChatTurn, _changes: Changes | None) -> None:
            if turn.conversation_id:
                self.reports[(turn.conversation_id, turn.turn)] = KeptReport(report)
            if view == self._view and turn.conversation_id and self.conversation_id is None:
                self.conversation_id = turn.conversation_id
                self.conversation_started.emit(turn.conversation_id)

        self.session.write_quietly(
            "chat",
            lambda workflow, _worker: workflow.save_turn(
                report.question, answer, conversation_id, sources=sources, report=report.kept_form()
            ),
            kept,
            lambda exc: self.session.status.emit(
                f"The report was not kept in the conversation: {error_advice.describe(exc).text}"
            ),
        )

    # -- learning, after the answer ---------------------------------------------------------

    def _learn_later(self, learning: Learning) -> None:
        self._queue.append(learning)
        if not self.session.operations.running("learn"):
            self._learn_next()

    def _learn_next(self) -> None:
        workflow = self.session.workflow
        while self._queue:
            root, conversation_id, turn, message, view = self._queue.popleft()
            if workflow is not None and workflow.folder.root == root:
                break
        else:
            return  # nothing left, or only turns of a memory no longer open
        if view == self._view:
            self.learning.emit(turn)

        def learned(result: Learned, changes: Changes | None) -> None:
            commit = changes.commit if changes is not None else None
            note = LearnedNote.of(conversation_id, turn, result, commit)
            if conversation_id and (note.items or note.problem):
                self.notes[(conversation_id, turn)] = note
            if result:
                self.session.status.emit(f"{result.summary()} from what you said")
            if view == self._view or (conversation_id and conversation_id == self.conversation_id):
                self.learned.emit(note)
            self._learn_next()

        def failed(error: Exception) -> None:
            learned(Learned(problem=error_advice.describe(error).text), None)

        self.session.write_quietly(
            "learn",
            lambda workflow, _worker: workflow.learn_from_turn(conversation_id, turn, message),
            learned,
            failed,
            cancelled=self._learn_next,
        )

    # -- undoing what was learned -----------------------------------------------------------

    def undo(self, note: LearnedNote, item: LearnedItem) -> None:
        """Forget an added fact (a commit of its own), or roll back the whole learning
        (the History's rollback, which says what it will change and asks first)."""
        if item.undo == FORGET:
            self.session.write(
                "forget",
                lambda workflow: workflow.forget_fact(item.fact_id),
                "Forgetting…",
                lambda _changes: f"Forgot: {item.statement}",
            )
        elif note.commit is not None:
            said = "; ".join(i.text for i in note.items)
            said = said if len(said) <= 160 else said[:159].rsplit(" ", 1)[0] + "…"
            summary = f"{note.summary}: {said}"  # what the rollback will ask about
            self.rollback_requested.emit(Operation(note.commit, 0, summary, {TRAILER_KIND: LEARN}))


def _answer(
    workflow: Workflow,
    question: str,
    conversation_id: str | None,
    unsaved: Conversation | None,
    on_step: Callable[[object], None],
) -> ChatTurn:
    """On the task's thread: the answer in the saved conversation, or a new one. When the
    memory saves no conversations, a new one is kept in `unsaved` (in RAM) so follow-ups
    still have their context: Workflow.chat starts afresh each time it is given no id."""
    meta = workflow.folder.read_meta()
    if unsaved is not None and meta is not None and not meta.save_conversations:
        result = workflow.request(question, conversation=unsaved, on_step=on_step)
        return ChatTurn(result, None, None, unsaved.total_turns)
    return workflow.chat(question, conversation_id, on_step=on_step)
