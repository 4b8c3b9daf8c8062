"""A fact's history (issue 37): stated, updated, retracted, forgotten and restored, each
with its date and the conversation turn that did it, read from the facts and their
tombstones; files written before the history keys read as they were meant (migrated on
read); Forget is a tombstone that Restore undoes, each a commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gam_desktop.engine.facts.history import (
    FORGOTTEN,
    RESTORED,
    RETRACTED,
    STATED,
    UPDATED,
    lineages,
    restore,
)
from gam_desktop.engine.facts.learn import Extraction, Reconciliation, learn
from gam_desktop.engine.facts.record import REPLACED, Fact, parse, read_facts, render
from gam_desktop.engine.workflow import FactNotFound, Workflow
from tests.fakes import FakeLLM

DAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)


def write(root: Path, changes) -> None:
    for rel, text in changes.writes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for rel in changes.deletes:
        (root / rel).unlink()


def told(root: Path, message: str, statement: str, day: int, conversation: str, turn: int):
    llm = FakeLLM(
        {
            Extraction: {"facts": [{"subject": "the user", "statement": statement}]},
            Reconciliation: {"facts": []},
        }
    )
    at = DAY + timedelta(days=day)
    learned = learn(llm, message, read_facts(root), conversation, turn, now=at)
    write(root, learned.changes())
    return learned


def test_a_fact_updated_twice_tells_each_value_its_date_and_turn(tmp_path: Path) -> None:
    told(tmp_path, "My dentist appointment is on 9 July at nine.",
         "The user's dentist appointment is on 9 July at nine.", 0, "c-1", 5)  # fmt: skip
    told(tmp_path, "Dr. Marsh moved our dentist appointment from 9 July to 16 July.",
         "The user's dentist appointment is on 16 July at nine.", 12, "c-3", 2)  # fmt: skip
    told(tmp_path, "The practice moved the appointment from 16 July to 23 July.",
         "The user's dentist appointment is on 23 July at nine.", 33, "c-6", 3)  # fmt: skip
    (line,) = lineages(read_facts(tmp_path), read_facts(tmp_path, deleted=True))
    assert line.current and "23 July" in line.fact.statement
    assert [(e.kind, e.at.date().isoformat(), e.conversation, e.turn) for e in line.events] == [
        (STATED, "2026-05-04", "c-1", 5),
        (UPDATED, "2026-05-16", "c-3", 2),
        (UPDATED, "2026-06-06", "c-6", 3),
    ]
    assert "9 July" in line.events[1].before and "16 July" in line.events[1].statement
    assert line.stated == DAY


def test_a_retracted_fact_is_history_and_can_be_restored(tmp_path: Path) -> None:
    slot = "The user has a Thursday slot at the Oakbridge open-mic night."
    told(tmp_path, "I got a Thursday slot at the Oakbridge open-mic night.", slot, 0, "c-1", 3)
    told(tmp_path, "Forget what I said about the Oakbridge open-mic night. I'm relieved.",
         "The user is relieved.", 7, "c-2", 2)  # fmt: skip
    lines = lineages(read_facts(tmp_path), read_facts(tmp_path, deleted=True))
    (gone,) = [line for line in lines if not line.current]
    assert [(e.kind, e.conversation, e.turn) for e in gone.events] == [
        (STATED, "c-1", 3),
        (RETRACTED, "c-2", 2),
    ]
    back, changes = restore(gone.fact, DAY + timedelta(days=9))
    write(tmp_path, changes)
    assert (
        back.path == gone.fact.restored_path
        and back.path.startswith("facts/")
        and (".deleted" not in back.path)
    )
    (line,) = [
        line
        for line in lineages(read_facts(tmp_path), read_facts(tmp_path, deleted=True))
        if "slot at" in line.fact.statement
    ]
    assert line.current and [e.kind for e in line.events] == [STATED, RETRACTED, RESTORED]


def test_what_follows_a_retraction_tells_it_in_the_history(tmp_path: Path) -> None:
    told(tmp_path, "I row at the boat club every Thursday morning.",
         "The user rows at the boat club every Thursday morning.", 0, "c-1", 1)  # fmt: skip
    told(tmp_path, "What I said about rowing every Thursday is no longer true.",
         "The user no longer rows at the boat club.", 7, "c-2", 4)  # fmt: skip
    (line,) = lineages(read_facts(tmp_path), read_facts(tmp_path, deleted=True))
    assert line.current and line.fact.statement == "The user no longer rows at the boat club."
    assert [(e.kind, e.conversation, e.turn) for e in line.events] == [
        (STATED, "c-1", 1),
        (RETRACTED, "c-2", 4),
    ]
    assert line.events[1].before == "The user rows at the boat club every Thursday morning."


def test_files_written_before_the_history_read_as_they_were_meant(tmp_path: Path) -> None:
    """Issue 12's format: tombstones with only `deleted` (and `replaced_by`), no `replaces`
    on the new fact, the name as a plain fact. Read, never rewritten."""
    old = (
        "---\nid: f-1\nsubject: the user\nstatement: The user lives in Utrecht.\ntopic: home\n"
        "source_conversation: c-1\nturn: 1\ncreated: '2026-01-01T10:00:00+00:00'\n"
        "updated: '2026-01-01T10:00:00+00:00'\ndeleted: '2026-02-01T10:00:00+00:00'\n"
        "replaced_by: f-2\n---\n\nThe user lives in Utrecht.\n"
    )
    new = render(Fact("f-2", "The user lives in Leiden.", created=DAY, updated=DAY))
    gone = old.replace("f-1", "f-3").replace("replaced_by: f-2\n", "").replace("Utrecht", "Delft")
    name = render(Fact("f-4", "The user's name is Noor.", topic="personal"))
    files = {
        "facts/.deleted/home/utrecht.md": old,
        "facts/home/leiden.md": new,
        "facts/.deleted/home/delft.md": gone,
        "facts/personal/name.md": name,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    tombs = read_facts(tmp_path, deleted=True)
    assert {t.id: t.ended for t in tombs} == {"f-1": REPLACED, "f-3": RETRACTED}
    current = read_facts(tmp_path)
    assert [f.kind for f in current if f.id == "f-4"] == ["identity"]
    by_id = {line.fact.id: line for line in lineages(current, tombs)}
    assert [e.kind for e in by_id["f-2"].events] == [STATED, UPDATED]
    assert by_id["f-2"].events[1].before == "The user lives in Utrecht."
    assert not by_id["f-3"].current and by_id["f-3"].events[-1].kind == RETRACTED
    assert (tmp_path / "facts/.deleted/home/utrecht.md").read_text(encoding="utf-8") == old


def test_a_broken_history_entry_is_skipped_not_fatal() -> None:
    text = render(Fact("f-1", "The user has a cat.")).replace(
        "---\n\nThe", "events:\n- oops\n- {event: restored, at: never}\n---\n\nThe"
    )
    fact = parse(text, "facts/x.md")
    assert fact is not None and fact.events == []


# -- Forget and Restore through the Workflow (real git) -------------------------------------


@pytest.fixture
def memory(make_workflow) -> Workflow:
    workflow = make_workflow()
    workflow.add(text="# Notes\n\nThe launch is planned with marketing.\n")
    workflow.learn_from_turn("c-1", 1, "I live in Utrecht.")
    return workflow


def test_forget_is_a_tombstone_that_restore_undoes(memory: Workflow) -> None:
    (fact,) = memory.facts()
    memory.forget_fact(fact.id)
    assert memory.facts() == []
    (tomb,) = memory.facts(deleted=True)
    assert (tomb.id, tomb.ended, tomb.ended_conversation) == (fact.id, FORGOTTEN, "")
    memory.restore_fact(fact.id)
    (back,) = memory.facts()
    assert (back.id, back.path, back.statement) == (fact.id, fact.path, fact.statement)
    assert [p.event for p in back.events] == [FORGOTTEN, RESTORED]
    assert memory.facts(deleted=True) == []
    assert memory.history is not None
    summaries = [op.summary for op in memory.history.operations(limit=3)]
    assert summaries[:2] == [f"Restored: {fact.statement}", f"Forgot: {fact.statement}"]


def test_only_a_fact_taken_back_can_be_restored(memory: Workflow) -> None:
    (fact,) = memory.facts()
    with pytest.raises(FactNotFound):
        memory.restore_fact(fact.id)  # it is current
    memory.learn_from_turn("c-1", 2, "I live in Leiden now.")
    (tomb,) = memory.facts(deleted=True)
    assert tomb.ended == REPLACED
    with pytest.raises(FactNotFound):
        memory.restore_fact(tomb.id)  # another value took its place
