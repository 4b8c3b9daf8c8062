"""A fact says what it is about on its own (facts/standalone.py): a statement a small model
left opening with a pronoun is learned as the user's sentence that says it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gam_desktop.engine.facts.learn import Extraction, Reconciliation, learn
from gam_desktop.engine.facts.record import Fact, read_facts, render
from gam_desktop.engine.facts.standalone import standalone
from tests.fakes import FakeLLM

NOW = datetime(2026, 4, 13, 12, 0, tzinfo=UTC)
LATER = datetime(2026, 5, 5, 12, 0, tzinfo=UTC)


def _extracted(*statements: str) -> dict:
    return {"facts": [{"statement": s, "topic": "work"} for s in statements]}


def _stored(root: Path, n: int, statement: str) -> Fact:
    made = Fact(f"f-20260413-12000{n}-00000{n}", statement, "the user", "work", "c-1", n, NOW, NOW)
    (root / made.home).parent.mkdir(parents=True, exist_ok=True)
    (root / made.home).write_text(render(made), encoding="utf-8")
    return made


def test_a_statement_opening_with_a_pronoun_becomes_the_sentence_that_says_it() -> None:
    told = (
        "My hay comes from a small farm called Hofdijk Farm; they deliver on Tuesdays"
        " and Fridays. The stable is busy."
    )
    assert standalone("They deliver on Tuesdays and Fridays.", told) == (
        "My hay comes from a small farm called Hofdijk Farm; they deliver on Tuesdays and Fridays."
    )


def test_the_sentence_before_is_kept_when_the_pronoun_opens_its_sentence_too() -> None:
    told = "My neighbour Wendell keeps an old sailboat. He paints it in June. I like boats."
    assert standalone("He paints it in June.", told) == (
        "My neighbour Wendell keeps an old sailboat. He paints it in June."
    )


def test_a_statement_that_names_its_subject_or_is_said_nowhere_is_kept() -> None:
    told = "Anne moved to Lisbon in May. It rains a lot there."
    assert standalone("Anne lives in Lisbon.", told) == "Anne lives in Lisbon."
    assert standalone("It is a large city.", told) == "It is a large city."  # not its words
    # (a word that only starts like a pronoun is none)
    assert standalone("Items are cheap in Lisbon.", told) == "Items are cheap in Lisbon."


def test_the_sentence_before_is_kept_when_the_sentence_names_nothing_its_pronoun_is() -> None:
    told = (
        "From next week our hay comes from Hof van Dijk, not Hofdijk Farm. Softer bales and"
        " they deliver every morning."
    )
    assert standalone("They deliver every morning.", told) == told


def test_learning_keeps_the_subject_with_what_it_does() -> None:
    told = (
        "My hay comes from a small farm called Hofdijk Farm; they deliver on Tuesdays and Fridays."
    )
    llm = FakeLLM(
        {
            Extraction: _extracted(
                "My hay comes from Hofdijk Farm.", "They deliver on Tuesdays and Fridays."
            )
        }
    )
    learned = learn(llm, told, [], "c-1", 1, now=NOW)
    # (and only it: learned beside "My hay comes from Hofdijk Farm.", a change of
    # supplier would replace one of the two and leave the other current)
    assert [f.statement for f in learned.added] == [told]


def test_each_fact_naming_the_old_value_is_replaced_by_the_new_fact_most_like_it(
    tmp_path: Path,
) -> None:
    """ "…not Hofdijk Farm" replaces where the supplier was named and where its deliveries
    were, each by the new fact most like it, though the model saw nothing to change."""
    supplier = _stored(tmp_path, 1, "My hay comes from Hofdijk Farm.")
    deliveries = _stored(tmp_path, 2, "Hofdijk Farm deliver on Tuesdays and Fridays.")
    told = (
        "From next week our hay comes from Hof van Dijk, not Hofdijk Farm, and Hof van Dijk"
        " deliver every morning."
    )
    llm = FakeLLM(
        {
            Extraction: _extracted(
                "Our hay comes from Hof van Dijk.", "Hof van Dijk deliver every morning."
            ),
            Reconciliation: {"facts": [{"id": f"F{i}", "event": "NONE"} for i in (1, 2)]},
        }
    )
    learned = learn(llm, told, read_facts(tmp_path), "c-2", 1, now=LATER)
    replaced = {old.id: new.statement for old, new in learned.updated}
    assert replaced == {
        supplier.id: "Our hay comes from Hof van Dijk.",
        deliveries.id: "Hof van Dijk deliver every morning.",
    }
    assert not learned.added


def test_a_clause_copied_from_the_middle_of_a_sentence_becomes_the_sentence() -> None:
    told = "I'm setting money aside for a new kiln; my choice is a Brenna 40. The studio is busy."
    assert standalone("my choice is a Brenna 40.", told) == (
        "I'm setting money aside for a new kiln; my choice is a Brenna 40."
    )
    renamed = "We renamed the bakery: it's called Crumb Street now, Rise Up sounded too loud."
    assert standalone("Rise Up sounded too loud.", renamed) == renamed


def test_a_sentence_start_a_rewording_or_a_part_of_a_word_is_no_cut_clause() -> None:
    told = (
        "I'm setting money aside for a new kiln; my choice is a Brenna 40. I'm a part-time potter."
    )
    for kept in (
        "I'm setting money aside for a new kiln.",  # where the sentence starts: it says its subject
        "My choice for the new kiln is a Brenna 40.",  # the model's own words
        "time potter.",  # after a hyphen inside a word, not after a clause mark
    ):
        assert standalone(kept, told) == kept


def test_a_cut_clause_is_learned_as_its_sentence_and_replaced_when_its_value_goes(
    tmp_path: Path,
) -> None:
    told = "I'm setting money aside for a new kiln; my choice is a Brenna 40."
    llm = FakeLLM(
        {
            Extraction: _extracted(
                "I'm setting money aside for a new kiln.", "my choice is a Brenna 40."
            )
        }
    )
    first = learn(llm, told, [], "c-1", 1, now=NOW)
    # one fact: beside "I'm setting money aside for a new kiln.", the fragment would stay current
    assert [f.statement for f in first.added] == [told]
    stored = _stored(tmp_path, 1, told)
    change = "Change of mind on the kiln: I bought a used Tovel 9 instead of the Brenna."
    llm = FakeLLM(
        {
            Extraction: _extracted("I bought a used Tovel 9 instead of the Brenna."),
            Reconciliation: {"facts": [{"id": "F1", "event": "NONE"}]},
        }
    )
    second = learn(llm, change, read_facts(tmp_path), "c-2", 1, now=LATER)
    assert [old.id for old, _new in second.updated] == [stored.id]
