"""The conversations of a memory: listed, found, loaded, and staged for saving.

Writing goes through a ChangeSet, so saving a turn or deleting a conversation is an
operation like any other (the Workflow commits it as "Chat: <title>"). A link out of the
folder counts as absent, as everywhere in the engine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.chats.record import ConversationRecord, Turn, parse, read_front, render
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR
from gam_desktop.engine.store.links import resolve_within
from gam_desktop.engine.store.markdown import parse_count, parse_time, split_front

FRONT_BYTES = 16_384  # enough for any front matter: listing never reads the turns


class ConversationNotFound(GamError, LookupError):
    title = "Conversation not found"
    advice = "It may have been deleted or renamed outside the app; pick one from the list."


class ConversationUnreadable(ConversationNotFound):
    """The conversation's file is there, but its front matter cannot be read (edited by
    hand): it is not listed, and nothing is saved into it or in its place. A kind of
    ConversationNotFound, so that gam-serve's queue, which saves a turn whose conversation
    is gone in a new one, still saves it."""

    title = "A conversation cannot be read"
    advice = (
        "Fix the file's front matter (the lines between the two '---') in a text editor, "
        "or delete the file; then try again."
    )


@dataclass(frozen=True)
class UnreadableConversation:
    """A file among the conversations whose front matter cannot be read, and why."""

    path: str
    problem: str
    modified: float  # the file's time: the only one it gives
    head: str  # the start of its text, where its id may still be written

    def holds(self, conversation_id: str) -> bool:
        """Whether it is plainly the file of `conversation_id`: the id written in it, or
        the end of its name (…-1f3a9c.md, as the app names conversations)."""
        if not conversation_id.strip():
            return False
        if re.search(rf"(?m)^\s*id:\s*['\"]?{re.escape(conversation_id)}['\"]?\s*$", self.head):
            return True
        tail = conversation_id[-6:]
        return len(conversation_id) > 6 and self.path.endswith(f"-{tail}.md")

    def error(self, what: str) -> ConversationUnreadable:
        return ConversationUnreadable(
            f"{what} is {self.path}, which cannot be read: {self.problem}"
        )


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
    """Every conversation of the memory at `root`, the most recently updated first (a file
    whose front matter cannot be read is not one: `unreadable_conversations`)."""
    return _scan(root)[0]


def unreadable_conversations(root: Path) -> list[UnreadableConversation]:
    """The files among the conversations whose front matter cannot be read, newest first."""
    return _scan(root)[1]


def _scan(root: Path) -> tuple[list[ConversationInfo], list[UnreadableConversation]]:
    base = root / CONVERSATIONS_DIR
    if resolve_within(root, base) is None or not base.is_dir():
        return [], []
    found: list[ConversationInfo] = []
    unreadable: list[UnreadableConversation] = []
    for path in base.glob("*/*.md"):
        if resolve_within(root, path) is None or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(FRONT_BYTES)
            if split_front(head) is None:  # front matter longer than usual: read it all
                head += handle.read()
        parsed = read_front(head)
        if parsed.front.get("id"):
            found.append(_info(parsed.front, rel))
        else:
            problem = parsed.problem or "its front matter has no id"
            unreadable.append(
                UnreadableConversation(rel, problem, _modified(path), head[:FRONT_BYTES])
            )
    oldest = datetime.min.replace(tzinfo=utc_now().tzinfo)
    found.sort(key=lambda c: (c.updated or oldest, c.id), reverse=True)
    unreadable.sort(key=lambda u: u.modified, reverse=True)
    return found, unreadable


def _info(front: dict[str, Any], path: str) -> ConversationInfo:
    return ConversationInfo(
        id=str(front["id"]),
        title=str(front.get("title") or "Conversation"),
        path=path,
        started=parse_time(front.get("started")),
        updated=parse_time(front.get("updated")),
        turns=parse_count(front.get("turns")),
    )


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def latest(root: Path) -> ConversationInfo | None:
    """The conversation to continue as "the last one" (None when there is none at all). A
    conversation that cannot be read and is newer than every one that can is refused,
    not passed over: continuing an older one, or starting anew, would not be what was asked."""
    listed, unreadable = _scan(root)
    newest = listed[0] if listed else None
    if unreadable and (newest is None or unreadable[0].modified >= _modified(root / newest.path)):
        raise unreadable[0].error("the latest conversation")
    return newest


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
    for broken in unreadable_conversations(root):  # there, but its front matter is broken
        if broken.holds(conversation_id):
            raise broken.error(f"conversation {conversation_id!r}")
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
