"""Questions to the memory: one answered from its passages (engine/answering), one asked in
a saved conversation (the turn is committed), a research report and saving it. Answering
reads only; the conversation's turn and the saved report report what they changed."""

from __future__ import annotations

from gam_desktop.engine.answering import pipeline as answering
from gam_desktop.engine.answering.exploring import Explorer
from gam_desktop.engine.answering.pipeline import Step, StepCallback
from gam_desktop.engine.chats.conversation import Conversation, working_memory
from gam_desktop.engine.chats.intent import is_statement, question_part
from gam_desktop.engine.chats.record import Turn
from gam_desktop.engine.history.log import TRAILER_KIND
from gam_desktop.engine.models import ChatResult, utc_now
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.operations.conversations import (
    ChatTurn,
    ConversationOperations,
    EmptyQuestion,
)
from gam_desktop.engine.operations.ingest import IngestOperations
from gam_desktop.engine.research import save as research_files
from gam_desktop.engine.research.agent import ResearchAgent, ResearchCallback
from gam_desktop.engine.research.budget import Limits
from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.engine.store.changes import RESEARCH, Changes
from gam_desktop.engine.store.folder import NotAMemoryError

STATEMENT = "a statement, not a question"  # the notes of a turn that told, not asked


class AskOperations:
    """Questions; `chat` records its turn through `conversations` and makes an empty
    folder a memory at its first turn through `ingest`."""

    def __init__(
        self,
        context: OperationContext,
        ingest: IngestOperations,
        conversations: ConversationOperations,
    ) -> None:
        self.context = context
        self.ingest = ingest
        self.conversations = conversations

    def request(
        self,
        user_prompt: str,
        system_prompt: str | None = None,
        max_iterations: int = 10,
        conversation: Conversation | None = None,
        on_step: StepCallback | None = None,
        explore: bool = False,
    ) -> ChatResult:
        """Answer a question from the memory's best passages, read by the model and checked
        against them (engine/answering); with `explore`, the model browses the memory with
        tools first (`max_iterations` calls, `system_prompt` its instructions), and the
        passages are read when that gives no answer that holds. A follow-up
        question is understood in the context of `conversation`, which the answer is added
        to."""
        ctx = self.context
        if not ctx.folder.is_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory (no .gam_meta.json)")
        tools = ctx.search_tools()
        tools.corpus.refresh_if_stale(max_age=0)
        steps: list[str] = []

        def report(line: str) -> None:
            steps.append(line)
            if on_step is not None and line:
                on_step(Step(len(steps), line))

        evidence = answering.Evidence(
            question_part(user_prompt),  # "I moved. What is …?" asks only its question
            tools,
            ctx.chat_llm(),
            ctx.cancel,
            conversation.context_messages() if conversation is not None else [],
            on_step=report,
            earlier=(conversation.last_question() or "") if conversation is not None else "",
        )
        # exploring, with the best passages' reading when it gives no answer that holds
        explorer = (Explorer(max_iterations, system_prompt), answering.Grounded())
        answerers = explorer if explore else answering.ANSWERERS
        result = answering.answer(evidence, answerers)
        result.question = user_prompt
        if conversation is not None:
            conversation.add(user_prompt, result.answer, ctx.cancel)
        return result

    def chat(
        self,
        question: str,
        conversation_id: str | None = None,
        *,
        on_step: StepCallback | None = None,
        explore: bool = False,
        max_iterations: int = 10,
    ) -> ChatTurn:
        """Answer `question` in a saved conversation (a new one without an id) and commit
        the turn ("Chat: <title>"). With saving switched off for this memory the answer
        is given and nothing is written. Learning from it is `learn_from_turn`'s job."""
        ctx = self.context
        if not ctx.folder.is_memory() and ctx.may_hold_memory():
            self.ingest.initialize()  # its first turn makes an empty folder a memory (issue 39)
        record, path = self.conversations.open(question, conversation_id)
        conversation = working_memory(record, ctx.chat_llm())
        if is_statement(question):  # told, not asked: acknowledged, learned afterwards
            result = self._acknowledge(question)
            conversation.add(question, result.answer)
        else:
            result = self.request(
                question, None, max_iterations, conversation, on_step=on_step, explore=explore
            )
        told = result.notes == STATEMENT  # no confidence: nothing was looked up
        turn = Turn(
            utc_now(),
            question,
            result.answer,
            result.sources,
            None if told else result.confidence,
            steps=result.trajectory.splitlines(),  # shown again when it is reopened
            citations=list(result.citations),
            statement=told,
        )
        return self.conversations.save(record, path, turn, conversation, result)

    def _acknowledge(self, statement: str) -> ChatResult:
        meta = self.context.folder.read_meta()
        learning = meta is not None and meta.learn_facts
        answer = (
            "Noted."
            if learning
            else "Noted here, but learning facts is off for this memory: it is not kept as a fact."
        )
        return ChatResult(question=statement, answer=answer, confidence=1.0, notes=STATEMENT)

    def research(
        self, question: str, limits: Limits | None = None, on_step: ResearchCallback | None = None
    ) -> ResearchReport:
        """Research `question` across the memory (plan, search, integrate, reflect) into a
        report whose every claim cites a file the run read or matched. Reads only; stops
        between steps once the context's token is cancelled (OperationCancelled)."""
        ctx = self.context
        if not ctx.may_hold_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory (no .gam_meta.json)")
        if not question.strip():
            raise EmptyQuestion("there is no question to research")
        tools, llm = ctx.search_tools(), ctx.chat_llm()
        agent = ResearchAgent(tools, llm, limits, on_step, ctx.cancel)
        return agent.run(question.strip())

    def save_research(self, report: ResearchReport) -> tuple[str, Changes]:
        """Save `report` as research/<date>-<slug>.md, one commit ("Research: <question>")
        that History can undo; returns its path and what changed."""
        ctx = self.context
        if not ctx.folder.is_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory")
        with ctx.versioned.operation(RESEARCH) as transaction:
            path, changes = research_files.stage_save(report, ctx.folder.root, utc_now())
            transaction.write(
                changes, f"Research: {report.question[:80]}", {TRAILER_KIND: RESEARCH}
            )
        changed = transaction.changes(RESEARCH)
        ctx.changed(changed)
        return path, changed
