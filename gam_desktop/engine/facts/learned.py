"""What one turn taught (`Learned`): the facts it added, updated and took back, and the
change set that writes them, every replaced or retracted fact as a tombstone naming the
turn that ended it (history.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gam_desktop.engine.facts.history import ended
from gam_desktop.engine.facts.record import REPLACED, RETRACTED, Fact, new_fact_id, render
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.textutil import plural


@dataclass
class Learned:
    """What one turn taught: the change set to commit and what to tell the user.
    `deleted` are the facts it took back; `successors` maps one of them to the new fact
    that followed it ("The user no longer cycles to work.")."""

    added: list[Fact] = field(default_factory=list)
    updated: list[tuple[Fact, Fact]] = field(default_factory=list)  # (old, new)
    deleted: list[Fact] = field(default_factory=list)
    calls: int = 0
    problem: str | None = None  # why nothing was learned, when an LLM call failed
    at: datetime = field(default_factory=utc_now)
    conversation_id: str = ""
    turn: int = 0
    successors: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.deleted)

    def summary(self) -> str:
        """ "Learned 2 facts, updated 1, forgot 1" (the commit's summary)."""
        parts = []
        if self.added:
            parts.append(f"Learned {plural(len(self.added), 'fact')}")
        if self.updated:
            parts.append(f"updated {len(self.updated)}")
        if self.deleted:
            parts.append(f"forgot {len(self.deleted)}")
        text = ", ".join(parts) or "Learned nothing"
        return text[0].upper() + text[1:]

    def changes(self) -> ChangeSet:
        now, where = self.at, (self.conversation_id, self.turn)
        writes: dict[str, str | bytes] = {fact.home: render(fact) for fact in self.added}
        deletes = []
        for old, new in self.updated:
            writes[new.home] = render(new)
            writes[old.tombstone] = render(ended(old, now, REPLACED, new.id, *where))
            deletes.append(old.path or old.home)
        for old in self.deleted:
            successor = self.successors.get(old.id, "")
            writes[old.tombstone] = render(ended(old, now, RETRACTED, successor, *where))
            deletes.append(old.path or old.home)
        return ChangeSet(writes=writes, deletes=deletes)


def new_fact(learned: Learned, statement: str, subject: str, topic: str) -> Fact:
    stamp = learned.at
    return Fact(
        id=new_fact_id(stamp),
        statement=" ".join(statement.split()),
        subject=subject or "the user",
        topic=topic or "general",
        source_conversation=learned.conversation_id,
        turn=learned.turn,
        created=stamp,
        updated=stamp,
    )


def replacing(fact: Fact, old: Fact) -> Fact:
    """`fact` naming the fact it replaces, and when the first of its values was stated."""
    fact.replaces, fact.replaces_statement = old.id, old.statement
    fact.first_stated = old.first_stated or old.created
    return fact


def norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")
