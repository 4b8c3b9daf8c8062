"""The conversations of a memory: listed, found, loaded, and staged for saving.

Writing goes through a ChangeSet, so saving a turn or deleting a conversation is an
operation like any other (the Workflow commits it as "Chat: <title>"). A link out of the
folder counts as absent, as everywhere in the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gam_desktop.engine.chats.record import (
    ConversationRecord,
    Turn,
    parse,
    parse_front,
    render,
)
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR
from gam_desktop.engine.store.links import resolve_within
from gam_desktop.engine.store.markdown import parse_count, parse_time

FRONT_BYTES = 16_384  # enough for any front matter: listing never reads the turns


class ConversationNotFound(GamError, LookupError):
    title = "Conversation not found"
    advice = "It may have been deleted or renamed outside the app; pick one from the list."


@dataclass(frozen=True)
class ConversationInfo:
    """What the list shows of a conversation, read from its front matter alone."""

    id: str
    title: str
    path: str
    started: datetime | None
    updated: datetime | None
    turns: int


def list_conversations(root: Path) -> list[ConversationInfo]:
    """Every conversation of the memory at `root`, the most recently updated first."""
    base = root / CONVERSATIONS_DIR
    if resolve_within(root, base) is None or not base.is_dir():
        return []
    found = []
    for path in base.glob("*/*.md"):
        if resolve_within(root, path) is None or not path.is_file():
            continue
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(FRONT_BYTES)
            if head.find("\n---", 3) < 0:  # front matter longer than usual: read it all
                head += handle.read()
            front = parse_front(head)
        if not front.get("id"):
            continue
        found.append(
            ConversationInfo(
                id=str(front["id"]),
                title=str(front.get("title") or "Conversation"),
                path=path.relative_to(root).as_posix(),
                started=parse_time(front.get("started")),
                updated=parse_time(front.get("updated")),
                turns=parse_count(front.get("turns")),
            )
        )
    oldest = datetime.min.replace(tzinfo=utc_now().tzinfo)
    return sorted(found, key=lambda c: (c.updated or oldest, c.id), reverse=True)


def saved_turn_ids(root: Path) -> set[str]:
    """The ids of every saved turn that has one (turns gam-serve queued): read whole, so
    only called when a queue left by a crash is replayed."""
    ids: set[str] = set()
    for info in list_conversations(root):
        try:
            record = parse((root / info.path).read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError):
            continue
        ids.update(turn.id for turn in record.turns if turn.id)
    return ids


def find(
    root: Path, conversation_id: str, among: Sequence[ConversationInfo] | None = None
) -> ConversationInfo:
    """`among`: a listing already made (saving a batch of turns lists the folder once)."""
    for info in list_conversations(root) if among is None else among:
        if info.id == conversation_id:
            return info
    raise ConversationNotFound(f"no conversation {conversation_id!r} in {root}")


def load(
    root: Path, conversation_id: str, among: Sequence[ConversationInfo] | None = None
) -> tuple[ConversationRecord, str]:
    """The record and its path (where it is now: a person may have moved the file)."""
    info = find(root, conversation_id, among)
    text = (root / info.path).read_text(encoding="utf-8", errors="replace")
    try:
        return parse(text), info.path
    except ValueError as exc:
        raise ConversationNotFound(f"{info.path} is not a conversation any more: {exc}") from exc


def with_turn(
    record: ConversationRecord, turn: Turn, summary: str, summarized: int
) -> ConversationRecord:
    """The record after `turn`, with the working memory's running summary of its first
    `summarized` turns (what reopening it rebuilds from)."""
    record.turns.append(turn)
    record.updated = turn.time
    record.summary, record.summarized = summary, summarized
    return record


def stage_save(record: ConversationRecord, path: str | None = None) -> ChangeSet:
    """Write the conversation where it is (`path`), or where a new one belongs."""
    return ChangeSet(writes={path or record.path: render(record)})


def stage_delete(path: str) -> ChangeSet:
    return ChangeSet(deletes=[path])
