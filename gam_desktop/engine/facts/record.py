"""A fact the user stated: one small Markdown file under `facts/<topic>/`.

    ---
    id: f-20261122-204400-1f3a9c
    subject: the user
    statement: The user's meeting with the bank is on 10 May.
    topic: bank
    source_conversation: 20261122-204400-9b1e07    # the turn that stated it
    turn: 3
    created: '2026-11-22T20:44:00+00:00'           # when it was stated (this value)
    updated: '2026-11-22T20:44:00+00:00'
    replaces: f-20261101-090000-0a1b2c             # an update names what it replaces
    replaces_statement: The user's meeting with the bank is on 3 May.
    first_stated: '2026-11-01T09:00:00+00:00'      # when the first value was stated
    ---

    The user's meeting with the bank is on 10 May.

The body is the statement, so search finds it and a person can edit it in any editor
(the body wins over a stale `statement:`). The person's own name is the one fact with
`kind: identity`. A fact that is replaced, retracted or forgotten is never destroyed: it
moves to `facts/.deleted/` (the hidden folder keeps it out of search, so it is never
current) with `deleted` (when), `ended` (replaced, retracted or forgotten), the turn that
ended it (`ended_conversation`, `ended_turn`) and, when replaced, `replaced_by`. A forgotten
fact brought back keeps what happened to it in `events`.

Older files lack the newer keys; they are read as they were meant (migrated on read, never
rewritten until they change): a tombstone with `replaced_by` was replaced, one without was
retracted; "The user's name is X." is the identity.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.facts.lexicon import NAME_CLAIM
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.folder import DELETED_FACTS_DIR, FACTS_DIR
from gam_desktop.engine.store.links import resolve_within
from gam_desktop.engine.store.markdown import parse_count, parse_memory, parse_time, render_memory
from gam_desktop.engine.store.naming import sanitize_folder_name, sanitize_name

IDENTITY = "identity"
REPLACED, RETRACTED, FORGOTTEN = "replaced", "retracted", "forgotten"
RESTORED = "restored"


@dataclass(frozen=True)
class Past:
    """Something that happened to a fact and was undone: it was retracted or forgotten
    (`event` is how it ended), or it was restored."""

    event: str
    at: datetime
    conversation: str = ""
    turn: int = 0


@dataclass
class Fact:
    id: str
    statement: str
    subject: str = "the user"
    topic: str = "general"
    source_conversation: str = ""
    turn: int = 0
    created: datetime = field(default_factory=utc_now)
    updated: datetime = field(default_factory=utc_now)
    replaced_by: str = ""  # on a tombstone: the fact that took its place
    deleted: datetime | None = None  # on a tombstone: when it ended
    path: str = ""  # where it is (set when read; new facts get `home`)
    kind: str = ""  # IDENTITY for the person's own name
    replaces: str = ""  # the fact this one replaced
    replaces_statement: str = ""
    first_stated: datetime | None = None  # when the first of the values it replaced was stated
    ended: str = ""  # on a tombstone: REPLACED, RETRACTED or FORGOTTEN
    ended_conversation: str = ""  # the turn that ended it (none for a Forget)
    ended_turn: int = 0
    events: list[Past] = field(default_factory=list)

    @property
    def home(self) -> str:
        """facts/<topic>/<statement slug>-<id tail>.md"""
        folder = sanitize_folder_name(self.topic, fallback="general")
        name = sanitize_name(self.statement, fallback="fact", max_chars=48)
        return f"{FACTS_DIR}/{folder}/{name}-{self.id[-6:]}.md"

    @property
    def tombstone(self) -> str:
        return (
            f"{DELETED_FACTS_DIR}/{Path(self.path or self.home).relative_to(FACTS_DIR).as_posix()}"
        )

    @property
    def restored_path(self) -> str:
        """Where a tombstone goes back to: the place it had while it was current."""
        path = self.path or self.home
        prefix = f"{DELETED_FACTS_DIR}/"
        return f"{FACTS_DIR}/{path.removeprefix(prefix)}" if path.startswith(prefix) else path

    @property
    def is_identity(self) -> bool:
        return self.kind == IDENTITY


def new_fact_id(now: datetime | None = None) -> str:
    return f"f-{(now or utc_now()):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def render(fact: Fact) -> str:
    front: dict[str, Any] = {
        "id": fact.id,
        "subject": fact.subject,
        "statement": fact.statement,
        "topic": fact.topic,
    }
    if fact.kind:
        front["kind"] = fact.kind
    front |= {
        "source_conversation": fact.source_conversation,
        "turn": fact.turn,
        "created": fact.created.isoformat(),
        "updated": fact.updated.isoformat(),
    }
    if fact.replaces:
        front["replaces"] = fact.replaces
        front["replaces_statement"] = fact.replaces_statement
    if fact.first_stated is not None and fact.first_stated != fact.created:
        front["first_stated"] = fact.first_stated.isoformat()
    if fact.deleted is not None:
        front["deleted"] = fact.deleted.isoformat()
        front["ended"] = fact.ended or (REPLACED if fact.replaced_by else RETRACTED)
        if fact.ended_conversation:
            front["ended_conversation"] = fact.ended_conversation
            front["ended_turn"] = fact.ended_turn
    if fact.replaced_by:
        front["replaced_by"] = fact.replaced_by
    if fact.events:
        front["events"] = [_past_front(past) for past in fact.events]
    return render_memory(front, fact.statement)


def _past_front(past: Past) -> dict[str, Any]:
    out: dict[str, Any] = {"event": past.event, "at": past.at.isoformat()}
    if past.conversation:
        out |= {"conversation": past.conversation, "turn": past.turn}
    return out


def parse(text: str, path: str = "") -> Fact | None:
    """The fact a file holds (its body is the statement), or None if it is not one."""
    parsed = parse_memory(text)
    front = parsed.front
    statement = " ".join(parsed.body.split()) or str(front.get("statement") or "")
    if not front.get("id") or not statement:
        return None
    created = parse_time(front.get("created")) or utc_now()
    deleted = parse_time(front["deleted"]) if front.get("deleted") else None
    replaced_by = str(front.get("replaced_by") or "")
    subject = str(front.get("subject") or "the user")
    return Fact(
        id=str(front["id"]),
        statement=statement,
        subject=subject,
        topic=str(front.get("topic") or Path(path).parent.name or "general"),
        source_conversation=str(front.get("source_conversation") or ""),
        turn=parse_count(front.get("turn")),
        created=created,
        updated=parse_time(front.get("updated")) or created,
        replaced_by=replaced_by,
        deleted=deleted,
        path=path,
        kind=str(front.get("kind") or _kind_of(statement, subject)),
        replaces=str(front.get("replaces") or ""),
        replaces_statement=str(front.get("replaces_statement") or ""),
        first_stated=parse_time(front.get("first_stated")) if front.get("first_stated") else None,
        ended=_ended(front, deleted, replaced_by),
        ended_conversation=str(front.get("ended_conversation") or ""),
        ended_turn=parse_count(front.get("ended_turn")),
        events=_events(front.get("events")),
    )


def _kind_of(statement: str, subject: str) -> str:
    """Files written before `kind`: the statement the app wrote for the person's name."""
    about_user = subject.strip().lower() in ("the user", "user", "")
    return IDENTITY if about_user and NAME_CLAIM.match(statement) else ""


def _ended(front: dict[str, Any], deleted: datetime | None, replaced_by: str) -> str:
    if deleted is None:
        return ""
    ended = str(front.get("ended") or "")
    if ended in (REPLACED, RETRACTED, FORGOTTEN):
        return ended
    return REPLACED if replaced_by else RETRACTED  # files written before `ended`


def _events(value: object) -> list[Past]:
    """The `events` list; entries a person broke are skipped."""
    if not isinstance(value, list):
        return []
    events = []
    for item in value:
        at = parse_time(item.get("at")) if isinstance(item, dict) else None
        if at is None or not isinstance(item, dict):
            continue
        event, conversation = str(item.get("event") or ""), str(item.get("conversation") or "")
        events.append(Past(event, at, conversation, parse_count(item.get("turn"))))
    return events


def read_facts(root: Path, deleted: bool = False) -> list[Fact]:
    """The current facts of the memory at `root` (or, with `deleted`, the tombstones),
    oldest first; files that are not facts and links out of the folder are skipped."""
    base = root / (DELETED_FACTS_DIR if deleted else FACTS_DIR)
    if resolve_within(root, base) is None or not base.is_dir():
        return []
    facts = []
    for path in sorted(base.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        hidden = any(part.startswith(".") for part in path.relative_to(base).parts)
        if hidden or resolve_within(root, path) is None or not path.is_file():
            continue
        fact = parse(path.read_text(encoding="utf-8", errors="replace"), rel)
        if fact is not None:
            facts.append(fact)
    return sorted(facts, key=lambda f: (f.created, f.id))
