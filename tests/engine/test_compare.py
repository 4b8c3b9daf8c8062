"""Which documents meet a bound, or state the most or least (issue 10, multi-document
questions): each document of the kind is read for its value of what is asked, and the
values are compared, with no model call; a document whose value is unclear leaves the
question to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.ask.compare import _parse, _value, compare_documents, comparison_answer
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


# Reports giving a lowest reading beside their mean
SURVEYS = {
    "varga-field-report.md": "# Report\n\nThe mean air temperature was 8.5 °C, with a lowest "
    "reading of 6.0 °C.\n",
    "lind-field-report.md": "# Report\n\nThe mean air temperature was 13.2 °C, with a lowest "
    "reading of 1.0 °C.\n",
}
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
        "# On-call policy\n\n## Rotation\n\nA rotation runs 2 weeks. A rotation pays 9 days off.\n"
    )
    built_documents(make_workflow, tmp_path, unclear)
    question = "Which company has the longest rotation, and how long is it?"
    assert compare_documents(MemoryTools(memory_dir), question) is None


@pytest.mark.parametrize(
    "question",
    [  # the adversarial review's: no unit to compare in, or more than one question
        "Which project has the highest priority?",
        "Which product has the smallest storage quota?",
        "Which companies have rotations under 10 days, and how long is the handover?",
        "Which company has the longest rotation, and who approves swaps?",
    ],
)
def test_a_comparison_of_no_unit_or_with_another_question_is_the_models(question: str) -> None:
    assert _parse(question) is None


@pytest.mark.parametrize(
    ("bound", "pick", "limit"),
    [
        ("within 5 minutes or less", "at most", 5),
        ("in less than 5 minutes", "below", 5),  # strict: 5 is not less than 5
        ("in more than 3 minutes", "above", 3),
        ("in at least 2 hours", "at least", 120),
        ("at -18 °C or less", "at most", -18),  # the sign is kept
        ("at −20 °C or more", "at least", -20),
    ],
)
def test_bounds_keep_their_strictness_sign_and_unit(bound: str, pick: str, limit: float) -> None:
    asked = _parse(f"Which kitchens keep freezers {bound}?")
    assert asked is not None and (asked.pick, asked.limit) == (pick, limit)


def test_what_leaves_a_documents_value_unclear(make_workflow, tmp_path: Path, memory_dir) -> None:
    """A table row gives a value; "fourteen" is a number; a report giving a lowest reading
    beside its mean leaves "the lowest" to the model; a kitchen saying "refrigerators"
    (no word of the question) is one of the family still, and leaves it to the model."""
    documents = {
        "acme-oncall-policy.md": "# Policy\n\n| Item | Value |\n|---|---|\n| Rotation | 21 days |",
        "borealis-oncall-policy.md": "# Policy\n\n## Rotation\n\nA rotation lasts fourteen days.\n",
        "cobalt-oncall-policy.md": "# Policy\n\n## Rotation\n\nA rotation lasts 10 days.\n",
        **SURVEYS,
        "ferrovia-kitchen-procedures.md": kitchen("5 °C", "2 hours"),
        "juniper-kitchen-procedures.md": kitchen("4 °C", "2 hours"),
        "saltcellar-kitchen-procedures.md": "# Kitchen procedures\n\nRefrigerators are held at "
        "2 °C.\n",
    }
    built_documents(make_workflow, tmp_path, documents)
    tools = MemoryTools(memory_dir)
    question = "Which company has the longest rotation, and how long is it?"
    assert chosen(tools, question) == [("Acme oncall policy", "21 days")]
    assert chosen(tools, "Which company has the shortest rotation?") == [
        ("Cobalt oncall policy", "10 days")
    ]
    assert compare_documents(tools, "Which researcher recorded the lowest air temperature?") is None
    assert compare_documents(tools, "Which kitchen keeps its fridges coldest?") is None
    # on-call policies are no kitchens, though they have the longest rotations
    assert compare_documents(tools, "Which kitchen has the longest rotation?") is None


def test_documents_of_another_kind_are_not_compared(
    make_workflow, tmp_path: Path, memory_dir
) -> None:
    """Asked which kitchen has the longest rotation, of a memory holding on-call policies
    only: no kitchen says it is one, and no document is named for kitchens."""
    policies = {name: text for name, text in DOCUMENTS.items() if "oncall" in name}
    built_documents(make_workflow, tmp_path, policies)
    tools = MemoryTools(memory_dir)
    assert compare_documents(tools, "Which kitchen has the longest rotation?") is None
    assert chosen(tools, "Which company has the longest rotation?") == [
        ("Cobalt oncall policy", "two weeks")
    ]


def test_the_sentence_saying_the_asked_thing_as_asked_gives_the_value(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    """The 1.5B model's look-alike policies: the escalation beside the acknowledgement says
    "acknowledged" and "page" too, and a policy says "required" of something else; the
    clause saying "acknowledge a page" as the question joins them gives the value, and
    "require" is what the bound is to the policies, not what it bounds. A rotation's
    length is what it "lasts", not the days off it earns, and a maximum of consecutive
    rotations is no extreme of a time."""

    def strict(ack: str, escalate: str, rotation: str) -> str:
        return (
            "# On-call policy\n\nEvery on-call engineer carries the pager. A written report "
            "is required after each incident.\n\n## Escalation\n\n"
            f"The primary acknowledges a page within {ack}. If the page is not acknowledged "
            f"after {escalate}, it escalates to the secondary.\n\n## Rotation\n\n"
            f"A rotation lasts {rotation}. Each completed rotation earns 1 day off. The "
            "maximum is 2 consecutive rotations, then at least ten days off.\n"
        )

    documents = {
        "acme-oncall-policy.md": strict("5 minutes", "10 minutes", "7 days"),
        "borealis-oncall-policy.md": strict("3 minutes", "8 minutes", "10 days"),
        "cobalt-oncall-policy.md": strict("15 minutes", "30 minutes", "14 days"),
    }
    built_documents(make_workflow, tmp_path, documents)
    tools = MemoryTools(memory_dir)
    question = (
        "Which companies require the primary on-call engineer to acknowledge a page within 5 "
        "minutes or less?"
    )
    assert chosen(tools, question) == [
        ("Acme oncall policy", "5 minutes"),
        ("Borealis oncall policy", "3 minutes"),
    ]
    assert chosen(tools, "Which company has the longest on-call rotation?") == [
        ("Cobalt oncall policy", "14 days")
    ]
    assert chosen(tools, "Which company has the shortest on-call rotation?") == [
        ("Acme oncall policy", "7 days")
    ]


def test_a_statistic_the_question_names_is_compared_not_the_extremes_beside_it(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    """ "The lowest mean air temperature" is the lowest of the means: the lowest readings
    beside them are other figures. Without "mean", the lowest may be either (the model's)."""
    built_documents(make_workflow, tmp_path, SURVEYS)
    tools = MemoryTools(memory_dir)
    question = "Which researcher recorded the lowest mean air temperature, and what was it?"
    assert chosen(tools, question) == [("Varga field report", "8.5 °C")]
    assert compare_documents(tools, "Which researcher recorded the lowest air temperature?") is None


# Each word's weight as the look-alike memory of the evaluation gives it (1 / (1 + the
# memories holding it)): "acknowledge" is rare, "primary" and "page" common, "require" rare.
LOOKALIKE_WEIGHTS = {
    "acknowledg": 0.125, "primari": 0.05, "page": 0.048, "engin": 0.034, "call": 0.032,
    "requir": 0.167,
}  # fmt: skip
BRINDLEWAVE = (
    "# Brindlewave on-call policy\n\nEvery on-call engineer holds the pager; at least one "
    "full week off the rotation is required.\n\n## Escalation\n\nThe primary must "
    "acknowledge a page within 5 minutes. If a page is still unacknowledged after 10 "
    "minutes, it escalates to the secondary. If neither engineer has acknowledged it after 25 "
    "minutes, it escalates to the engineering manager on duty.\n"
)


def test_the_acknowledgement_is_told_from_the_escalations_by_the_words_it_joins() -> None:
    """The look-alike policy as the evaluation's memory weighs its words: the escalations
    beside the acknowledgement say "acknowledged" too, and only the clause joining
    "acknowledge a page" as the question does says clearly more; "required", said of the
    weeks off, would otherwise count as a word the best clause lacks."""
    question = (
        "Which companies require the primary on-call engineer to acknowledge a page within 5 "
        "minutes or less?"
    )
    asked = _parse(question)
    assert asked is not None
    value = _value(BRINDLEWAVE, "brindlewave-oncall-policy.md", asked, LOOKALIKE_WEIGHTS)
    assert value is not None and value[0] == "5 minutes"
    # Osprine's escalation says "the page is not acknowledged": all but "primary"
    osprine = BRINDLEWAVE.replace(
        "must acknowledge a page within 5", "acknowledges a page within 10"
    )
    osprine = osprine.replace(
        "If a page is still unacknowledged after 10", "If the page is not acknowledged after 20"
    )
    value = _value(osprine, "osprine-oncall-policy.md", asked, LOOKALIKE_WEIGHTS)
    assert value is not None and value[0] == "10 minutes"


def report(body: str) -> str:
    return f"# Report\n\n## Findings\n\n{body}\n"


@pytest.mark.parametrize(
    ("documents", "question", "expected"),
    [
        # the adversarial review's: a document saying none of the question's words, whose
        # "lasts" alone must not make its value the rotation's
        (
            {
                "delta-oncall-policy.md": policy("5 minutes", "10 minutes", "7 days"),
                "echo-oncall-policy.md": policy("5 minutes", "10 minutes", "14 days"),
                "delta-leave-policy.md": "# Leave policy\n\nParental leave lasts 16 weeks.\n",
            },
            "Which company has the longest on-call rotation?",
            None,
        ),
        # "the last 7 days of backups" is no length of the retention
        (
            {
                f"{name}-backup-policy.md": report(
                    f"Backups are retained for {kept}. The last {last} of backups are "
                    "also copied off site."
                )
                for name, kept, last in [
                    ("acme", "30 days", "7 days"),
                    ("cobalt", "60 days", "14 days"),
                ]
            },
            "Which company has the longest backup retention?",
            None,
        ),
        # the build phase lasted longest; the requirements phase is asked about
        (
            {
                f"{name}-project-report.md": report(
                    f"Requirements were gathered over {asked}. The build phase lasted {build}."
                )
                for name, asked, build in [
                    ("alpha", "3 weeks", "8 weeks"),
                    ("gamma", "2 weeks", "10 weeks"),
                ]
            },
            "Which project had the longest requirements phase?",
            None,
        ),
        # a minimum is no average
        (
            {
                "varga-lake-report.md": report("Water fell to a minimum of 2.0 °C in week 3."),
                "lind-lake-report.md": report("The average water temperature was 4.0 °C."),
                "ostra-lake-report.md": report("The average water temperature was 6.5 °C."),
            },
            "Which report gives the lowest average water temperature?",
            None,
        ),
        # "company's" asks nothing of an "s"; what the title says is said of the rotation
        (
            {
                "delta-oncall-policy.md": policy("5 minutes", "10 minutes", "7 days"),
                "echo-oncall-policy.md": policy("5 minutes", "10 minutes", "14 days").replace(
                    "## Rotation\n\n", "## Rotation\n\nEach rotation earns 2 days off. "
                ),
            },
            "Which company's on-call policy has the longest rotation?",
            [("Echo oncall policy", "14 days")],
        ),
    ],
)
def test_the_adversarial_reviews_comparisons_are_not_answered_wrong(
    make_workflow, tmp_path: Path, memory_dir: Path, documents, question, expected
) -> None:
    built_documents(make_workflow, tmp_path, documents)
    assert chosen(MemoryTools(memory_dir), question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Which company has the longest rotation? Explain why.",
        "Which companies acknowledge within 5 minutes? What happens after that?",
    ],
)
def test_a_comparison_with_more_asked_after_it_is_the_models(question: str) -> None:
    assert _parse(question) is None


def test_a_length_is_what_lasts_in_a_clause_saying_what_is_asked() -> None:
    """ "The last 7 days" is no length; a clause saying none of the question's words is not
    made the answer by its "lasts", though the title says them all; "company's" asks
    nothing of an "s"."""
    weights = {"backup": 0.2, "retent": 0.2, "rotat": 0.2, "call": 0.1}
    asked = _parse("Which company has the longest backup retention?")
    assert asked is not None
    text = (
        "# Policy\n\nBackups are retained for 30 days. The last 7 days of backups are "
        "retained off site.\n"
    )
    assert _value(text, "acme-policy.md", asked, weights) is None  # which is meant: unclear
    asked = _parse("Which company's on-call policy has the longest rotation?")
    assert asked is not None and "s" not in asked.topic
    text = "# On-call rotation\n\nParental leave lasts 16 weeks. A rotation is 7 days.\n"
    assert _value(text, "acme-policy.md", asked, weights) == (
        "7 days",
        10080.0,
        "A rotation is 7 days.",
    )
