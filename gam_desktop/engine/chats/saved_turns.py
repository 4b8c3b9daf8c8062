"""Turns answered elsewhere (another app through gam-serve, an imported chat), staged as
one change set: each turn added to its conversation, new ones started, every conversation
touched written once.

Here, beside the working memory that folds them (the chats layer sits below it).

Several turns saved together are one operation and one commit: gam-serve's writer takes
every turn queued while it was committing the last ones, so a burst of requests costs a
few commits, not one per turn (a commit takes most of a second in a big memory). Within
such a batch a turn may continue a conversation that an earlier turn of the same batch
started: `follows` (the history key the earlier turn left) finds it, as no id existed
when the later turn was queued.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.chats import library as chats
from gam_desktop.engine.chats.conversation import working_memory
from gam_desktop.engine.chats.record import (
    ConversationRecord,
    Turn,
    new_record,
    render,
    title_from,
)
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.changeset import ChangeSet


@dataclass
class TurnToSave:
    question: str
    answer: str
    conversation_id: str | None = None  # continue this one (a new one when it is gone)
    follows: str | None = None  # else the one a turn of this batch left with this key
    sources: Sequence[str] = ()
    confidence: float | None = None
    at: datetime | None = None
    turn_id: str | None = None  # kept in the turn's data (gam-serve's queue looks for it)
    history_key: str | None = None  # what the client's next request continues
    report: dict[str, Any] | None = None  # the structured report the answer shows, if any


@dataclass
class SavedTurn:
    conversation_id: str
    path: str
    turn: int  # its number in the conversation, from 1


@dataclass
class StagedTurns:
    changes: ChangeSet
    saved: list[SavedTurn]
    conversations: list[ConversationRecord] = field(default_factory=list)  # touched
    questions: list[str] = field(default_factory=list)  # the turns', in order

    def summary(self) -> str:
        """The commit's line: "Chat: <its question>" for one turn, as a chat in the app
        (not the conversation's title: two turns of one conversation looked the same)."""
        if len(self.saved) == 1:
            said = title_from(self.questions[0]) if self.questions else self.conversations[0].title
            return f"Chat: {said}"
        if len(self.conversations) == 1:
            return f"Chat: {self.conversations[0].title} ({len(self.saved)} turns)"
        return f"Chat: {len(self.saved)} turns in {len(self.conversations)} conversations"


def stage_turns(root: Path, items: Sequence[TurnToSave], model: str = "") -> StagedTurns:
    """Read under the writer lock: a turn another window saved meanwhile is kept."""
    touched: dict[str, tuple[ConversationRecord, str | None]] = {}  # id -> record, path
    by_key: dict[str, str] = {}  # history key a turn of this batch left -> conversation id
    listed: list[chats.ConversationInfo] = []  # the folder's conversations, listed once
    if any(item.conversation_id for item in items):
        listed = chats.list_conversations(root)
    saved = []
    for item in items:
        record, path = _continued(root, item, touched, by_key, listed) or (
            new_record(item.question, model, now=item.at),
            None,
        )
        conversation = working_memory(record)  # folded without the LLM: first sentences
        conversation.add(item.question, item.answer)
        turn = Turn(
            item.at or utc_now(),
            item.question,
            item.answer,
            list(item.sources),
            item.confidence,
            item.turn_id,
            item.history_key,
            report=item.report,
        )
        record = chats.with_turn(record, turn, conversation.summary, conversation.folded)
        touched[record.id] = (record, path)
        if item.history_key:
            by_key[item.history_key] = record.id
        saved.append(SavedTurn(record.id, path or record.path, len(record.turns)))
    writes: dict[str, str | bytes] = {
        path or record.path: render(record) for record, path in touched.values()
    }
    records = [record for record, _ in touched.values()]
    return StagedTurns(ChangeSet(writes=writes), saved, records, [i.question for i in items])


def _continued(
    root: Path,
    item: TurnToSave,
    touched: dict[str, tuple[ConversationRecord, str | None]],
    by_key: dict[str, str],
    listed: Sequence[chats.ConversationInfo],
) -> tuple[ConversationRecord, str | None] | None:
    if item.conversation_id:
        if item.conversation_id in touched:
            return touched[item.conversation_id]
        try:
            return chats.load(root, item.conversation_id, listed)
        except chats.ConversationNotFound:  # deleted meanwhile, or an id made up by a client
            pass
    if item.follows and item.follows in by_key:
        return touched[by_key[item.follows]]
    return None
