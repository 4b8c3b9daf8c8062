"""A note never says the opposite of its passage: a sentence that inverts what the passage
says (a negation added or lost) is replaced by the passage's own sentence, and nothing else
of the note is touched."""

from __future__ import annotations

import pytest

from gam_desktop.engine.ingest.faithful import faithful, inversions
from gam_desktop.engine.ingest.prompts import MemoryDraft
from tests.engine.test_notes import chunks_of, memorized

pytestmark = pytest.mark.timeout(30)

MIGRATION = """# Elmfield Hall Booking Guide 2025

## Moving to the 2025 Rules

A new deposit is not required for those booked in 2024. However, if you hire the
stage, see the first entry below.
"""


def test_a_sentence_that_drops_the_passages_negation_is_replaced_by_the_passage() -> None:
    note = "Moving to the 2025 rules requires a new deposit for those booked in 2024."
    (found,) = inversions(note, MIGRATION)
    assert found.source == "A new deposit is not required for those booked in 2024."
    assert faithful(note, MIGRATION) == found.source


def test_a_sentence_that_adds_a_negation_is_replaced_too() -> None:
    passage = "The nightly export keeps every attachment of the archived tickets.\n"
    note = "The nightly export never keeps the attachments of archived tickets."
    assert faithful(note, passage) == passage.strip()


def test_the_rest_of_the_note_and_its_paragraphs_stay_as_written() -> None:
    note = (
        "The 2025 guide is a short one.\n\n"
        "Moving requires a new deposit for those booked in 2024.\n"
        "- the stage: see the first entry"
    )
    assert faithful(note, MIGRATION) == (
        "The 2025 guide is a short one.\n\n"
        "A new deposit is not required for those booked in 2024.\n"
        "- the stage: see the first entry"
    )


@pytest.mark.parametrize(
    ("note", "passage"),
    [
        # the same polarity: nothing to replace
        (
            "A new deposit is not needed by those booked in 2024.",
            MIGRATION,
        ),
        # the passage negates another clause of its sentence
        (
            "It is noted in the weekly log.",
            "A late return never costs a fee; it is noted in the weekly log.\n",
        ),
        # a negation of a word the note does not say ("no-op", "no pending")
        (
            "The switch turns the porch lights on or off in the garden.",
            "The switch is a no-op during a power cut; the porch lights may be "
            "turned on or off in the garden only when there is no pending timer.\n",
        ),
        # two negations cancel ("no NOT EMPTY")
        (
            "A form accepts blank answers or the default answer of the form.",
            "A form accepts blank answers (there is no NOT EMPTY rule on the form) or "
            "the default answer of the form.\n",
        ),
        # one restating sentence of the passage agrees: the note paraphrases that one
        (
            "If the option is set, visits are logged but never charged.",
            "If the option is set, visits are logged and charged at once.\n\n"
            "If the option is set, visits are logged but never charged.\n",
        ),
    ],
)
def test_a_note_that_says_what_the_passage_says_is_kept(note: str, passage: str) -> None:
    assert inversions(note, passage) == []
    assert faithful(note, passage) == note


def test_a_built_note_says_what_its_passage_says_not_the_opposite() -> None:
    """Through the memorize step: the model's body and tldr both invert the passage."""
    (chunk,) = chunks_of(MIGRATION, "elmfield-hall-booking-guide-2025.md", max_tokens=300)
    wrong = "Moving to the 2025 rules requires a new deposit for those booked in 2024."
    draft = MemoryDraft(
        title="elmfield_hall_2025_rules",
        tldr=wrong,
        memory=f"The 2025 guide changes how bookings move. {wrong}",
    )
    (memory,) = memorized(draft, [chunk])
    assert "requires a new deposit" not in memory.memory + memory.tldr
    assert "A new deposit is not required for those booked in 2024." in memory.tldr
    assert "changes how bookings move" in memory.memory
