"""A note never says the opposite of its passage: a sentence that inverts what the passage
says (a negation added or lost) is replaced by the passage's own sentence, and nothing else
of the note is touched."""

from __future__ import annotations

import pytest

from gam_desktop.engine.ingest.faithful import faithful, inversions
from gam_desktop.engine.ingest.prompts import MemoryDraft
from tests.engine.test_notes import chunks_of, memorized

pytestmark = pytest.mark.timeout(30)

MIGRATION = """# Quillon 4.2 Release Notes

## Migration to Version 4.2

A full reindex is not required for those running 4.x. However, if you use remote
shards, see the first entry below.
"""


def test_a_sentence_that_drops_the_passages_negation_is_replaced_by_the_passage() -> None:
    note = "Migration to Quillon 4.2 requires a full reindex for those running 4.x."
    (found,) = inversions(note, MIGRATION)
    assert found.source == "A full reindex is not required for those running 4.x."
    assert faithful(note, MIGRATION) == found.source


def test_a_sentence_that_adds_a_negation_is_replaced_too() -> None:
    passage = "The nightly export keeps every attachment of the archived tickets.\n"
    note = "The nightly export never keeps the attachments of archived tickets."
    assert faithful(note, passage) == passage.strip()


def test_the_rest_of_the_note_and_its_paragraphs_stay_as_written() -> None:
    note = (
        "Quillon 4.2 is a maintenance release.\n\n"
        "Migration requires a full reindex for those running 4.x.\n"
        "- remote shards: see the first entry"
    )
    assert faithful(note, MIGRATION) == (
        "Quillon 4.2 is a maintenance release.\n\n"
        "A full reindex is not required for those running 4.x.\n"
        "- remote shards: see the first entry"
    )


@pytest.mark.parametrize(
    ("note", "passage"),
    [
        # the same polarity: nothing to replace
        (
            "A full reindex is not needed by those running 4.x.",
            MIGRATION,
        ),
        # the passage negates another clause of its sentence
        (
            "It is triaged in the weekly review.",
            "A SEV4 incident never pages; it is triaged in the weekly review.\n",
        ),
        # a negation of a word the note does not say ("no-op", "no pending")
        (
            "The setting enables or disables foreign constraints in a database.",
            "The setting is a no-op inside a transaction; foreign constraints may be "
            "enabled or disabled in a database only when there is no pending change.\n",
        ),
        # two negations cancel ("no NOT NULL")
        (
            "A column accepts NULL values or the declared type of the column.",
            "A column accepts NULL values (there is no NOT NULL check on the column) or "
            "the declared type of the column.\n",
        ),
        # one restating sentence of the passage agrees: the note paraphrases that one
        (
            "If the option is set, definitions are parsed but never enforced.",
            "If the option is set, definitions are parsed and enforced at once.\n\n"
            "If the option is set, definitions are parsed but never enforced.\n",
        ),
    ],
)
def test_a_note_that_says_what_the_passage_says_is_kept(note: str, passage: str) -> None:
    assert inversions(note, passage) == []
    assert faithful(note, passage) == note


def test_a_built_note_says_what_its_passage_says_not_the_opposite() -> None:
    """Through the memorize step: the model's body and tldr both invert the passage."""
    (chunk,) = chunks_of(MIGRATION, "quillon-4.2-release-notes.md", max_tokens=300)
    wrong = "Migration to Quillon 4.2 requires a full reindex for those running 4.x."
    draft = MemoryDraft(
        title="quillon_4_2_migration",
        tldr=wrong,
        memory=f"Quillon 4.2 changes how shards move. {wrong}",
    )
    (memory,) = memorized(draft, [chunk])
    assert "requires a full reindex" not in memory.memory + memory.tldr
    assert "A full reindex is not required for those running 4.x." in memory.tldr
    assert "changes how shards move" in memory.memory
