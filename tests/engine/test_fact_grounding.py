"""A fact says what the user's words say (facts/grounded.py): a small model's additions (a
name from the prompt's example, an inference, another fact restated under an unrelated
turn, our prompt's markers) are not learned. The cases are the kinds a 1.5B model wrote
in the persona sessions of issue 37."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gam_desktop.engine.facts.grounded import grounded, names_and_numbers, without_markers
from gam_desktop.engine.facts.learn import Extraction, Reconciliation, learn
from gam_desktop.engine.facts.record import Fact, read_facts, render
from tests.fakes import FakeLLM

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
EARLIER = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def test_names_and_numbers_are_capitals_inside_a_sentence_and_digits() -> None:
    found = names_and_numbers("The user's sister Anne meets Johan Berg at 14:30. Tea is on 2 May.")
    assert found == {"anne", "johan", "berg", "14:30", "2", "may"}


def test_a_name_the_user_never_wrote_is_not_theirs() -> None:
    said = "Fjordbyte changed their order: 100 people instead of 80, same date."
    assert grounded("Fjordbyte's order is now 100 people instead of 80.", said)
    assert not grounded("The user's sister Anne changed her order to 100 people.", said)
    assert not grounded("Fjordbyte's order is now 120 people.", said)  # a number made up


def test_an_inference_of_several_new_words_is_not_theirs_one_paraphrase_is() -> None:
    said = "I taught chemistry for thirty years and now I finally have time for the bees."
    assert grounded("The user taught chemistry for thirty years.", said)
    assert grounded("The user keeps bees.", said)  # one word of its own: a paraphrase
    assert not grounded(
        "The user has time for the bees, which implies she is interested in outdoor activities.",
        said,
    )


def test_our_prompts_markers_are_taken_out() -> None:
    assert without_markers("Juno's hive is thriving (subject: the user) (N1)") == (
        "Juno's hive is thriving"
    )


def _extraction(*statements: str) -> dict:
    return {"facts": [{"statement": s, "topic": "people"} for s in statements]}


def test_an_extracted_fact_with_a_name_from_nowhere_is_not_learned() -> None:
    llm = FakeLLM(
        {
            Extraction: _extraction(
                "The user's sister Anne will attend the lunch at Fjordbyte.",
                "The user is catering a lunch for Fjordbyte on 6 November for 80 people.",
            )
        }
    )
    said = (
        "We got booked to cater a lunch for a software company, Fjordbyte, on 6 November,"
        " for 80 people."
    )
    learned = learn(llm, said, [], "c-1", 1, now=NOW)
    assert [f.statement for f in learned.added] == [
        "The user is catering a lunch for Fjordbyte on 6 November for 80 people."
    ]


def _stored(root: Path, statement: str, n: int = 1) -> list[Fact]:
    made = Fact(
        f"f-20261101-090000-00000{n}", statement, "the user", "work", "c-1", n, EARLIER, EARLIER
    )
    (root / made.home).parent.mkdir(parents=True, exist_ok=True)
    (root / made.home).write_text(render(made), encoding="utf-8")
    return read_facts(root)


def test_an_update_that_restates_the_old_fact_under_another_turn_is_refused(
    tmp_path: Path,
) -> None:
    """The model "updated" a fact into another fact's words under a turn about neither."""
    existing = _stored(tmp_path, "Studio Nord charges 80 złoty an hour for our Monday slot.")
    llm = FakeLLM(
        {
            Extraction: _extraction("The recording day at Nordlys is now 2 April."),
            Reconciliation: {
                "facts": [
                    {
                        "id": "F1",
                        "event": "UPDATE",
                        "statement": "Studio Nord is putting the rent for our Monday slot up"
                        " to 90 złoty an hour.",
                    },
                    {"id": "N1", "event": "ADD"},
                ]
            },
        }
    )
    said = (
        "Nordlys moved us again! The recording day is now 2 April, because their engineer is ill."
    )
    learned = learn(llm, said, existing, "c-2", 3, now=NOW)
    assert not learned.updated, learned.updated
    assert [f.statement for f in learned.added] == ["The recording day at Nordlys is now 2 April."]


def test_an_update_grounded_in_the_turn_and_the_old_fact_stands(tmp_path: Path) -> None:
    existing = _stored(
        tmp_path, "The user is catering a lunch for Fjordbyte on 6 November for 80 people."
    )
    llm = FakeLLM(
        {
            Extraction: _extraction("Fjordbyte changed their order to 100 people."),
            Reconciliation: {
                "facts": [
                    {
                        "id": "F1",
                        "event": "UPDATE",
                        "statement": "The user is catering a lunch for Fjordbyte on 6 November "
                        "for 100 people (subject: the user).",
                    },
                    {"id": "N1", "event": "NONE"},
                ]
            },
        }
    )
    said = "Fjordbyte changed their order: 100 people instead of 80, same date."
    learned = learn(llm, said, existing, "c-2", 3, now=NOW)
    ((_old, new),) = learned.updated
    assert new.statement == (
        "The user is catering a lunch for Fjordbyte on 6 November for 100 people."
    )


def test_an_update_that_only_adds_to_the_old_fact_is_refused_and_the_new_fact_learned(
    tmp_path: Path,
) -> None:
    """A 1.5B model "updated" the truck into the truck and the turn's price, and called the
    price already known: the price would have lived in two facts, of which a later change
    replaces one. Nothing of the old fact is replaced: it stays, and the price is learned
    as itself."""
    truck = "I run a taco truck called Little Comal, mostly lunch service at office parks."
    existing = _stored(tmp_path, truck)
    llm = FakeLLM(
        {
            Extraction: _extraction("The birria taco costs 95 kronor for two."),
            Reconciliation: {
                "facts": [
                    {
                        "id": "F1",
                        "event": "UPDATE",
                        "statement": f"{truck} The birria taco costs 95 kronor for two.",
                    },
                    {"id": "N1", "event": "NONE"},
                ]
            },
        }
    )
    said = "Our best seller is the birria taco; it's 95 kronor for two."
    learned = learn(llm, said, existing, "c-2", 3, now=NOW)
    assert not learned.updated and not learned.deleted
    assert [f.statement for f in learned.added] == ["The birria taco costs 95 kronor for two."]


def test_an_update_into_a_statement_about_something_else_is_refused(tmp_path: Path) -> None:
    """A 1.5B model "updated" the operation's booking into the turn's "The names drive me
    mad." (nothing in common), and a habit into a job because both said "instead": the old
    facts stay current and the turn's statements are learned as themselves."""
    operation = "My knee operation is booked for 14 April at 9:30, with Dr. Haldane."
    habit = "I'm cycling instead, about 30 kilometres on Sunday mornings."
    _stored(tmp_path, operation)
    existing = _stored(tmp_path, habit, 2)
    told = "The names drive me mad. I'm doing sound at a festival in August instead."
    new = ["The names drive me mad.", "I'm doing sound at a festival in August instead."]
    llm = FakeLLM(
        {
            Extraction: _extraction(*new),
            Reconciliation: {
                "facts": [
                    {"id": "F1", "event": "UPDATE", "statement": new[0]},
                    {"id": "F2", "event": "UPDATE", "statement": new[1]},
                    {"id": "N1", "event": "NONE"},
                    {"id": "N2", "event": "NONE"},
                ]
            },
        }
    )
    learned = learn(llm, told, existing, "c-2", 6, now=NOW)
    assert not learned.updated and not learned.deleted
    assert sorted(f.statement for f in learned.added) == sorted(new)


def test_an_update_that_swaps_in_a_name_from_a_turn_about_something_else_is_refused(
    tmp_path: Path,
) -> None:
    """A turn about the GP's appointment, and a 1.5B model "updated" the fact about the
    surgeon's operation by putting the GP's look-alike name in it: the turn shares nothing
    with that fact besides the names swapped and a month."""
    operation = "The operation is now on 5 May at 8:15, because Dr. Lindqvist is away in April."
    existing = _stored(tmp_path, operation)
    told = "Dr. Lindqvest wants to see me on 2 April at 11:40 about my blood pressure."
    swapped = operation.replace("Lindqvist", "Lindqvest")
    llm = FakeLLM(
        {
            Extraction: _extraction(told),
            Reconciliation: {
                "facts": [
                    {"id": "F1", "event": "UPDATE", "statement": swapped},
                    {"id": "N1", "event": "NONE"},
                ]
            },
        }
    )
    learned = learn(llm, told, existing, "c-2", 3, now=NOW)
    assert not learned.updated and [f.statement for f in learned.added] == [told]


def _model_updates(old: str, into: str) -> FakeLLM:
    return FakeLLM(
        {
            Extraction: _extraction(into),
            Reconciliation: {
                "facts": [
                    {"id": "F1", "event": "UPDATE", "statement": into},
                    {"id": "N1", "event": "NONE"},
                ]
            },
        }
    )


def test_two_prices_in_the_same_unit_are_not_one_fact(tmp_path: Path) -> None:
    """A 1.5B model "updated" the price of one dish into the price of a new dish because
    both were in the same currency "for two": a value's unit is part of the value, not what
    the facts are about. The old price stays current and the new one is learned as itself."""
    espresso = "Our espresso is 3 euros a cup."
    existing = _stored(tmp_path, espresso)
    told = "The new oat latte is on the board now: 4 euros a cup."
    learned = learn(_model_updates(espresso, told), told, existing, "c-2", 2, now=NOW)
    assert not learned.updated and [f.statement for f in learned.added] == [told]


def test_a_count_that_changes_with_nothing_else_said_is_an_update(tmp_path: Path) -> None:
    """What a number counts is what two statements are about when neither says anything
    else: "2 cats" becomes "3 cats"."""
    existing = _stored(tmp_path, "I have 2 cats.")
    told = "I have 3 cats now."
    learned = learn(_model_updates("I have 2 cats.", told), told, existing, "c-2", 2, now=NOW)
    ((old, new),) = learned.updated
    assert old.statement == "I have 2 cats." and new.statement == told
