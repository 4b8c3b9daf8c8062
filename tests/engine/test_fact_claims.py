"""What a fact claims (issue 12): the subject and single-valued property a statement sets,
so that "moved to Braga" updates "lives in Porto" whatever a small model decides."""

from __future__ import annotations

import pytest

from gam_desktop.engine.facts.claims import claim


def replaces(new: str, old: str) -> bool:
    """Whether `new` sets a property `old` set, for the same subject (as learning asks)."""
    a, b = claim(new), claim(old)
    return a is not None and b is not None and bool(a.shared(b))


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("The user lives in Braga.", "I live in Porto."),
        ("The user moved to Braga last week.", "The user lives in Porto."),
        ("The user now works at Braga hospital.", "I work as a nurse at Sao Joao hospital."),
        (
            "The user's brother Tomas moved to Paris.",
            "The user's brother Tomas is a chef in Lisbon.",
        ),
        ("The user's brother moved to Paris.", "The user's brother Tomas lives in Lisbon."),
        ("The user no longer has the cat Pimenta.", "The user adopted a cat called Pimenta."),
        ("My favourite book is now The Stranger.", "The user's favourite book is Blindness."),
        ("I don't live in Porto anymore.", "The user lives in Porto."),
    ],
)
def test_the_same_property_of_the_same_subject(new: str, old: str) -> None:
    assert replaces(new, old)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("The user lives in Braga.", "The user's brother Tomas lives in Lisbon."),
        ("The user's friend Tomas Silva is a pilot.", "The user's brother Tomas is a chef."),
        ("Pimenta lives with the user's mother now.", "The user adopted a cat called Pimenta."),
        ("The user lives in Braga.", "The user works at Braga hospital."),
        ("The user works as a pilot.", "The user works at Braga hospital."),
        ("The user adopted a dog.", "The user adopted a cat."),
        ("The user likes jazz.", "The user likes tea."),  # tastes add up
        ("The user started learning the cello.", "The user plays the piano."),
    ],
)
def test_different_subjects_or_properties(new: str, old: str) -> None:
    assert not replaces(new, old)


def test_a_retraction_is_negated() -> None:
    said = claim("I no longer work at Acme.")
    assert said is not None and said.negated and said.subject == {"user"}
    kept = claim("The user still works at Acme.")
    assert kept is not None and not kept.negated
