"""A question that lists names or versions is planned as one sub-question per name (whose
search then keeps to that name's documents: `evidence.gather` focuses on the names a
question gives)."""

from __future__ import annotations

import pytest

from gam_desktop.engine.research.entities import named_list, split_by_entity
from gam_desktop.engine.research.models import SubQuestion

ESCALATION = (
    "Compare after how many minutes an unacknowledged page escalates to the secondary "
    "engineer at Brindlewave, Osprine, Quillfern and Tallowmere."
)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        (ESCALATION, ["Brindlewave", "Osprine", "Quillfern", "Tallowmere"]),
        ("Compare what Brindlewave and Osprine pay for a weekend day.", ["Brindlewave", "Osprine"]),
        # an Oxford comma: the "and" without one belongs to a name
        (
            "Compare the poultry core temperature in the Ferrovia, Juniper and Ash, and "
            "Saltcellar kitchens.",
            ["Ferrovia", "Juniper and Ash", "Saltcellar"],
        ),
        # bare versions are versions of the product named before them
        (
            "How did the backup interval change across the Lumenvault releases 3.0, 3.1 and 4.0?",
            ["Lumenvault 3.0", "Lumenvault 3.1", "Lumenvault 4.0"],
        ),
        (
            "How did the device limit grow from Lumenvault 3.0 through 3.1 to 4.0?",
            ["Lumenvault 3.0", "Lumenvault 3.1", "Lumenvault 4.0"],
        ),
        (
            "Compare the occupied burrows on Mote Isle counted by Varga, Okafor-Lind and Maalouf.",
            ["Varga", "Okafor-Lind", "Maalouf"],
        ),
    ],
)
def test_the_names_a_question_lists(question: str, names: list[str]) -> None:
    listed = named_list(question)
    assert listed is not None and listed.names == names


@pytest.mark.parametrize(
    "question",
    [
        "Which paging tool does each company's on-call policy use?",
        "When does a page escalate at Brindlewave Logistics?",  # one name, two words
        "What changed in Lumenvault 3.1?",
    ],
)
def test_a_question_that_lists_nothing(question: str) -> None:
    assert named_list(question) is None


def test_one_sub_question_per_listed_name_ahead_of_the_planners_others() -> None:
    everything = SubQuestion(question=ESCALATION, keywords=["escalates"])
    general = SubQuestion(question="What does a secondary engineer do?")
    subs = split_by_entity(ESCALATION, [everything, general])
    assert [s.question for s in subs] == [
        *(
            "After how many minutes an unacknowledged page escalates to the secondary "
            f"engineer at {name}."
            for name in ("Brindlewave", "Osprine", "Quillfern", "Tallowmere")
        ),
        "What does a secondary engineer do?",
    ]
    assert [s.keywords for s in subs[:4]] == [
        ["Brindlewave"],
        ["Osprine"],
        ["Quillfern"],
        ["Tallowmere"],
    ]


def test_versions_alone_are_searched_by_their_number() -> None:
    question = "How did the device limit grow from Lumenvault 3.0 through 3.1 to 4.0?"
    subs = split_by_entity(question, [SubQuestion(question=question)])
    assert [s.question for s in subs] == [
        f"What was the device limit in Lumenvault {v}?" for v in ("3.0", "3.1", "4.0")
    ]
    assert [s.keywords for s in subs] == [["3.0"], ["3.1"], ["4.0"]]


@pytest.mark.parametrize(
    ("question", "first"),
    [
        (
            "How did the default backup interval change across the Lumenvault releases 3.0, "
            "3.1 and 4.0?",
            "What was the default backup interval in Lumenvault 3.0?",
        ),
        (
            "How has the device limit changed from Lumenvault 3.0 through 3.1 to 4.0 for teams?",
            "What was the device limit in Lumenvault 3.0 for teams?",
        ),
        (
            "How did the change log format change across Lumenvault 3.0, 3.1 and 4.0?",
            "What was the change log format in Lumenvault 3.0?",
        ),
        # the list inside what changed: the list replaced, as for any question
        (
            "How did Brindlewave and Osprine change their pay?",
            "How did Brindlewave change their pay?",
        ),
        ("Compare the rotation of Osprine and Quillfern.", "The rotation of Osprine."),
    ],
)
def test_a_question_of_change_asks_each_name_its_value(question: str, first: str) -> None:
    assert split_by_entity(question, [SubQuestion(question=question)])[0].question == first


def test_a_plan_already_asking_about_each_name_alone_is_kept() -> None:
    question = "Compare what Brindlewave and Osprine pay for a weekend day."
    subs = [
        SubQuestion(question="What does Brindlewave pay for a weekend day?"),
        SubQuestion(question="What does Osprine pay for a weekend day?"),
    ]
    assert split_by_entity(question, subs) == subs
