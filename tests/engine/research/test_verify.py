"""The research fact check (research/verify.py): a claim its cited evidence contradicts is
dropped, a claim in its evidence's own words costs no call, and a check that cannot be
made keeps the claim and says so. Against the scripted server, whose "misread" integrator
drops negations as a small model skimming its evidence does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.research.budget import Limits
from gam_desktop.engine.research.models import Claim, Excerpt
from gam_desktop.engine.research.report import markdown
from gam_desktop.engine.research.verify import needs_check
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.engine.research.test_research import COMPARE, claims_of, research_tasks
from tests.engine.test_answers import policy

NEVER = (
    "There is no escalation time at Borealis Systems: an unacknowledged incident is never "
    "escalated to the secondary engineer."
)
MISREAD = "There is escalation time at Borealis Systems"  # what dropping the negations leaves


@pytest.fixture
def memory(make_workflow, tmp_path: Path):
    """Acme escalates after 30 minutes; Borealis never escalates, in the same headings."""
    acme = tmp_path / "acme_oncall.md"
    acme.write_text(policy("Acme Corp", 5, 30, "PagerBell"))
    borealis = tmp_path / "borealis_oncall.md"
    text = policy("Borealis Systems", 15, 45, "Klaxon")
    escalation = next(s for s in text.split(". ") if "secondary engineer after" in s)
    borealis.write_text(text.replace(escalation + ".", NEVER))
    workflow = make_workflow(min_tokens=20, max_tokens=90)
    workflow.add(files=[acme, borealis])
    return workflow


def all_claims(report) -> str:
    return " ".join(c.text for s in report.sections for c in s.claims)


def test_a_claim_its_evidence_contradicts_is_dropped(memory, llm_server) -> None:
    llm_server.state.faults.append(Fault("misread", times=10, task="research_integrate"))
    report = memory.research(COMPARE)
    assert MISREAD not in all_claims(report)
    assert any(MISREAD in line and "fact check" in line for line in report.dropped)
    assert "30 minutes" in claims_of(report, "Acme")  # in its evidence's words: kept
    # only the rewritten claims were put to the checker
    checked = [r["messages"][-1]["content"] for r in llm_server.state.requests
               if r["task"] == "research_verify"]  # fmt: skip
    assert checked and all("CLAIM: " in u and "never" not in u.split("CLAIM: ")[1] for u in checked)
    assert "## Claims left out" in markdown(report)


def test_a_claim_in_its_evidence_words_needs_no_check(memory, llm_server) -> None:
    report = memory.research(COMPARE)
    assert "never escalated" in claims_of(report, "Borealis")
    assert "30 minutes" in claims_of(report, "Acme")
    assert "research_verify" not in research_tasks(llm_server) and not report.dropped


def test_a_check_that_fails_keeps_the_claim_and_says_so(memory, llm_server) -> None:
    llm_server.state.faults += [
        Fault("misread", times=10, task="research_integrate"),
        Fault("garbage", times=20, task="research_verify", on_reask=True),
    ]
    report = memory.research(COMPARE)
    assert MISREAD in all_claims(report) and not report.dropped
    assert any("could not be fact-checked" in note for note in report.notes)


def test_a_check_past_the_call_limit_is_skipped_and_said(memory, llm_server) -> None:
    llm_server.state.faults.append(Fault("misread", times=10, task="research_integrate"))
    report = memory.research(COMPARE, Limits(llm_calls=3))  # the plan and two integrations
    assert "research_verify" not in research_tasks(llm_server)
    assert MISREAD in all_claims(report) and report.partial
    assert any("not fact-checked: the LLM call limit (3" in note for note in report.notes)


def excerpt(text: str) -> Excerpt:
    return Excerpt(id="E1", path="a/b.md", lines=(1, 2), text=text)


@pytest.mark.parametrize(
    ("claim", "checked"),
    [
        ("No settings were renamed in this release.", False),  # a sentence of it
        ("Lumenvault 3.0: no settings were renamed in this release", False),  # labelled
        ("Renamed: no settings were renamed", False),  # heading and all
        ("Settings were renamed in this release.", True),  # its negation left out
        ("Lumenvault 3.0 renamed the backup interval setting.", True),  # its own words
        ("The defaults changed everywhere: defaults stay", True),  # no label, a short tail
        ("Lumenvault 3.0 renamed every setting: release", True),  # a word of it after a colon
    ],
)
def test_needs_check_spares_the_evidence_own_words(claim: str, checked: bool) -> None:
    evidence = excerpt("## Renamed\n\nNo settings were renamed in this release. Defaults stay.")
    assert needs_check(Claim(text=claim, sources=[evidence])) is checked


def test_a_claim_citing_no_shown_text_is_not_checked() -> None:
    assert not needs_check(Claim(text="Settings were renamed.", sources=[excerpt("")]))
