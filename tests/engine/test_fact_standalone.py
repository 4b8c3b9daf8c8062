"""A fact says what it is about on its own (facts/standalone.py): a statement a small model
left opening with a pronoun is learned as the user's sentence that says it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gam_desktop.engine.facts.learn import Extraction, Reconciliation, learn
from gam_desktop.engine.facts.record import Fact, read_facts, render
from gam_desktop.engine.facts.standalone import standalone
from tests.fakes import FakeLLM

NOW = datetime(2026, 9, 7, 12, 0, tzinfo=UTC)
LATER = datetime(2026, 9, 29, 12, 0, tzinfo=UTC)


def _extracted(*statements: str) -> dict:
    return {"facts": [{"statement": s, "topic": "work"} for s in statements]}


def _stored(root: Path, n: int, statement: str) -> Fact:
    made = Fact(f"f-20260907-12000{n}-00000{n}", statement, "the user", "work", "c-1", n, NOW, NOW)
    (root / made.home).parent.mkdir(parents=True, exist_ok=True)
    (root / made.home).write_text(render(made), encoding="utf-8")
    return made


def test_a_statement_opening_with_a_pronoun_becomes_the_sentence_that_says_it() -> None:
    told = (
        "My tortillas come from a small supplier called Maíz Dorado; they deliver on Mondays"
        " and Thursdays. The market is busy."
    )
    assert standalone("They deliver on Mondays and Thursdays.", told) == (
        "My tortillas come from a small supplier called Maíz Dorado; they deliver on Mondays"
        " and Thursdays."
    )


def test_the_sentence_before_is_kept_when_the_pronoun_opens_its_sentence_too() -> None:
    told = "My neighbour Colin keeps two hives. He harvests in August. I like honey."
    assert standalone("He harvests in August.", told) == (
        "My neighbour Colin keeps two hives. He harvests in August."
    )


def test_a_statement_that_names_its_subject_or_is_said_nowhere_is_kept() -> None:
    told = "Anne moved to Lisbon in May. It rains a lot there."
    assert standalone("Anne lives in Lisbon.", told) == "Anne lives in Lisbon."
    assert standalone("It is a large city.", told) == "It is a large city."  # not its words
    # (a word that only starts like a pronoun is none)
    assert standalone("Items are cheap in Lisbon.", told) == "Items are cheap in Lisbon."


def test_the_sentence_before_is_kept_when_the_sentence_names_nothing_its_pronoun_is() -> None:
    told = (
        "From next week our tortillas come from Maíz de Oro, not Maíz Dorado. Better price and"
        " they deliver daily."
    )
    assert standalone("They deliver daily.", told) == told


def test_learning_keeps_the_subject_with_what_it_does() -> None:
    told = (
        "My tortillas come from a small supplier called Maíz Dorado; they deliver on Mondays"
        " and Thursdays."
    )
    llm = FakeLLM(
        {
            Extraction: _extracted(
                "My tortillas come from Maíz Dorado.", "They deliver on Mondays and Thursdays."
            )
        }
    )
    learned = learn(llm, told, [], "c-1", 1, now=NOW)
    # (and only it: learned beside "My tortillas come from Maíz Dorado.", a change of
    # supplier would replace one of the two and leave the other current)
    assert [f.statement for f in learned.added] == [told]


def test_each_fact_naming_the_old_value_is_replaced_by_the_new_fact_most_like_it(
    tmp_path: Path,
) -> None:
    """ "…not Maíz Dorado" replaces where the supplier was named and where its deliveries
    were, each by the new fact most like it, though the model saw nothing to change."""
    supplier = _stored(tmp_path, 1, "My tortillas come from Maíz Dorado.")
    deliveries = _stored(tmp_path, 2, "Maíz Dorado deliver on Mondays and Thursdays.")
    told = (
        "From next week our tortillas come from Maíz de Oro, not Maíz Dorado, and Maíz de Oro"
        " deliver daily."
    )
    llm = FakeLLM(
        {
            Extraction: _extracted(
                "Our tortillas come from Maíz de Oro.", "Maíz de Oro deliver daily."
            ),
            Reconciliation: {"facts": [{"id": f"F{i}", "event": "NONE"} for i in (1, 2)]},
        }
    )
    learned = learn(llm, told, read_facts(tmp_path), "c-2", 1, now=LATER)
    replaced = {old.id: new.statement for old, new in learned.updated}
    assert replaced == {
        supplier.id: "Our tortillas come from Maíz de Oro.",
        deliveries.id: "Maíz de Oro deliver daily.",
    }
    assert not learned.added


def test_a_clause_copied_from_the_middle_of_a_sentence_becomes_the_sentence() -> None:
    told = "I'm saving up for a new press; the plan is a Quill 300. The shop is busy."
    assert standalone("the plan is a Quill 300.", told) == (
        "I'm saving up for a new press; the plan is a Quill 300."
    )
    renamed = "We renamed the zine: it's called Salt Lines now, Low Tide felt too gloomy."
    assert standalone("Low Tide felt too gloomy.", renamed) == renamed


def test_a_sentence_start_a_rewording_or_a_part_of_a_word_is_no_cut_clause() -> None:
    told = "I'm saving up for a new press; the plan is a Quill 300. I work as a live-sound tech."
    for kept in (
        "I'm saving up for a new press.",  # where the sentence starts: it says its subject
        "The plan for the new press is a Quill 300.",  # the model's own words
        "sound tech.",  # after a hyphen inside a word, not after a clause mark
    ):
        assert standalone(kept, told) == kept


def test_a_cut_clause_is_learned_as_its_sentence_and_replaced_when_its_value_goes(
    tmp_path: Path,
) -> None:
    told = "I'm saving up for a new press; the plan is a Quill 300."
    llm = FakeLLM(
        {Extraction: _extracted("I'm saving up for a new press.", "the plan is a Quill 300.")}
    )
    first = learn(llm, told, [], "c-1", 1, now=NOW)
    # one fact: beside "I'm saving up for a new press.", the fragment would stay current
    assert [f.statement for f in first.added] == [told]
    stored = _stored(tmp_path, 1, told)
    change = "Change of plan on the press: I bought a used Brava 9 instead of the Quill."
    llm = FakeLLM(
        {
            Extraction: _extracted("I bought a used Brava 9 instead of the Quill."),
            Reconciliation: {"facts": [{"id": "F1", "event": "NONE"}]},
        }
    )
    second = learn(llm, change, read_facts(tmp_path), "c-2", 1, now=LATER)
    assert [old.id for old, _new in second.updated] == [stored.id]
