"""A fact's history, read from the facts and their tombstones (record.py): when each value
was stated, updated, retracted, forgotten or brought back, and the conversation turn that
did it. Also the two changes a person makes by hand: Forget (a tombstone, history rather
than deletion) and its undo, Restore.

The history is derived, never stored twice: a value's successor is the fact its tombstone
says `replaced_by` (or that says it `replaces` it), so older files without `replaces` have
their history too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from gam_desktop.engine.facts.record import (
    FORGOTTEN,
    REPLACED,
    RESTORED,
    RETRACTED,
    Fact,
    Past,
    render,
)
from gam_desktop.engine.store.changeset import ChangeSet

STATED, UPDATED = "stated", "updated"


@dataclass(frozen=True)
class Event:
    """One step of a fact's history. `statement` is what held after it (for a retraction
    or a forget: what was taken back); `before` what an update replaced."""

    kind: str  # STATED, UPDATED, RETRACTED, FORGOTTEN, RESTORED
    at: datetime
    statement: str
    conversation: str = ""  # the conversation and turn that did it ("" for the Facts view)
    turn: int = 0
    before: str = ""
    fact_id: str = ""


@dataclass(frozen=True)
class Lineage:
    """A fact with its history, oldest first; `current` is False for a fact that was
    retracted or forgotten and not replaced (it can be restored)."""

    fact: Fact
    events: tuple[Event, ...]
    current: bool

    @property
    def stated(self) -> datetime:
        """When its first value was stated."""
        return self.events[0].at if self.events else self.fact.created


def lineages(current: list[Fact], tombstones: list[Fact]) -> list[Lineage]:
    """Every current fact with its history, and every fact that ended without a successor
    (retracted or forgotten) with its own."""
    ancestors = _predecessors(current + tombstones)
    live = {fact.id for fact in current}
    out = [Lineage(fact, tuple(timeline(fact, ancestors)), True) for fact in current]
    for tomb in tombstones:
        if tomb.ended != REPLACED and tomb.replaced_by not in live:
            out.append(Lineage(tomb, tuple(timeline(tomb, ancestors)), False))
    return out


def _predecessors(facts: list[Fact]) -> dict[str, list[Fact]]:
    """fact id -> the facts it replaced (by its `replaces`, or by their `replaced_by`)."""
    by_id = {fact.id: fact for fact in facts}
    replaced: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.replaced_by:
            replaced.setdefault(fact.replaced_by, []).append(fact)
    found: dict[str, list[Fact]] = {}
    for fact in facts:
        olds = {old.id: old for old in replaced.get(fact.id, [])}
        if fact.replaces in by_id:
            olds.setdefault(fact.replaces, by_id[fact.replaces])
        found[fact.id] = sorted(olds.values(), key=lambda f: (f.created, f.id))
    return found


def timeline(fact: Fact, predecessors: dict[str, list[Fact]]) -> list[Event]:
    """The history of `fact` and of the values it replaced, oldest first."""
    events: list[Event] = []
    seen: set[str] = set()

    def walk(node: Fact) -> None:
        if node.id in seen:  # a loop a person made by hand
            return
        seen.add(node.id)
        olds = predecessors.get(node.id, [])
        for old in olds:
            walk(old)
        kind, before = (STATED, "")
        if olds:  # "The user no longer cycles to work." follows a retraction
            kind = RETRACTED if olds[-1].ended == RETRACTED else UPDATED
            before = olds[-1].statement
        where = (node.source_conversation, node.turn)
        events.append(Event(kind, node.created, node.statement, *where, before, node.id))
        events.extend(_past(node))
        if (
            node.deleted is not None
            and node.ended in (RETRACTED, FORGOTTEN)
            and not node.replaced_by
        ):
            where = (node.ended_conversation, node.ended_turn)
            events.append(Event(node.ended, node.deleted, node.statement, *where, fact_id=node.id))

    walk(fact)
    return sorted(events, key=lambda e: e.at)


def _past(fact: Fact) -> list[Event]:
    return [
        Event(p.event, p.at, fact.statement, p.conversation, p.turn, fact_id=fact.id)
        for p in fact.events
    ]


# -- by hand: forget and restore -------------------------------------------------------------


def ended(
    fact: Fact,
    when: datetime,
    how: str,
    replaced_by: str = "",
    conversation: str = "",
    turn: int = 0,
) -> Fact:
    """The tombstone of `fact`, ended `how` (REPLACED, RETRACTED, FORGOTTEN) at `when` by
    the turn `conversation`/`turn` (none for a Forget)."""
    return replace(
        fact,
        deleted=when,
        ended=how,
        replaced_by=replaced_by,
        ended_conversation=conversation,
        ended_turn=turn if conversation else 0,
        updated=when,
    )


def forget(fact: Fact, when: datetime) -> ChangeSet:
    """Forget a current fact: its tombstone (history, not deletion), which Restore undoes."""
    tomb = ended(fact, when, FORGOTTEN)
    return ChangeSet(writes={fact.tombstone: render(tomb)}, deletes=[fact.path or fact.home])


def replaced(tomb: Fact) -> bool:
    """A tombstone whose value another took the place of (restoring it would make two
    values current): only a retracted or forgotten fact is brought back."""
    return tomb.ended == REPLACED


def restore(tomb: Fact, when: datetime) -> tuple[Fact, ChangeSet]:
    """Bring a retracted or forgotten fact back where it was: current again, its ending
    and its return kept in its `events`."""
    how = Past(tomb.ended or RETRACTED, tomb.deleted or when, tomb.ended_conversation,
               tomb.ended_turn)  # fmt: skip
    back = replace(
        tomb,
        deleted=None,
        ended="",
        replaced_by="",
        ended_conversation="",
        ended_turn=0,
        updated=when,
        events=[*tomb.events, how, Past(RESTORED, when)],
        path=tomb.restored_path,
    )
    changes = ChangeSet(writes={back.path: render(back)}, deletes=[tomb.path])
    return back, changes
