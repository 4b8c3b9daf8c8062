"""A choice among look-alike documents ("which companies …", "which company … the
longest …") asked of each document alone (engine/ask/sweep.py), against the scripted
server: each call sees one document's passages, the answer names those that apply, a
superlative compares the findings, and anything else is answered as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.ask.sweep import SUPERLATIVE, chooses
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.engine.test_answers import COMPANIES, built_policies


@pytest.fixture
def lookalikes(make_workflow, tmp_path: Path):
    return built_policies(make_workflow, tmp_path)


def asked(server) -> list[str]:
    """The user messages of the per-document calls."""
    return [
        r["messages"][-1]["content"] for r in server.state.requests if r["task"] == "sweep_document"
    ]


def test_which_companies_asks_each_document_alone(lookalikes, llm_server) -> None:
    result = lookalikes.request("Which companies page through Klaxon?")
    assert "Borealis" in result.answer and "Klaxon" in result.answer
    assert "Acme" not in result.answer and "Cobalt" not in result.answer
    assert result.sources and all("borealis" in s for s in result.sources), result.sources
    calls = asked(llm_server)
    assert len(calls) == len(COMPANIES)
    for company, (_page, _escalate, tool) in COMPANIES.items():
        own = [c for c in calls if f"DOCUMENT: {company.split()[0].lower()}_oncall.md" in c]
        others = [t for _, _, t in COMPANIES.values() if t != tool]
        # shown its own passages only: never another company's paging tool
        passages = own[0].partition("PASSAGES:")[2] if own else ""
        assert len(own) == 1 and passages and not any(t in passages for t in others)
    assert "asked each of 3 documents alone" in result.trajectory
    assert "ground" not in llm_server.state.tasks()  # no grounded call over them all


def test_a_superlative_compares_what_each_document_says(lookalikes, llm_server) -> None:
    result = lookalikes.request("Which company escalates after the longest wait?")
    assert "Cobalt" in result.answer and "60 minutes" in result.answer
    assert result.sources and all("cobalt" in s for s in result.sources), result.sources
    assert llm_server.state.tasks().count("sweep_compare") == 1


def test_when_no_document_applies_the_chat_answers_as_before(lookalikes, llm_server) -> None:
    # a careful small model says no when its passages do not say: not taken as "none"
    result = lookalikes.request("Which companies hold escalation reviews at midnight?")
    assert len(asked(llm_server)) == len(COMPANIES)
    assert "no document said it applies: answering as usual" in result.trajectory
    assert not result.answer.startswith("None of") and "ground" in llm_server.state.tasks()


def test_a_question_about_one_document_is_not_swept(lookalikes, llm_server) -> None:
    result = lookalikes.request("Which paging tool does Acme Corp use?")
    assert not asked(llm_server) and "ground" in llm_server.state.tasks()
    assert result.sources and all("acme" in s for s in result.sources), result.sources


def test_when_no_document_can_be_asked_the_chat_answers_as_before(lookalikes, llm_server) -> None:
    llm_server.state.faults.append(
        Fault("garbage", times=100, task="sweep_document", on_reask=True)
    )
    result = lookalikes.request("Which companies page through Klaxon?")
    assert "asking each document failed" in result.trajectory
    assert "Klaxon" in result.answer and result.sources


def test_a_finding_is_named_after_its_document_without_passage_numbers() -> None:
    from gam_desktop.engine.ask.sweep import _named

    documents = ["field-report-varga-2022.md", "field-report-maalouf-2023.md"]
    assert _named(documents[1], "[2] Fog closed the landing [1] twice.", documents) == (
        "Field report maalouf 2023: Fog closed the landing twice."
    )
    # already naming its document (and only it): as written
    assert _named(documents[0], "Varga's team saw fog once.", documents) == (
        "Varga's team saw fog once."
    )


def test_a_question_about_each_document_lists_every_finding(lookalikes, llm_server) -> None:
    # a model that says no to every document: "each" asks about all of them regardless
    llm_server.state.faults.append(Fault("denies", times=100, task="sweep_document"))
    result = lookalikes.request("Which paging tool does each company use?")
    for company in COMPANIES:
        assert company.split()[0].lower() in result.answer.lower()
    cited = {s.split("/")[-1].split("_")[0] for s in result.sources}
    assert cited == {c.split()[0].lower() for c in COMPANIES}, result.sources
    # without "each", its no stands: answered as usual
    again = lookalikes.request("Which companies page through Klaxon?")
    assert "no document said it applies" in again.trajectory


@pytest.mark.parametrize(
    ("question", "choice"),
    [
        ("Which field reports mention fog?", True),
        ("Which companies' on-call policies page for SEV3 incidents at any hour?", True),
        ("Which company has the longest on-call rotation?", True),
        ("Which paging tool does each company's on-call policy use?", True),
        ("Who wrote the most recent field report on the Skerrow Islands?", True),
        ("Which kitchen keeps its fridges coldest?", True),
        ("Which paging tool does Quillfern Payments use?", False),  # one thing, named
        ("Which boat did Ines Varga's survey team use?", False),  # "Ines" is no plural
        ("Which process does this use?", False),
        ("Which is better?", False),
        ("Who is my dentist?", False),
        ("List the steps to rotate the key", False),
        ("Name a good book", False),
    ],
)
def test_which_questions_choose_among_documents(question: str, choice: bool) -> None:
    assert chooses(question) is choice


def test_at_least_and_at_most_are_no_superlatives() -> None:
    assert not SUPERLATIVE.search("Which companies page within at least 5 minutes?")
    assert not SUPERLATIVE.search("Which teams keep at most 3 engineers?")
    assert SUPERLATIVE.search("Which team keeps the most engineers?")


def test_a_follow_up_in_a_conversation_is_not_swept(lookalikes, llm_server) -> None:
    first = lookalikes.chat("What is the escalation time at Acme Corp?")
    second = lookalikes.chat("Which companies page through them?", first.conversation_id)
    assert not asked(llm_server) and second.result.answer
    # the same question on its own is swept
    third = lookalikes.chat("Which companies page through Klaxon?")
    assert len(asked(llm_server)) == len(COMPANIES), third.result.trajectory
