"""Which documents meet a bound, or state the most or least (issue 10, multi-document
questions): each document of the kind is read for its value of what is asked, and the
values are compared, with no model call; a document whose value is unclear leaves the
question to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.ask.compare import _parse, compare_documents, comparison_answer
from gam_desktop.engine.ask.tools import MemoryTools
from tests.documents import built_documents


def kitchen(fridge: str, cooling: str) -> str:
    return (
        "# Kitchen procedures\n\n## Storage\n\n"
        f"Fridges are kept at {fridge} or below; freezers at -18 °C or below. A fridge that "
        "reads warm twice is emptied.\n\n## Cooling\n\n"
        f"Cooked food must be below 5 °C within {cooling} of cooking.\n"
    )


def policy(ack: str, escalate: str, rotation: str) -> str:
    return (
        "# On-call policy\n\n## Escalation\n\n"
        f"The primary must acknowledge a page within {ack}. If a page is still "
        f"unacknowledged after {escalate}, it escalates to the secondary.\n\n## Rotation\n\n"
        f"A rotation lasts {rotation}.\n"
    )


DOCUMENTS = {
    "ferrovia-kitchen-procedures.md": kitchen("5 °C", "2 hours"),
    "juniper-kitchen-procedures.md": kitchen("4 °C", "90 minutes"),
    "saltcellar-kitchen-procedures.md": kitchen("3 °C", "90 minutes"),
    "acme-oncall-policy.md": policy("5 minutes", "10 minutes", "one week"),
    "borealis-oncall-policy.md": policy("3 minutes", "8 minutes", "10 days"),
    "cobalt-oncall-policy.md": policy("15 minutes", "30 minutes", "two weeks"),
}


@pytest.fixture
def memory(make_workflow, tmp_path: Path):
    return built_documents(make_workflow, tmp_path, DOCUMENTS)


def chosen(tools: MemoryTools, question: str) -> list[tuple[str, str]] | None:
    compared = compare_documents(tools, question)
    return None if compared is None else [(v.document, v.said) for v in compared.chosen]


def test_the_most_or_least_is_found_in_each_documents_own_value(memory, memory_dir) -> None:
    tools = MemoryTools(memory_dir)
    question = "Which kitchen keeps its fridges coldest, and at what temperature?"
    assert chosen(tools, question) == [("Saltcellar kitchen procedures", "3 °C")]
    # spelled-out numbers and other units: a fortnight beats 10 days and a week
    question = "Which company has the longest rotation, and how long is it?"
    assert chosen(tools, question) == [("Cobalt oncall policy", "two weeks")]


def test_a_bound_lists_every_document_within_it(memory, memory_dir) -> None:
    tools = MemoryTools(memory_dir)
    question = "Which companies require the primary to acknowledge a page within 5 minutes or less?"
    assert chosen(tools, question) == [
        ("Acme oncall policy", "5 minutes"),
        ("Borealis oncall policy", "3 minutes"),
    ]
    answer = comparison_answer(compare_documents(tools, question))  # type: ignore[arg-type]
    assert answer.startswith("Acme oncall policy and Borealis oncall policy.\n")
    assert "“The primary must acknowledge a page within 3 minutes.”" in answer
    assert answer.endswith("The other states 15 minutes.")
    assert "Cobalt" not in answer  # a look-alike is never named as an answer


def test_a_comparison_is_answered_without_a_call_and_cites_each_value(memory, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = memory.request("Which kitchen keeps its fridges coldest?")
    assert llm_server.state.tasks()[before:] == []
    assert result.answer.startswith("Saltcellar kitchen procedures: 3 °C, the coldest.")
    assert {c.source for c in result.citations} == {"saltcellar-kitchen-procedures.md"}


@pytest.mark.parametrize(
    "question",
    [
        "Which company uses Klaxon?",  # no comparison
        "Which restaurants cool food below 5 °C within 90 minutes?",  # two bounds
        "Which company has the longest rotation and no pager?",  # more than one thing
        "Which Orbit 3.1 setting is the largest?",  # a version: one document's question
        "What is the longest rotation?",  # not which documents
    ],
)
def test_other_questions_are_no_comparison(question: str) -> None:
    assert _parse(question) is None


def test_a_document_whose_value_is_unclear_leaves_it_to_the_model(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    """Two sentences of one policy say as much of the rotation, with other values: which
    is meant is unclear, and that policy may be the longest."""
    unclear = dict(DOCUMENTS)
    unclear["cobalt-oncall-policy.md"] = (
        "# On-call policy\n\n## Rotation\n\nA rotation lasts 2 weeks. A rotation pays 9 days off.\n"
    )
    built_documents(make_workflow, tmp_path, unclear)
    question = "Which company has the longest rotation, and how long is it?"
    assert compare_documents(MemoryTools(memory_dir), question) is None
