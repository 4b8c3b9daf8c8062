"""A research claim is checked as the answering pipeline checks an answer: its sentences are
its sources' own, its identifiers are theirs, its names are not another source's, its numbers
and most of its words are its sentences'. Each check is also run switched off: the claim it
drops then stands, so each test fails without the check it tests."""

from __future__ import annotations

import pytest

from gam_desktop.engine.research.claims import check_claims, claim_checks, names
from gam_desktop.engine.research.models import ClaimReply, Excerpt

HERON = Excerpt(
    id="E1",
    path="policies/heron.md",
    lines=(5, 7),
    label="Heron oncall — Escalation",
    document="Heron oncall",
    text="An unacknowledged incident escalates to the secondary engineer after 30 minutes. "
    "Escalation reviews take place every Thursday.",
)
WREN = Excerpt(
    id="E2",
    path="policies/wren.md",
    lines=(5, 7),
    label="Wren oncall — Escalation",
    document="Wren oncall",
    text="An unacknowledged incident escalates to the secondary engineer after 45 minutes.",
)
PEBBLECAST_1 = Excerpt(
    id="E3",
    path="pebblecast/limits.md",
    lines=(2, 3),
    label="Pebblecast 1.0 release notes — Limits",
    document="Pebblecast 1.0 release notes",
    text="Longest episode: 12 hours. Each account may follow up to 300 shows.",
)
RUN = {e.id: e for e in (HERON, WREN, PEBBLECAST_1)}
SENTENCE = "An unacknowledged incident escalates to the secondary engineer after 30 minutes."
COMPARE = "Compare the escalation rules of Heron Labs and Wren Inc."


def check(
    text: str,
    quotes: list[str],
    sources: list[str],
    question: str = COMPARE,
    shown: tuple[Excerpt, ...] = (HERON, WREN),
    without: str = "",
):
    """`text` through the claim checks (but the one named `without`)."""
    rules = [r for r in claim_checks(question) if type(r).__name__ != without]
    claim = ClaimReply(text=text, sources=sources, quotes=quotes)
    return check_claims([claim], question, question, list(shown), RUN, rules)


@pytest.mark.parametrize("on", [True, False])
def test_a_supported_claim_is_kept_with_its_sentence_and_source(on: bool) -> None:
    """The model's copy of the sentence, in other case and without its full stop, citing the
    wrong excerpt: kept with the sentence as its source writes it, from the excerpt holding
    it."""
    copied = SENTENCE.lower().rstrip(".")
    kept, dropped = check(
        "Heron escalates after 30 minutes.",
        [copied],
        ["E2"],
        without="" if on else "QuotesInSources",
    )
    held = [(c.text, c.sources, [q.sentence for q in c.quotes]) for c in kept]
    assert (held == [("Heron escalates after 30 minutes.", [HERON], [SENTENCE])]) is on
    assert not on or not dropped


@pytest.mark.parametrize("on", [True, False])
def test_a_claim_whose_sentence_is_not_in_its_source_is_dropped(on: bool) -> None:
    invented = "An unacknowledged incident escalates after 20 minutes."
    kept, dropped = check(
        "Heron escalates after 20 minutes.",
        [invented],
        ["E1"],
        without="" if on else "QuotesInSources",
    )
    assert (kept == []) is on
    assert not on or "it quotes nothing the passages say" in dropped[0]


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Heron escalates after 90 minutes.", "do not state 90"),  # a number not its sentence's
        ("The escalation rules of Heron Labs.", "only restates the question"),
    ],
)
def test_a_claim_its_sentence_does_not_state_is_dropped(on: bool, text: str, why: str) -> None:
    kept, dropped = check(text, [SENTENCE], ["E1"], without="" if on else "AnswerFromQuotes")
    assert (kept == []) is on
    assert not on or why in dropped[0]


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize(
    "text",
    [
        "Pebblecast 2.0 accounts may follow up to 300 shows.",
        "Accounts may follow up to 300 shows.",  # of the sub-question's version, saying none
    ],
)
def test_a_claim_about_a_version_from_another_versions_document_is_dropped(
    on: bool, text: str
) -> None:
    question = "How many shows may a Pebblecast 2.0 account follow?"
    kept, dropped = check(
        text,
        ["Each account may follow up to 300 shows."],
        ["E3"],
        question=question,
        shown=(PEBBLECAST_1,),
        without="" if on else "AboutWhatIsAsked",
    )
    assert (kept == []) is on
    assert not on or "its sources do not name 2.0" in dropped[0]
    # the same claim about the version of its document holds
    own = check(
        text.replace("2.0", "1.0"), [], ["E3"], question.replace("2.0", "1.0"), (PEBBLECAST_1,)
    )
    assert own[0]


@pytest.mark.parametrize("on", [True, False])
def test_a_claim_giving_one_sources_sentence_to_another_is_dropped(on: bool) -> None:
    kept, dropped = check(
        "Wren escalates after 30 minutes.",
        [SENTENCE],
        ["E1"],
        without="" if on else "NamedInSources",
    )
    assert (kept == []) is on
    assert not on or "its sources do not name Wren" in dropped[0]
    # its own name, or one no source read names, is no other source's
    assert check("At Heron Labs it escalates after 30 minutes.", [SENTENCE], ["E1"])[0]
    assert check("Pager Duty escalates after 30 minutes.", [SENTENCE], ["E1"])[0]


@pytest.mark.parametrize("on", [True, False])
def test_a_figure_given_of_another_thing_is_dropped(on: bool) -> None:
    """ "The refresh interval is 12 hours" of "Longest episode: 12 hours": the claim's own
    words are the question's, its sentence says none of them."""
    kept, dropped = check(
        "The default refresh interval is 12 hours.",
        ["Longest episode: 12 hours."],
        ["E3"],
        question="What is the default refresh interval of Pebblecast 1.0?",
        shown=(PEBBLECAST_1,),
        without="" if on else "SaidBySentences",
    )
    assert (kept == []) is on
    assert not on or "its sentences do not say" in dropped[0]


def test_ids_written_into_the_text_and_an_id_of_no_excerpt() -> None:
    kept, dropped = check("Heron escalates after 30 minutes [E1].", [SENTENCE], ["E1, E9"])
    assert [c.text for c in kept] == ["Heron escalates after 30 minutes."]
    assert dropped == ["a citation of “Heron escalates after 30 minutes.”: E9 (not found)"]
    # citing only what the run never showed, and quoting nothing it says
    kept, dropped = check("The policy was last reviewed in spring.", [], ["notes/x.md"])
    assert kept == [] and "cited notes/x.md: not an excerpt of this run" in dropped[0]


def test_the_names_a_claim_gives() -> None:
    assert names("Both Heron Labs and Wren pay $5 in March. Escalation is fast.") == [
        "heron labs",
        "wren",
    ]
    assert names("The Pebblecast client, per RFC-7.") == ["pebblecast", "rfc-7"]
