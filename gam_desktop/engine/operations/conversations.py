"""Saved conversations: recording a turn (answered here or by another app), listing,
finding, renaming and deleting them. Every write is one commit and reports what it
changed; with saving switched off for a memory, turns are answered and nothing is written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gam_desktop.engine.chats import library as chats
from gam_desktop.engine.chats.conversation import Conversation
from gam_desktop.engine.chats.library import ConversationInfo
from gam_desktop.engine.chats.record import ConversationRecord, Turn, new_record, title_from
from gam_desktop.engine.chats.saved_turns import TurnToSave, stage_turns
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.history.log import TRAILER_KIND
from gam_desktop.engine.models import ChatResult
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.store.changes import CHAT, FORGET, Changes
from gam_desktop.engine.store.folder import NotAMemoryError


@dataclass
class ChatTurn:
    """An answer given in a saved conversation: the id to continue it with (None when
    saving is off for this memory), its file and the turn's number."""

    result: ChatResult
    conversation_id: str | None
    path: str | None
    turn: int


class EmptyQuestion(GamError, ValueError):
    title = "Nothing to ask"
    advice = "Type a question or something you want the memory to know."


class ConversationOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context

    def save_turn(
        self,
        question: str,
        answer: str,
        conversation_id: str | None = None,
        *,
        sources: Sequence[str] = (),
        confidence: float | None = None,
        at: datetime | None = None,
        turn_id: str | None = None,
        history_key: str | None = None,
        report: dict[str, Any] | None = None,
    ) -> ChatTurn:
        """Record a turn answered elsewhere (another app through the memory's endpoint, an
        imported chat) in a saved conversation, as `chat` would; no LLM call. `turn_id` and
        `history_key` are kept in the turn's data (gam-serve's queue finds the id there
        after a crash, and a restarted gam-serve the conversation a request continues);
        `report`, the structured form of a research report the answer shows, is kept with the
        turn (read back, the report can still be saved). A conversation that is gone
        (deleted meanwhile, a made-up id) gets a new one."""
        item = TurnToSave(
            question,
            answer,
            conversation_id,
            None,
            sources,
            confidence,
            at,
            turn_id,
            history_key,
            report,
        )
        return self.save_turns([item])[0]

    def save_turns(self, items: Sequence[TurnToSave]) -> list[ChatTurn]:
        """Several turns answered elsewhere as one operation and one commit (saved_turns.py)."""
        ctx = self.context
        self.refuse_saving([item.question for item in items])
        results = [
            ChatResult(question=i.question, answer=i.answer, sources=list(i.sources)) for i in items
        ]
        meta = ctx.folder.read_meta()
        if meta is not None and not meta.save_conversations:
            return [ChatTurn(result, None, None, 0) for result in results]
        with ctx.versioned.operation(CHAT) as transaction:
            staged = stage_turns(ctx.folder.root, items, ctx.chat_settings.model)
            ids = ", ".join(record.id for record in staged.conversations)
            trailers = {TRAILER_KIND: CHAT, "Gam-Conversation": ids}
            transaction.write(staged.changes, staged.summary(), trailers)
        ctx.changed(transaction.changes(CHAT))
        return [
            ChatTurn(result, saved.conversation_id, saved.path, saved.turn)
            for result, saved in zip(results, staged.saved, strict=True)
        ]

    def refuse_saving(self, questions: list[str]) -> None:
        """No conversation is saved into a folder that is not a memory (never a repository
        made in someone's folder), nor without a question."""
        if not self.context.folder.is_memory():
            root = self.context.folder.root
            raise NotAMemoryError(f"{root} is not a GAM memory (no .gam_meta.json)")
        if not questions or any(not question.strip() for question in questions):
            raise EmptyQuestion("there is no question to ask or save")

    def open(
        self, question: str, conversation_id: str | None
    ) -> tuple[ConversationRecord, str | None]:
        """The conversation `question` is asked in (a new one without an id) and its file."""
        self.refuse_saving([question])
        if conversation_id:
            return chats.load(self.context.folder.root, conversation_id)
        return new_record(question, self.context.chat_settings.model), None

    def save(
        self,
        record: ConversationRecord,
        path: str | None,
        turn: Turn,
        conversation: Conversation,
        result: ChatResult,
    ) -> ChatTurn:
        """Commit `turn` to the conversation `open` gave, as its file is now."""
        ctx = self.context
        meta = ctx.folder.read_meta()
        if meta is not None and not meta.save_conversations:
            return ChatTurn(result, None, None, len(record.turns) + 1)
        trailers = {TRAILER_KIND: CHAT, "Gam-Conversation": record.id}
        with ctx.versioned.operation(CHAT) as transaction:
            summary, folded = conversation.summary, conversation.folded
            if path is not None:  # as it is now: another window may have added a turn
                fresh, path = chats.load(ctx.folder.root, record.id)
                if len(fresh.turns) != len(record.turns):  # its summary state is the file's
                    summary, folded = fresh.summary, fresh.summarized
                record = fresh
            record = chats.with_turn(record, turn, summary, folded)
            # The History names each turn by its own question, not the conversation's title
            # (three turns were "Chat: How much water did…" three times).
            said = f"Chat: {title_from(turn.question)}"
            transaction.write(chats.stage_save(record, path), said, trailers)
        ctx.changed(transaction.changes(CHAT))
        return ChatTurn(result, record.id, path or record.path, len(record.turns))

    def listed(self) -> list[ConversationInfo]:
        return chats.list_conversations(self.context.folder.root)

    def find(self, conversation_id: str) -> ConversationInfo:
        """The saved conversation `conversation_id`: ConversationNotFound when there is
        none, ConversationUnreadable (naming the file and what is wrong) when its file is
        there but its front matter cannot be read."""
        return chats.find(self.context.folder.root, conversation_id)

    def latest(self) -> ConversationInfo | None:
        """The latest conversation (None when none was saved); ConversationUnreadable when
        the latest one's file cannot be read, rather than an older one or a new one."""
        return chats.latest(self.context.folder.root)

    def delete(self, conversation_id: str) -> Changes:
        """Delete a conversation as a commit (History can bring it back)."""
        info = chats.find(self.context.folder.root, conversation_id)
        with self.context.versioned.operation(FORGET) as transaction:
            transaction.write(
                chats.stage_delete(info.path),
                f"Deleted the conversation: {info.title}",
                {TRAILER_KIND: FORGET, "Gam-Conversation": info.id},
            )
        changes = transaction.changes(FORGET)
        self.context.changed(changes)
        return changes

    def rename(self, conversation_id: str, title: str) -> Changes:
        record, path = chats.load(self.context.folder.root, conversation_id)
        old, record.title = record.title, title_from(title) if title.strip() else record.title
        with self.context.versioned.operation(CHAT) as transaction:
            transaction.write(
                chats.stage_save(record, path),
                f"Renamed the conversation: {old} → {record.title}",
                {TRAILER_KIND: CHAT, "Gam-Conversation": record.id},
            )
        changes = transaction.changes(CHAT)
        self.context.changed(changes)
        return changes
