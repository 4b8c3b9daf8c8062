"""A research claim checked against the other documents of the run (issue 15: every
citation valid): the 1.5B model wrote "Both Brindlewave and Osprine pay …" from the
Tallowmere policy, and "Lumenvault 3.0 changed the retention to 30 days" from the first
release's notes, which only set it."""

from __future__ import annotations

import pytest

from gam_desktop.engine.research.family import checked_against_family
from gam_desktop.engine.research.models import Claim, Excerpt
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.engine.test_answers import built_policies

POLICIES = {
    "brindlewave-oncall-policy.md",
    "osprine-oncall-policy.md",
    "tallowmere-oncall-policy.md",
}
RELEASES = {f"lumenvault-{v}-release-notes.md" for v in ("3.0", "3.1", "3.2", "4.0")}
TALLOWMERE_PAY = "Engineers are paid $300 per week of rotation, with the next salary."
FIRST_DEFAULTS = "## Defaults\n\n- Retention of deleted files: 30 days (`keep_days = 30`).\n"


def claim(text: str, document: str, excerpt: str = "") -> Claim:
    source = Excerpt(id="E1", path="m.md", lines=(1, 1), text=excerpt, document=document)
    return Claim(text=text, sources=[source])


@pytest.mark.parametrize(
    ("text", "document", "excerpt", "documents", "kept"),
    [
        # names only other look-alikes than its source: dropped
        ("Both Brindlewave and Osprine pay $300 per week.", "tallowmere-oncall-policy.md",
         TALLOWMERE_PAY, POLICIES, False),
        # names its own beside another it does not cite: a guess at the other (the review's
        # "Both Osprine and Brindlewave pay $55", citing only Osprine's policy)
        ("Tallowmere pays $300 a week, more than Brindlewave.", "tallowmere-oncall-policy.md",
         TALLOWMERE_PAY, POLICIES, False),
        # … unless its excerpt names the other itself
        ("3.0 clients must upgrade to 3.2 first.", "lumenvault-4.0-release-notes.md",
         "Clients on 3.0 must upgrade to 3.2 before moving to 4.0.", RELEASES, True),
        # names none: `attributed` says which it is about
        ("Engineers are paid $300 per week.", "tallowmere-oncall-policy.md", TALLOWMERE_PAY,
         POLICIES, True),
        # a word all the policies share names none of them
        ("The on-call policy pays $300 per week.", "tallowmere-oncall-policy.md", TALLOWMERE_PAY,
         POLICIES, True),
        ("In 3.1 the retention was 30 days.", "lumenvault-3.2-release-notes.md", "30 days",
         RELEASES, False),
        # a change in the first release of the family, whose notes say none: dropped
        ("Lumenvault 3.0 changed the retention to 30 days.", "lumenvault-3.0-release-notes.md",
         FIRST_DEFAULTS, RELEASES, False),
        # … kept when its notes tell of one ("up from 14 days in the beta")
        ("Lumenvault 3.0 changed the retention to 30 days.", "lumenvault-3.0-release-notes.md",
         "- Retention: 30 days, up from 14 days in the beta.", RELEASES, True),
        # a later release may have changed it, whatever its notes' wording
        ("Lumenvault 3.2 changed the retention to 60 days.", "lumenvault-3.2-release-notes.md",
         "- Retention of deleted files: 60 days.", RELEASES, True),
        # … or a change from a release the memory lacks
        ("Lumenvault 3.0 increased the retention to 30 days.", "lumenvault-3.0-release-notes.md",
         "- Retention: 30 days (14 days in 2.6).", RELEASES, True),
        # the first release setting it, not changing it: kept
        ("Lumenvault 3.0 set the retention to 30 days.", "lumenvault-3.0-release-notes.md",
         FIRST_DEFAULTS, RELEASES, True),
        # no other version in the run: nothing to call it the first of
        ("Lumenvault 3.0 changed the retention to 30 days.", "lumenvault-3.0-release-notes.md",
         FIRST_DEFAULTS, {"lumenvault-3.0-release-notes.md"} | POLICIES, True),
        # "unchanged" is no change told
        ("Lumenvault 3.0 left the retention unchanged at 30 days.",
         "lumenvault-3.0-release-notes.md", FIRST_DEFAULTS, RELEASES, True),
    ],
)  # fmt: skip
def test_a_claim_is_checked_against_the_other_documents(
    text: str, document: str, excerpt: str, documents: set[str], kept: bool
) -> None:
    checked, dropped = checked_against_family([claim(text, document, excerpt)], documents)
    assert bool(checked) == kept and bool(dropped) != kept


def test_the_reason_names_the_documents_it_names() -> None:
    text = "Both Brindlewave and Osprine pay $300 per week."
    _kept, dropped = checked_against_family(
        [claim(text, "tallowmere-oncall-policy.md", TALLOWMERE_PAY)], POLICIES
    )
    assert dropped == [
        f"{text} (it names brindlewave-oncall-policy.md, osprine-oncall-policy.md, which it does "
        "not cite)"
    ]


def test_research_drops_a_claim_given_to_another_company(
    make_workflow, tmp_path, llm_server
) -> None:
    """The scripted model gives each company's sentence to the other company: each claim is
    dropped with the reason, and the excerpts' own statements stand instead."""
    workflow = built_policies(make_workflow, tmp_path)
    llm_server.state.faults.append(Fault("other_name", times=10, task="research_integrate"))
    report = workflow.research("Compare the escalation rules of Acme Corp and Borealis Systems")
    assert any("does not cite" in line and "Borealis" in line for line in report.dropped)
    for section in report.sections:
        for kept in section.claims:
            documents = {s.document for s in kept.sources}
            assert not ("acme_oncall.md" in documents and "Borealis" in kept.text), kept
            assert not ("borealis_oncall.md" in documents and "Acme" in kept.text), kept
    said = " ".join(c.text for s in report.sections for c in s.claims)
    assert "30 minutes" in said and "45 minutes" in said  # each one's own statement


WHICH_CHANGED = "Which Lumenvault releases changed the retention of deleted files?"


@pytest.mark.parametrize(
    ("text", "document", "excerpt", "kept"),
    [
        # asked which changed it, the first release's own value tells of no change
        ("Retention of deleted files: 30 days (`keep_days = 30`).",
         "lumenvault-3.0-release-notes.md", FIRST_DEFAULTS, False),
        # a later release's value may be the change asked for
        ("Retention of deleted files: 60 days.", "lumenvault-3.2-release-notes.md",
         "- Retention of deleted files: 60 days.", True),
        # "unchanged" is another check's: not this one's to call a change
        ("Lumenvault 3.0 keeps the retention unchanged at 30 days.",
         "lumenvault-3.0-release-notes.md", FIRST_DEFAULTS, True),
    ],
)  # fmt: skip
def test_asked_which_changed_the_first_release_answers_nothing(
    text: str, document: str, excerpt: str, kept: bool
) -> None:
    checked, _dropped = checked_against_family(
        [claim(text, document, excerpt)], RELEASES, WHICH_CHANGED
    )
    assert bool(checked) == kept
    # asked how it changed, the first release's value is where it started: kept
    how = "How did the retention of deleted files change across the Lumenvault releases?"
    assert checked_against_family([claim(text, document, excerpt)], RELEASES, how)[0]
