"""A fact the user stated: one small Markdown file under `facts/<topic>/`.

    ---
    id: f-20261122-204400-1f3a9c
    subject: the user
    statement: The user lives in Lisbon.
    topic: home
    source_conversation: 20261122-204400-9b1e07
    turn: 3
    created: '2026-11-22T20:44:00+00:00'
    updated: '2026-11-22T20:44:00+00:00'
    ---

    The user lives in Lisbon.

The body is the statement, so search finds it and a person can edit it in any editor
(the body wins over a stale `statement:`). A fact that is updated or retracted is never
destroyed: it moves to `facts/.deleted/` with `deleted` and, for an update, `replaced_by`
(the hidden folder keeps it out of search, so a superseded fact is never current).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.folder import DELETED_FACTS_DIR, FACTS_DIR
from gam_desktop.engine.store.links import resolve_within
from gam_desktop.engine.store.markdown import parse_count, parse_memory, parse_time, render_memory
from gam_desktop.engine.store.naming import sanitize_folder_name, sanitize_name


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
    deleted: datetime | None = None
    path: str = ""  # where it is (set when read; new facts get `home`)

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


def new_fact_id(now: datetime | None = None) -> str:
    return f"f-{(now or utc_now()):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def render(fact: Fact) -> str:
    front: dict[str, Any] = {
        "id": fact.id,
        "subject": fact.subject,
        "statement": fact.statement,
        "topic": fact.topic,
        "source_conversation": fact.source_conversation,
        "turn": fact.turn,
        "created": fact.created.isoformat(),
        "updated": fact.updated.isoformat(),
    }
    if fact.deleted is not None:
        front["deleted"] = fact.deleted.isoformat()
    if fact.replaced_by:
        front["replaced_by"] = fact.replaced_by
    return render_memory(front, fact.statement)


def parse(text: str, path: str = "") -> Fact | None:
    """The fact a file holds (its body is the statement), or None if it is not one."""
    parsed = parse_memory(text)
    front = parsed.front
    statement = " ".join(parsed.body.split()) or str(front.get("statement") or "")
    if not front.get("id") or not statement:
        return None
    created = parse_time(front.get("created")) or utc_now()
    return Fact(
        id=str(front["id"]),
        statement=statement,
        subject=str(front.get("subject") or "the user"),
        topic=str(front.get("topic") or Path(path).parent.name or "general"),
        source_conversation=str(front.get("source_conversation") or ""),
        turn=parse_count(front.get("turn")),
        created=created,
        updated=parse_time(front.get("updated")) or created,
        replaced_by=str(front.get("replaced_by") or ""),
        deleted=parse_time(front["deleted"]) if front.get("deleted") else None,
        path=path,
    )


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
