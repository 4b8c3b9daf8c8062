"""Research mode (issue 15) against the scripted server: plan → search → integrate →
reflect over look-alike on-call policies, the report and its checked citations, the limits,
cancelling, the fallbacks for small models and servers without tools, saving and rollback."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gam_desktop.engine.llm import capabilities
from gam_desktop.engine.models import Citation
from gam_desktop.engine.progress import OperationCancelled
from gam_desktop.engine.research.budget import Limits
from gam_desktop.engine.research.models import Claim, ClaimReply, Excerpt, Notes, SectionNotes
from gam_desktop.engine.research.report import NOT_SAID, build, markdown
from gam_desktop.engine.research.steps import absent, attributed, check_claims, fallback_plan
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.store.naming import sanitize_folder_name
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import ORBIT_NOTES, built_documents, built_orbit_notes
from tests.engine.test_answers import built_policies

COMPARE = "Compare the escalation rules of Acme Corp and Borealis Systems"
FOLLOW_UP = "What are the escalation rules of Acme Corp; and at Cobalt Labs?"


@pytest.fixture
def memory(make_workflow, tmp_path: Path):
    """Three on-call policies with the same headings and different numbers, built."""
    return built_policies(make_workflow, tmp_path)


def research_tasks(server) -> list[str]:
    return [t for t in server.state.tasks() if t.startswith("research_")]


def claims_of(report, title_word: str) -> str:
    return " ".join(c.text for s in report.sections if title_word in s.title for c in s.claims)


def check_one(
    tmp_path: Path, claim: str, excerpt: Excerpt, question: str
) -> tuple[list[Claim], list[str]]:
    """`claim` citing `excerpt` (of a file that exists and was read) through the check."""
    (tmp_path / excerpt.path).write_text("x")
    return check_claims(
        [ClaimReply(text=claim, sources=[excerpt.id])],
        question,
        {excerpt.id: excerpt},
        lambda p: (tmp_path / p).is_file(),
        {excerpt.path},
    )


def commits(root: Path) -> int:
    out = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True)
    return int(out.stdout)


def test_two_document_comparison_cites_each_document(memory, llm_server) -> None:
    steps = []
    report = memory.research(COMPARE, on_step=steps.append)
    assert [s.title for s in report.sections] == [
        "What is the escalation rules of Acme Corp?",
        "What is the escalation rules of Borealis Systems?",
    ]
    assert "30 minutes" in claims_of(report, "Acme") and "45" not in claims_of(report, "Acme")
    assert "45 minutes" in claims_of(report, "Borealis")
    root = memory.folder.root
    for section in report.sections:  # every claim cites a file of its own company, read
        assert 0 < section.confidence <= 0.9
        company = section.title.split(" of ")[1].split()[0].lower()
        for claim in section.claims:
            for source in claim.sources:
                assert (root / source.path).is_file() and source.path in report.files_read
                assert source.lines[0] >= 1
    documents = {c.source for c in report.citations}
    assert documents == {"acme_oncall.md", "borealis_oncall.md"}
    assert set(report.sources) <= set(report.files_read) and not report.partial
    text = markdown(report)
    assert "Confidence: " in text and "](" in text and NOT_SAID not in text
    # live steps: the plan, then each sub-question ticked as it is answered
    assert [s.phase for s in steps][:1] == ["plan"] and steps[-1].answered == [True, True]
    assert research_tasks(llm_server).count("research_integrate") == 2
    shown = [r["messages"][-1]["content"] for r in llm_server.state.requests
             if r["task"] == "research_integrate"]  # fmt: skip
    assert all("(from acme_oncall.md)" in u or "(from borealis_oncall.md)" in u for u in shown)
    assert report.llm_calls == len(research_tasks(llm_server)) and report.tokens > 0
    assert company  # (the loop ran)


def test_a_follow_up_request_after_the_first_reflection(memory, llm_server) -> None:
    report = memory.research(FOLLOW_UP)
    assert report.iterations == 2 and not report.partial
    assert len(report.sections) == 2 and "60 minutes" in claims_of(report, "Cobalt")
    assert research_tasks(llm_server).count("research_reflect") == 2
    assert research_tasks(llm_server).count("research_plan") == 1


def test_a_sub_question_without_evidence_is_reported_as_such(memory, llm_server) -> None:
    report = memory.research("Compare the escalation rules of Acme Corp and Zephyr Inc")
    assert [s.title for s in report.sections] == ["What is the escalation rules of Acme Corp?"]
    assert any("Zephyr Inc" in line and "zephyr" in line.split(":")[1] for line in report.not_said)
    assert f"## {NOT_SAID}" in markdown(report)
    # nothing to integrate: no call spent on it
    assert research_tasks(llm_server).count("research_integrate") == 1


def test_only_decisive_unknown_names_skip_a_sub_question() -> None:
    question = "How many devices does Lumenvault 5.0 allow, compared with Acme Corp?"
    assert absent(["5.0"], "Devices in Lumenvault 5.0?", question) == ["5.0"]  # a version
    assert absent(["zephyr"], "Zephyr's rules?", "Compare Acme and Zephyr") == ["zephyr"]
    # a word the planner added, the rest of its names known: searched all the same
    assert absent(["sla"], "What does the SLA of Acme Corp say?", "Acme escalation?") == []
    assert absent(["sla"], "What does the SLA say?", "Acme escalation?") == ["sla"]
    # the kind of thing asked for, named nowhere: nothing to list
    desserts = "Which desserts are on the menu at Ferrovia and at Saltcellar?"
    assert absent(["desserts"], "Which desserts does Ferrovia Trattoria serve?", desserts) == [
        "desserts"
    ]


def test_the_iteration_limit_gives_a_partial_report_that_says_so(memory) -> None:
    report = memory.research(FOLLOW_UP, Limits(iterations=1))
    assert report.partial and "iteration limit (1)" in report.limits_hit[0]
    assert "Cobalt Labs" in report.limits_hit[0]  # what is still open
    assert "30 minutes" in claims_of(report, "Acme")
    assert "**Partial report:**" in markdown(report)
    assert all(s.confidence <= 0.9 * 0.75 for s in report.sections)


def test_the_token_limit_stops_before_the_next_call(memory, llm_server) -> None:
    report = memory.research(COMPARE, Limits(tokens=50))
    assert report.partial and "token limit (50" in report.limits_hit[0]
    assert research_tasks(llm_server) == ["research_plan"] and report.llm_calls == 1
    assert not report.sections and len(report.not_said) == 2
    assert all("stopped before" in line for line in report.not_said)


def test_the_call_limit_integrates_what_fits(memory, llm_server) -> None:
    report = memory.research(COMPARE, Limits(llm_calls=2))
    assert research_tasks(llm_server) == ["research_plan", "research_integrate"]
    assert "LLM call limit (2)" in report.limits_hit[0] and len(report.sections) == 1


def test_cancel_mid_run_raises_and_saves_nothing(memory, llm_server) -> None:
    root = memory.folder.root
    before = commits(root)

    def stop_at_search(step) -> None:
        if step.phase == "search":
            memory.cancel.cancel()

    with pytest.raises(OperationCancelled):
        memory.research(COMPARE, on_step=stop_at_search)
    assert "research_integrate" not in research_tasks(llm_server)
    assert commits(root) == before and not (root / "research").exists()


def test_a_plan_that_fails_validation_falls_back_to_a_bm25_sweep(memory, llm_server) -> None:
    llm_server.state.faults.append(Fault("garbage", times=2, task="research_plan", on_reask=True))
    report = memory.research(COMPARE)
    assert any("plan was not usable" in note for note in report.notes)
    # the question itself swept, once per company it names
    assert [s.title for s in report.sections] == [
        "The escalation rules of Acme Corp",
        "The escalation rules of Borealis Systems",
    ]
    assert "30 minutes" in claims_of(report, "Acme") and report.sources


def test_fallback_plan_greps_the_names_of_the_question() -> None:
    question = "When does an unacknowledged page escalate at Acme Corp?"
    (sub,) = fallback_plan(question)
    assert sub.question == question and {"acme", "corp"} <= set(sub.keywords)


def test_a_server_without_tools_or_json_modes(memory, llm_server) -> None:
    capabilities.forget_all()  # the build found json_schema working; this server lacks it
    llm_server.state.reject = {"tools", "json_schema", "json_object"}
    report = memory.research(COMPARE)
    assert len(report.sections) == 2 and "45 minutes" in claims_of(report, "Borealis")
    sent = [r for r in llm_server.state.requests if r["task"].startswith("research_")]
    assert sent and not any(r["tools"] for r in sent)
    assert all(r["response_format"] is None for r in sent[-3:])  # the prompt rung


def test_the_citation_check_drops_a_made_up_source(memory, llm_server) -> None:
    llm_server.state.faults.append(Fault("made_up_source", times=5, task="research_integrate"))
    report = memory.research(COMPARE)
    assert "notes/invented.md" not in report.sources
    assert any("notes/invented.md" in line for line in report.dropped)
    assert "last reviewed" not in " ".join(c.text for s in report.sections for c in s.claims)
    assert "## Claims left out" in markdown(report) and len(report.sections) == 2


def test_a_claim_repeated_in_one_reply_is_reported_once(memory, llm_server) -> None:
    llm_server.state.faults.append(Fault("repeated", times=5, task="research_integrate"))
    report = memory.research(COMPARE)
    claims = [claim.text for section in report.sections for claim in section.claims]
    assert claims and len(claims) == len(set(claims))


def test_check_claims_drops_a_figure_its_source_does_not_state(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    excerpt = Excerpt(id="E1", path="a.md", lines=(3, 3), text="Escalates after 30 minutes.")
    claims = [
        ClaimReply(text="Acme escalates after 30 minutes.", sources=["E1"]),
        ClaimReply(text="Acme escalates after 90 minutes.", sources=["[E1]"]),
        ClaimReply(text="Acme pages through Klaxon.", sources=["E7"]),
        ClaimReply(text="Acme rotates weekly.", sources=["gone.md"]),
    ]
    kept, dropped = check_claims(
        claims, "escalation?", {"E1": excerpt}, lambda p: (tmp_path / p).is_file(), {"a.md"}
    )
    assert [c.text for c in kept] == ["Acme escalates after 30 minutes."]
    assert "do not state 90" in dropped[0] and "E7" in dropped[1] and "gone.md" in dropped[2]
    # ids written into the text, or several in one string: each a source, the text clean
    inline = [
        ClaimReply(text="Acme escalates after 30 minutes [E1].", sources=[]),
        ClaimReply(text="Escalation takes 30 minutes.", sources=["E1, E7"]),
    ]
    kept, dropped = check_claims(
        inline, "escalation?", {"E1": excerpt}, lambda p: (tmp_path / p).is_file(), set()
    )
    assert [c.text for c in kept] == ["Acme escalates after 30 minutes.", inline[1].text]
    assert all(c.sources == [excerpt] for c in kept) and "E7" in dropped[0]


def test_check_claims_drops_a_claim_stating_another_unit_than_the_one_asked(
    tmp_path: Path,
) -> None:
    """Asked "to how many days", a small model answered "changed the retention to 200GB"
    from a paragraph that states 200 GB of something else."""
    (tmp_path / "a.md").write_text("x")
    text = "Lumenvault 3.2 keeps deleted files 60 days, twice as long. Above 200GB: 70% less."
    excerpt = Excerpt(id="E1", path="a.md", lines=(3, 3), text=text)
    claims = [
        ClaimReply(text="Lumenvault 3.2 changed the retention to 200GB.", sources=["E1"]),
        ClaimReply(
            text="Lumenvault 3.2 changed the retention by 70% on big folders.", sources=["E1"]
        ),
        ClaimReply(text="Lumenvault 3.2 keeps deleted files 60 days.", sources=["E1"]),
        ClaimReply(text="Lumenvault 3.2 keeps them for a 60-day period.", sources=["E1"]),
        ClaimReply(text="Lumenvault 3.2 keeps deleted files twice as long.", sources=["E1"]),
    ]
    question = "Which Lumenvault releases changed the retention, and to how many days?"
    kept, dropped = check_claims(
        claims, question, {"E1": excerpt}, lambda p: (tmp_path / p).is_file(), {"a.md"}
    )
    assert [c.text for c in kept] == [c.text for c in claims[2:]]  # a version is no count
    assert len(dropped) == 2 and all("no number of days" in line for line in dropped)
    # a claim announcing a list it does not give says nothing
    fragments = [
        ClaimReply(text="In Lumenvault 3.2 the retention was changed to:", sources=["E1"]),
        ClaimReply(text="Lumenvault 3.2's new settings were：", sources=["E1"]),
        ClaimReply(text="Lumenvault 3.2 keeps deleted files 60 days:", sources=["E1"]),
    ]
    kept, dropped = check_claims(
        fragments, "What changed?", {"E1": excerpt}, lambda p: (tmp_path / p).is_file(), set()
    )
    assert [c.text for c in kept] == [fragments[2].text]  # a sentence of its own stands
    assert len(dropped) == 2 and all("announces what it does not say" in d for d in dropped)
    # each section is held to the unit its own sub-question asks for
    uploads = ClaimReply(text="Lumenvault 3.2 pauses uploads above 200GB.", sources=["E1"])
    kept, _ = check_claims(
        [uploads],
        "How many days are files kept, and what is the upload limit of Lumenvault 3.2?",
        {"E1": excerpt},
        lambda p: (tmp_path / p).is_file(),
        set(),
        sub_question="What is the upload limit of Lumenvault 3.2?",
    )
    assert [c.text for c in kept] == [uploads.text]
    # a question asking for no count checks none
    kept, _ = check_claims(
        claims, "What changed?", {"E1": excerpt}, lambda p: (tmp_path / p).is_file(), set()
    )
    assert len(kept) == len(claims)


def test_save_is_a_commit_searchable_and_rolled_back(memory) -> None:
    report = memory.research(COMPARE)
    root = memory.folder.root
    path, changes = memory.save_research(report)
    assert re.fullmatch(r"research/\d{4}-\d\d-\d\d-compare-the-escalation-[a-z-]+\.md", path)
    parsed = parse_memory((root / path).read_text())
    assert parsed.front["question"] == COMPARE and parsed.front["model"] == "scripted"
    assert parsed.front["files"] == report.sources and "30 minutes" in parsed.body
    assert "](../" in parsed.body  # citations link back from research/ to the memory files
    assert changes.added == {path} and changes.commit is not None
    history = memory.history
    assert history is not None and history.get(changes.commit).kind == "research"
    assert any(hit.path == path for hit in memory.search("escalation Acme Borealis compare"))
    # research/ is not a document folder: never planned, reorganized or listed in a README
    assert "research" not in MemoryFolder(root).load_view().subdirs
    assert sanitize_folder_name("Research") == "research_notes"
    memory.rollback(changes.commit)
    assert not (root / path).exists()


def test_a_claim_that_does_not_say_which_look_alike_it_is_about_names_its_document() -> None:
    """ "Renamed to schedule.every" answers "which releases" only with the release named."""
    releases = {f"lumenvault-{v}-release-notes.md" for v in ("3.1", "3.2", "4.0")}
    kitchens = {f"{k}-kitchen-procedures.txt" for k in ("ferrovia", "juniper-and-ash")}

    def claim(text: str, document: str | None) -> Claim:
        source = Excerpt(id="E1", path="a/b.md", lines=(1, 2), text="", document=document)
        return Claim(text=text, sources=[source])

    claims = [
        claim("Lumenvault renamed it to `schedule.every`.", "lumenvault-3.1-release-notes.md"),
        claim("Lumenvault 3.2 renamed it again.", "lumenvault-3.2-release-notes.md"),
        claim("Poultry must reach 75 °C and rest.", "juniper-and-ash-kitchen-procedures.txt"),
        claim("Ferrovia keeps fridges at 3 °C.", "ferrovia-kitchen-procedures.txt"),
        claim("A claim from a note without a source.", None),
    ]
    texts = [c.text for c in attributed(claims, releases | kitchens)]
    assert texts == [
        "In lumenvault-3.1-release-notes.md: Lumenvault renamed it to `schedule.every`.",
        "Lumenvault 3.2 renamed it again.",  # names its version already
        "In juniper-and-ash-kitchen-procedures.txt: Poultry must reach 75 °C and rest.",
        "Ferrovia keeps fridges at 3 °C.",
        "A claim from a note without a source.",
    ]
    alone = attributed(claims[:1], {"lumenvault-3.1-release-notes.md"})  # nothing alike
    assert alone[0].text == claims[0].text


def test_research_over_each_company_has_a_section_per_policy(memory, llm_server) -> None:
    """ "Each company" over three look-alike policies: one sub-question per policy (found
    by search, not named by the question), each answered from its own policy alone."""
    question = "What escalation rules does each company's on-call policy set?"
    report = memory.research(question)
    documents = ["acme_oncall.md", "borealis_oncall.md", "cobalt_oncall.md"]
    assert sorted(s.title for s in report.sections) == [f"{question} (in {d})" for d in documents]
    for section in report.sections:
        document = section.title.rsplit("(in ", 1)[1].rstrip(")")
        assert section.claims
        assert {s.document for c in section.claims for s in c.sources} == {document}
    assert "30 minutes" in claims_of(report, "acme_oncall.md")
    assert "45 minutes" in claims_of(report, "borealis_oncall.md")
    assert "60 minutes" in claims_of(report, "cobalt_oncall.md")
    assert research_tasks(llm_server).count("research_integrate") == 3


def test_a_claim_giving_another_things_figure_gives_way_to_what_the_excerpt_says(
    make_workflow, tmp_path: Path, llm_server
) -> None:
    """The 1.5B model answered "the default backup interval in Lumenvault 3.1 was 50 GB",
    the file size limit above it. The claim is dropped and the excerpt's statement of the
    interval stands in its place, cited."""
    workflow = built_orbit_notes(make_workflow, tmp_path)
    llm_server.state.faults.append(Fault("other_figure", times=10, task="research_integrate"))
    # (asked why as well: each document's value alone would settle it with no model call)
    question = "Compare the default backup interval of Orbit 3.1 and Orbit 4.0, and say why."
    report = workflow.research(question)
    said = {s.title: " ".join(c.text for c in s.claims) for s in report.sections}
    assert len(said) == 2 and all(said.values()), said
    assert any("every 30 minutes" in text and "3.1" in title for title, text in said.items())
    assert any("every 15 minutes" in text and "4.0" in title for title, text in said.items())
    assert not any(re.search(r"\b(50|200) GB", text) for text in said.values())
    assert any("of another thing" in line for line in report.dropped)
    cited = {s.document for sec in report.sections for c in sec.claims for s in c.sources}
    assert cited == set(ORBIT_NOTES)


def test_each_source_of_a_claim_is_checked_on_its_own(tmp_path: Path) -> None:
    """Two flattened windows run together read as one paragraph stating every figure: the
    adversarial review's claim citing two excerpts passed the check it failed with one."""
    (tmp_path / "a.md").write_text("x")
    excerpts = {
        f"E{n}": Excerpt(
            id=f"E{n}",
            path="a.md",
            lines=(1, 4),
            text=" ".join(ORBIT_NOTES[name].split()),
            document=name,
        )
        for n, name in enumerate(ORBIT_NOTES, start=1)
    }
    claim = ClaimReply(text="The default backup interval of Orbit 3.1 was 50 GB.", sources=["E1"])
    both = ClaimReply(text=claim.text, sources=["E1", "E2"])
    question = "What is the default backup interval of Orbit 3.1?"
    for cited in (claim, both):
        kept, dropped = check_claims(
            [cited], question, excerpts, lambda p: (tmp_path / p).is_file(), {"a.md"}
        )
        assert kept == [] and "50 of another thing" in dropped[0]


@pytest.mark.parametrize(
    ("claim", "dropped"),
    [  # the 1.5B model's research claims that only restate the question
        ("Osprine pay an engineer for each weekend day on call.", True),
        ("The comparison is between what Brindlewave and Osprine pay for a weekend day.", True),
        # a figure, a value or a name the question lacks says something
        ("Osprine pays $150 for each weekend day on call.", False),
        ("Osprine pays through Ledgerbook for each weekend day on call.", False),
        ("Osprine pays each weekend day on call in `payroll.weekend`.", False),
    ],
)
def test_a_claim_that_only_restates_the_question_is_dropped(
    tmp_path: Path, claim: str, dropped: bool
) -> None:
    text = (
        "Engineers receive $150 for each weekend day on call (`payroll.weekend`), via Ledgerbook."
    )
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 1), text=text, document="osprine.md")
    question = "Compare what Brindlewave and Osprine pay an engineer for each weekend day on call."
    kept, why = check_one(tmp_path, claim, excerpt, question)
    assert (kept == []) is dropped
    assert not dropped or "only restates the question" in why[0]


@pytest.mark.parametrize(
    ("claim", "dropped"),
    [
        # the 1.5B model's claim from the 3.1 notes, which keep the retention unchanged
        ("In Lumenvault 3.1 the retention of deleted files changed to 30 days.", True),
        # the 1.5B model's, asked which releases changed the retention: a value that
        # stayed the same answers no such question
        ("Lumenvault 3.1 keeps deleted files for 30 days.", True),
        ("Lumenvault 3.1 keeps deleted files for 30 days.", "how"),  # asked how, an answer
        ("The backup interval changed to 30 minutes in 3.1.", False),  # that one did change
        ("3.1 sets the backup interval to 30 minutes.", False),  # a value its notes give
    ],
)
def test_a_change_its_source_calls_unchanged_is_dropped(
    tmp_path: Path, claim: str, dropped: bool | str
) -> None:
    text = (
        "# Lumenvault 3.1 release notes\n\n## Defaults\n\n"
        "- Backup interval: every **30 minutes**.\n"
        "- Retention of deleted files and old versions: **30 days** (unchanged).\n"
    )
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 4), text=" ".join(text.split()))
    question = (
        "How did the retention of deleted files change from Lumenvault 3.0 to 4.0?"
        if dropped == "how"
        else "Which Lumenvault releases changed the retention of deleted files or the backup "
        "interval, and how?"
    )
    kept, why = check_one(tmp_path, claim, excerpt, question)
    assert (kept == []) is (dropped is True)
    assert dropped is not True or "did not change" in why[0]


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        # the 1.5B model's, citing nothing: its words and figure are E2's
        ("Poultry must reach a core temperature of 78 °C, measured at the thickest point.", "E2"),
        ("Chicken must reach 78 °C at the thickest point.", "E2"),
        ("Chicken must reach a core temperature of 78 °C.", "E2"),  # E3's words, not its 75
        ("Poultry must reach a core temperature of 80 °C, measured at the thickest point.", None),
        ("Poultry is roasted whole on Sundays for the staff lunch.", None),
        ("The thickest point is measured on Sundays for the staff lunch.", None),  # 3 of 7
        ("78 °C.", None),  # too few words to tell where it is from
        # the adversarial review's: E2's words and figure, said of another document
        ("At Ferrovia, chicken must reach a core temperature of 78 °C.", None),
        ("Ferrovia cooks chicken to a core temperature of 78 °C at the thickest point.", None),
    ],
)
def test_a_claim_citing_nothing_is_cited_from_the_excerpt_it_quotes(
    tmp_path: Path, claim: str, source: str | None
) -> None:
    texts = {
        "ferrovia": "Poultry and minced meat must reach a core temperature of 74 °C.",
        "juniper-and-ash": "Chicken must reach a core temperature of 78 °C, measured at the "
        "thickest point, because whole birds are cooked.",
        "saltcellar": "Chicken must reach a core temperature of 75 °C in the Saltcellar kitchen.",
    }
    excerpts = {
        f"E{n}": Excerpt(
            id=f"E{n}",
            path=f"{name}.md",
            lines=(1, 1),
            text=text,
            document=f"{name}-kitchen-procedures.txt",
        )
        for n, (name, text) in enumerate(texts.items(), 1)
    }
    for excerpt in excerpts.values():
        (tmp_path / excerpt.path).write_text("x")
    kept, dropped = check_claims(
        [ClaimReply(text=claim, sources=[])],
        "What core temperature must poultry reach at Juniper and Ash?",
        excerpts,
        lambda p: (tmp_path / p).is_file(),
        {f"{name}.md" for name in texts},
    )
    assert [s.id for c in kept for s in c.sources] == ([source] if source else [])
    assert source or dropped


def test_a_changed_value_cited_beside_an_unchanged_one_is_kept(tmp_path: Path) -> None:
    """The adversarial review's: two flattened windows joined read as one statement, so
    3.2's "**5** (unchanged)" made its 60 days read as unchanged too."""
    windows = {
        "E1": (
            "lumenvault-3.1-release-notes.md",
            "…Backup interval: every **30 minutes**. - Retention of deleted files: **30 days** "
            "(unchanged).",
        ),
        "E2": (
            "lumenvault-3.2-release-notes.md",
            "…Maximum devices per account: **5** (unchanged). - Retention of deleted files: "
            "**60 days**.",
        ),
    }
    excerpts = {
        i: Excerpt(id=i, path=f"{i}.md", lines=(1, 1), text=text, document=document)
        for i, (document, text) in windows.items()
    }
    for i in excerpts:
        (tmp_path / f"{i}.md").write_text("x")
    claim = "In Lumenvault 3.2, deleted files are retained for 60 days, up from 30 days in 3.1."
    kept, dropped = check_claims(
        [ClaimReply(text=claim, sources=["E1", "E2"])],
        "Which Lumenvault releases changed the retention of deleted files?",
        excerpts,
        lambda p: (tmp_path / p).is_file(),
        {"E1.md", "E2.md"},
    )
    assert [c.text for c in kept] == [claim], dropped


def test_an_unchanged_value_answers_a_sub_question_asking_it(tmp_path: Path) -> None:
    """Asked which releases changed the retention, a plan may still ask what it is in 3.1
    (to tell whether 3.1 changed it): its sub-question, not the question, says what a
    claim must answer."""
    text = "- Retention of deleted files and old versions: **30 days** (unchanged)."
    document = "lumenvault-3.1-release-notes.md"
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 1), text=text, document=document)
    (tmp_path / "a.md").write_text("x")
    kept, _ = check_claims(
        [ClaimReply(text="Lumenvault 3.1 keeps deleted files for 30 days.", sources=["E1"])],
        "Which Lumenvault releases changed the retention of deleted files?",
        {"E1": excerpt},
        lambda p: (tmp_path / p).is_file(),
        {"a.md"},
        sub_question="What is the retention of deleted files in Lumenvault 3.1?",
    )
    assert [c.text for c in kept] == ["Lumenvault 3.1 keeps deleted files for 30 days."]


@pytest.mark.parametrize(
    ("claim", "document", "dropped"),
    [
        # the 1.5B model's claims from notes that rename nothing, or nothing to that
        ("Lumenvault renamed the backup interval setting to every 60 minutes.", "3.0", True),
        ("Lumenvault renamed the backup interval setting to 'encryption'.", "3.2", True),
        ("Lumenvault 3.0 renamed a setting.", "3.0", True),  # "No settings were renamed"
        # renames its source writes down, in its words or the model's
        ("Lumenvault 3.2 renamed keep_days to retention.days.", "3.2", False),
        ("The setting `keep_days` now has the new name `retention.days`.", "3.2", False),
        ("Lumenvault 3.2 renamed a setting.", "3.2", False),  # nothing more claimed
        ("Lumenvault 3.0 set the backup interval to every 60 minutes.", "3.0", False),
        ("Lumenvault 3.0 renamed no settings.", "3.0", False),  # a denial: not this check's
        # the adversarial review's: renames written otherwise, or with a denial after them
        ("Lumenvault 3.2 renamed encryption to cipher.", "3.2 known as", False),
        ("Lumenvault 3.2 renamed encryption to cipher.", "3.2 arrow", False),
        ("Lumenvault 3.2 renamed encryption to cipher.", "3.2 not after", False),
        ("Lumenvault 3.2 renamed encryption to cipher.", "3.2 heading", False),
    ],
)
def test_a_rename_its_source_does_not_write_is_dropped(
    tmp_path: Path, claim: str, document: str, dropped: bool
) -> None:
    notes = {
        "3.0": "## Defaults\n\n- Backup interval: every **60 minutes**.\n\n## Settings\n\n"
        "No settings were renamed or removed in this release.\n",
        "3.2": "## Defaults\n\n- Encryption: **AES-256-GCM**.\n\n## Settings\n\n"
        "- `keep_days` is renamed to **`retention.days`**. Values are converted.\n",
        "3.2 known as": "- Encryption is now known as Cipher.\n",
        "3.2 arrow": "- Encryption → Cipher\n",
        "3.2 not after": "- Encryption was renamed to Cipher (no migration needed).\n",
        "3.2 heading": "## Renamed\n\n- Encryption: Cipher\n",
    }
    excerpt = Excerpt(
        id="E1",
        path="a.md",
        lines=(1, 6),
        text=notes[document],
        document=f"lumenvault-{document.split()[0]}-release-notes.md",
    )
    _kept, why = check_one(
        tmp_path,
        claim,
        excerpt,
        "Which Lumenvault releases renamed the backup interval setting, and to what?",
    )
    # (what the claims kept here may still fail is another check's: a rename of another
    # setting, a default that renames nothing)
    assert any("rename nothing" in line for line in why) is dropped


TOOLS = (
    "## Tools\n\nPages are sent through **Beaconly**, which calls the phone. Incident "
    "conversations happen in Threadline, the company chat. Runbooks live in the Ledgerbook "
    "wiki.\n"
)


@pytest.mark.parametrize(
    ("claim", "text", "question", "why"),
    [
        # the 1.5B model's, from the tools of a policy whose pages go through Beaconly
        ("Threadline is used for incident conversations.", TOOLS, "paging tool", "nothing"),
        ("Ledgerbook wiki is used for runbooks.", TOOLS, "paging tool", "nothing"),
        ("Pages are sent through Beaconly.", TOOLS, "paging tool", None),
        ("The company uses Beaconly.", TOOLS, "paging tool", None),  # as its source says
        ("The handover happens in Threadline.", TOOLS, "paging tool", "nothing"),
        # nothing in it to find in its sources: the model's words stand
        ("The handover is a video call.", TOOLS, "paging tool", None),
        # other words for what is asked, given with it in its sources
        (
            "Deleted files are kept for 60 days.",
            "Retention of deleted files: 60 days.",
            "what",
            None,
        ),
        ("60 days.", "Retention of deleted files: 60 days.", "what", None),
        ("Klaxo is used.", "Klaxo delivers pages by phone call.", "paging tool", None),
        # sources that never say what is asked leave the model its words
        (
            "Lumenvault 3.1 keeps them for 60 days.",
            "Deleted files: kept 60 days.",
            "retention",
            None,
        ),
        # asked which releases changed it: one that did not, or renamed nothing, answers no
        (
            "The retention was unchanged in 3.1.",
            "Retention: 30 days (unchanged).",
            "changed",
            "no change",
        ),
        ("The retention did not change in 3.1.", "Retention: 30 days.", "changed", "no change"),
        ("The retention remained the same.", "Retention: 30 days.", "changed", "no change"),
        ("3.1 didn't change the retention.", "Retention: 30 days.", "changed", "no change"),
        # a change told beside it, or a question asking which did not change
        (
            "3.1 did not change the retention, but 3.2 raised it from 30 to 60 days.",
            "Retention: 60 days in 3.2 (was 30 in 3.1).",
            "changed",
            None,
        ),
        ("3.1 did not change the retention.", "Retention: 30 days.", "not changed", None),
        (
            "Basic costs $5, unchanged since 2020.",
            "Basic: $5, unchanged since 2020.",
            "lower",
            None,
        ),
        ("3.1 did not change the retention.", "Retention: 30 days.", "have not changed", None),
        # asked of a change and a rename, a change is an answer
        (
            "3.1 changed the retention to 60 days.",
            "Retention: 60 days in 3.1 (was 30).",
            "changed or renamed",
            None,
        ),
        # the 1.5B model's, asked the retention: a rename its sources give apart from it
        (
            "Lumenvault renamed `backup_interval` to `schedule.every`.",
            "- `backup_interval` is renamed to `schedule.every`.\n- Retention: 30 days.",
            "changed",
            "nothing",
        ),
        # a rename told by giving both names
        (
            "In 3.1 `keep_days` became `retention.days`.",
            "`keep_days` is now `retention.days`.",
            "renamed",
            None,
        ),
        ("The retention changed to 60 days.", "Retention: 60 days (was 30).", "changed", None),
        (
            "The retention setting's old name was `keep_days` in 3.1.",
            "Setting `keep_days`: 30.",
            "renamed",
            "no rename",
        ),
        (
            "3.1 renamed `keep_days` to `retention.days`.",
            "`keep_days` is renamed to `retention.days`.",
            "renamed",
            None,
        ),
        # asked how it changed, not which ones: that it did not is an answer
        ("The retention was unchanged in 3.1.", "Retention: 30 days (unchanged).", "how", None),
        # "must" is how it is asked, not what of
        (
            "Hot food must be held at 63 °C.",
            "Poultry must reach a core temperature of 74 °C. Hot food must be held at 63 °C.",
            "poultry",
            "nothing",
        ),
        # the adversarial review's: an abstract question's concrete answer, no name or figure
        (
            "Gluten-free pasta is cooked in a separate pot with fresh water.",
            "Gluten is everywhere here, so gluten-free pasta is cooked in a separate pot with "
            "fresh water. Waiting staff read the allergen card to the guest on request.",
            "allergies",
            None,
        ),
    ],
)
def test_a_claim_of_another_subject_or_of_no_change_asked_which_changed_is_dropped(
    tmp_path: Path, claim: str, text: str, question: str, why: str | None
) -> None:
    questions = {
        "paging tool": "Which paging tool does each company's on-call policy use?",
        "retention": "Which Lumenvault releases changed the retention, and to how many days?",
        "changed": "Which Lumenvault releases changed the retention?",
        "renamed": "Which Lumenvault releases renamed the retention setting, and to what?",
        "how": "How did the retention change from Lumenvault 3.0 to 4.0?",
        "what": "What is the retention in Lumenvault 3.1?",
        "not changed": "Which Lumenvault releases did not change the retention?",
        "lower": "Which plan has the lower price?",
        "have not changed": "Which releases have not changed the retention?",
        "changed or renamed": "Which Lumenvault releases changed the retention, and was its "
        "setting renamed?",
        "poultry": "Compare the core temperature poultry must reach at Ferrovia and Saltcellar.",
        "allergies": "What protects guests with allergies at Ferrovia?",
    }
    excerpt = Excerpt(
        id="E1", path="a.md", lines=(1, 4), text=text, document="lumenvault-3.1-release-notes.md"
    )
    kept, dropped = check_one(tmp_path, claim, excerpt, questions[question])
    assert (kept == []) is (why is not None)
    assert why is None or why in dropped[0]


KLAXO = "## Tools\n\nPages are delivered by **Klaxo**, through phone calls.\n"
PAGING = "Which paging tool does each company's on-call policy use?"
RETENTION = "Which Lumenvault releases changed the retention of deleted files?"


@pytest.mark.parametrize(
    ("claim", "text", "question", "why"),
    [
        # a name starting the claim is news when its source names it
        ("Klaxo is used for paging tools.", KLAXO, PAGING, None),
        ("Pagers is used for paging tools.", KLAXO, PAGING, "restates"),
        # the 1.5B model gave its sub-question back as the claim
        (
            f"The {RETENTION[6:-1]}? (in lumenvault-3.2-release-notes.md)",
            "Retention: 60 days.",
            f"{RETENTION} (in lumenvault-3.2-release-notes.md)",
            "it asks",
        ),
        # a version the person did not give tells which release, even if the sub-question
        # is kept to its notes; one the person gave tells nothing
        (
            "Lumenvault 3.2 changed the retention of deleted files.",
            "Retention: 60 days.",
            f"{RETENTION} (in lumenvault-3.2-release-notes.md)",
            None,
        ),
        (
            "Lumenvault 3.2 changed the retention of deleted files.",
            "Retention: 60 days.",
            "What did Lumenvault 3.2 change the retention of deleted files to?",
            "restates",
        ),
        # asked yes or no, saying so answers
        (
            "Lumenvault 3.2 changed the retention of deleted files.",
            "Retention: 60 days.",
            "Did Lumenvault 3.2 change the retention of deleted files?",
            None,
        ),
        # a quoted title ending in a question mark is no question
        (
            'The FAQ entry on it is titled "Where did my retention go?"',
            "Retention: 60 days.",
            RETENTION,
            None,
        ),
    ],
)
def test_a_claim_that_asks_or_restates_is_dropped_one_that_names_is_not(
    tmp_path: Path, claim: str, text: str, question: str, why: str | None
) -> None:
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 3), text=text, document="x-policy.md")
    kept, dropped = check_one(tmp_path, claim, excerpt, question)
    assert (kept == []) is (why is not None)
    assert why is None or why in dropped[0]


def test_the_thing_asked_is_the_sub_questions(tmp_path: Path) -> None:
    """Of a question asking two things, the sub-question says which one a section is
    about: its claims about the second are not held to the first's words."""
    (tmp_path / "a.md").write_text("x")
    text = "## Rotation\n\nThe on-call rotation is weekly. Pages go through Beaconly.\n"
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 3), text=text, document="acme-oncall.md")
    sub = "Which paging tool does Acme use?"
    kept, _ = check_claims(
        [ClaimReply(text="Pages go through Beaconly.", sources=["E1"])],
        f"Which rotation length does Acme use, and which paging tool? {sub}",
        {"E1": excerpt},
        lambda p: (tmp_path / p).is_file(),
        {"a.md"},
        sub_question=sub,
    )
    assert [c.text for c in kept] == ["Pages go through Beaconly."]


def test_a_section_whose_every_claim_failed_says_so_not_that_nothing_answers() -> None:
    sections = [
        SectionNotes(question="Which paging tool? (in a.md)", searched=True, integrated=True),
        SectionNotes(question="Which paging tool? (in b.md)", searched=True, integrated=True),
    ]
    sections[1].left_out = 2
    report = build(PAGING, Notes(sections=sections), {}, [], lambda p: Citation(path=p))
    assert "no passage of the memory answers it" in report.not_said[0]
    assert "every claim made of its passages failed the check" in report.not_said[1]


def test_a_comparison_the_documents_settle_is_reported_with_no_model_call(
    make_workflow, tmp_path: Path, llm_server
) -> None:
    """The 1.5B model's research named three kitchens "coldest" at 5 to 8 °C; each
    kitchen's own fridge temperature, compared, settles it before any plan."""
    from tests.engine.test_compare import DOCUMENTS

    kitchens = {name: text for name, text in DOCUMENTS.items() if "kitchen" in name}
    memory = built_documents(make_workflow, tmp_path, kitchens)
    before = len(llm_server.state.tasks())
    steps: list = []
    report = memory.research(
        "Which kitchen keeps its fridges coldest, and at what temperature?", on_step=steps.append
    )
    assert llm_server.state.tasks()[before:] == [] and report.llm_calls == 0
    claims = [c.text for section in report.sections for c in section.claims]
    assert claims[0].startswith("Saltcellar kitchen procedures: 3 °C, the coldest")
    assert [c.split(":")[0] for c in claims[1:]] == [
        "Juniper kitchen procedures",
        "Ferrovia kitchen procedures",
    ]
    assert {c.source for c in report.citations} == set(kitchens)
    for section in report.sections:
        for claim in section.claims:
            (source,) = claim.sources
            line = (memory.folder.root / source.path).read_text().splitlines()[source.lines[0] - 1]
            assert claim.text.split(": ")[1].split(" ")[0] in line  # its value, on that line
    assert "compare" in [s.phase for s in steps] and "plan" not in [s.phase for s in steps]
    assert "1 sub-question, 0 iterations, 0 LLM calls" in markdown(report)


def test_a_settled_value_is_cited_at_the_line_giving_it(tmp_path: Path) -> None:
    """Another line of the memory may give the same figure of something else."""
    from types import SimpleNamespace

    from gam_desktop.engine.ask.compare import Compared
    from gam_desktop.engine.research.settled import _excerpt

    (tmp_path / "m.md").write_text(
        "---\ntitle: x\n---\nThe freezer alarm sounds above 5 °C.\nFridges are kept at 5 °C.\n"
    )
    value = Compared("Acme", 5.0, "5 °C", "Fridges are kept at 5 °C", ["m.md"], "acme.md")
    tools: Any = SimpleNamespace(sandbox=SimpleNamespace(root=tmp_path))
    assert _excerpt(tools, "m.md", value).lines == (5, 5)
    value.sentence = "The freezer alarm sounds above 5 °C"
    assert _excerpt(tools, "m.md", value).lines == (4, 4)


def test_what_stands_in_for_failed_claims_is_no_unchanged_value_of_a_change() -> None:
    """The 1.5B model's claim that 3.1 changed the retention was dropped; "30 days
    (unchanged)" then stood in for it, cited from notes that changed nothing."""
    from gam_desktop.engine.research.steps import stated_instead

    text = (
        "## Defaults\n\n- Retention of deleted files and old versions: **30 days** (unchanged).\n"
    )
    excerpt = Excerpt(id="E1", path="a.md", lines=(1, 3), text=text, document="v3.1-notes.md")
    asked = "Which releases changed the retention of deleted files, and to how many days?"
    assert stated_instead(asked, [excerpt]) == []
    kept = stated_instead("How many days are deleted files kept?", [excerpt])
    assert [c.text for c in kept] == [
        "Retention of deleted files and old versions: 30 days (unchanged)."
    ]


def test_a_claim_stated_twice_is_kept_once_with_the_sources_of_both() -> None:
    from gam_desktop.engine.research.agent import _merged

    def claim(text: str, source: str) -> Claim:
        return Claim(
            text=text, sources=[Excerpt(id=source, path=f"{source}.md", lines=(1, 1), text="")]
        )

    merged = _merged(
        [claim("Acme pages after 10 minutes.", "E1")], [claim("Acme pages after 10 minutes", "E2")]
    )
    assert [c.text for c in merged] == ["Acme pages after 10 minutes."]
    assert [s.id for s in merged[0].sources] == ["E1", "E2"]
