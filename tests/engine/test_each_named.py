"""A measure of each document a question names (issue 10: two-part questions over two
named look-alikes): the 1.5B model answered the single-file size "in Lumenvault 3.0, and
in Lumenvault 4.0" with "100 GB" and "100 MB", the 4.0 notes' figure of an upload issue.
Each named document is read for its own sentence instead, with no model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.ask import units
from gam_desktop.engine.ask.compare import Compared
from gam_desktop.engine.ask.each_named import (
    each_named,
    named_answer,
    named_values,
)
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.store.markdown import parse_memory
from tests.documents import built_documents, built_tools

NOTES = {
    "orbit-3.0-release-notes.md": (
        "# Orbit 3.0 release notes\n\n## Limits\n\n- Maximum size of a single file: 20 GB.\n"
        "- Devices per account: 3.\n\n## Defaults\n\n- Backup interval: every 60 minutes.\n"
        "- Retention of deleted files: 30 days.\n"
    ),
    "orbit-4.0-release-notes.md": (
        "# Orbit 4.0 release notes\n\n## Limits\n\n- Maximum size of a single file: 200 GB.\n"
        "- Devices per account: 10.\n\n## Defaults\n\n- Backup interval: every 15 minutes.\n"
        "- Retention of deleted files: 90 days.\n\n## Known issues\n\n"
        "- Uploads of a file over 100 GB pause for 24 hours after a network change.\n"
    ),
    "heron-oncall-policy.md": (
        "# Heron on-call policy\n\n## Rotation\n\nA rotation lasts 14 days. Each completed "
        "rotation earns 1 day off.\n\n## Escalation\n\nAn unacknowledged page escalates to the "
        "secondary after 30 minutes.\n"
    ),
    "wren-oncall-policy.md": (
        "# Wren on-call policy\n\n## Rotation\n\nA rotation lasts 7 days.\n\n## Escalation\n\n"
        "An unacknowledged page escalates to the secondary after 10 minutes.\n"
    ),
}
SIZE = "What was the maximum single-file size in Orbit 3.0, and what is it in Orbit 4.0?"


@pytest.fixture
def built(make_workflow, tmp_path: Path):
    return built_documents(make_workflow, tmp_path, NOTES)


@pytest.fixture
def notes(make_workflow, tmp_path: Path, memory_dir: Path) -> MemoryTools:
    return built_tools(make_workflow, tmp_path, memory_dir, NOTES)


def test_each_named_document_gives_its_own_value(notes: MemoryTools) -> None:
    values = each_named(notes, SIZE)
    assert values is not None
    assert [(v.document, v.said) for v in values] == [
        ("Orbit 3.0 release notes", "20 GB"),
        ("Orbit 4.0 release notes", "200 GB"),
    ]
    assert values[1].sentence == "Maximum size of a single file: 200 GB."
    for value in values:  # each cited by a memory of its own document holding its sentence
        for memory in value.memories:
            text = (notes.sandbox.root / memory).read_text()
            assert parse_memory(text).front["source"] == value.source and value.said in text
    answer = named_answer(values)
    assert answer.startswith("Orbit 3.0 release notes: 20 GB; Orbit 4.0 release notes: 200 GB.")
    assert "100" not in answer


@pytest.mark.parametrize(
    ("question", "said"),
    [
        # in the order the question names them, however it lists them
        (
            "How did the default backup interval change from Orbit 4.0 back to Orbit 3.0?",
            ["15 minutes", "60 minutes"],
        ),
        # "how long": what a rotation lasts, not the day off it earns
        ("How long is a rotation at Heron and at Wren?", ["14 days", "7 days"]),
        (
            "Compare after how many minutes a page escalates at Wren and Heron.",
            ["10 minutes", "30 minutes"],
        ),
    ],
)
def test_the_values_follow_the_question(notes: MemoryTools, question: str, said: list[str]) -> None:
    values = each_named(notes, question)
    assert [v.said for v in values or []] == said


@pytest.mark.parametrize(
    "question",
    [
        "What is the maximum single-file size in Orbit 4.0?",  # one document named
        "What is the maximum single-file size in Orbit 3.0, 4.0 and 5.0?",  # 5.0: not here
        "Compare the maximum single-file size of Orbit 3.0 and 4.0, and explain why.",  # more
        "Compare the escalation of Heron and Wren.",  # no measure asked: more may be meant
        "How many devices per account do Orbit 3.0 and Orbit 4.0 allow?",  # counts: no unit
        "Which is larger, the file size limit of Orbit 3.0 or Orbit 4.0?",  # which: compared
    ],
)
def test_what_it_does_not_settle_is_the_models(notes: MemoryTools, question: str) -> None:
    assert each_named(notes, question) is None


def test_a_document_giving_two_values_alike_settles_nothing(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    """Two sentences saying as much with different values: which is meant is unclear."""
    twice = {
        **{k: v for k, v in NOTES.items() if k.startswith("orbit-3.0")},
        "orbit-4.0-release-notes.md": (
            "# Orbit 4.0 release notes\n\n- Backup interval: every 15 minutes.\n\n"
            "- Backup interval on battery: every 45 minutes.\n"
        ),
    }
    built_documents(make_workflow, tmp_path, twice)
    question = "What is the backup interval in Orbit 3.0 and in Orbit 4.0?"
    assert each_named(MemoryTools(memory_dir), question) is None


def test_the_chat_answers_from_each_named_document_without_a_call(built, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = built.request(SIZE)
    assert len(llm_server.state.requests) == before  # no model call
    assert "20 GB" in result.answer and "200 GB" in result.answer
    assert {c.source for c in result.citations} == {
        "orbit-3.0-release-notes.md",
        "orbit-4.0-release-notes.md",
    }
    assert "read the value of each of the 2 documents named" in result.trajectory


def test_values_of_different_kinds_settle_nothing(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    """ "60 minutes" of one and "2 GB" of the other: not one measure, whatever the words."""
    unlike = {
        "orbit-3.0-release-notes.md": "# Orbit 3.0 release notes\n\n- Upload limit: 60 minutes.\n",
        "orbit-4.0-release-notes.md": "# Orbit 4.0 release notes\n\n- Upload limit: 2 GB.\n",
    }
    built_documents(make_workflow, tmp_path, unlike)
    question = "What is the upload limit in Orbit 3.0 and in Orbit 4.0?"
    assert each_named(MemoryTools(memory_dir), question) is None


@pytest.mark.parametrize(
    ("question", "said"),
    [
        # the 4.0 notes' own limit, not the 100 GB of its known issue
        ("What is the maximum single-file size in Orbit 4.0?", "200 GB"),
        ("At Heron, after how many minutes does a page escalate to the secondary?", "30 minutes"),
        ("How long is a rotation at Wren?", "7 days"),
    ],
)
def test_the_one_document_named_gives_its_value(
    notes: MemoryTools, question: str, said: str
) -> None:
    values = named_values(notes, question)
    assert values is not None and [value.said for value in values] == [said]
    assert named_answer(values).startswith(f"{said}.\n\n- **")


@pytest.mark.parametrize(
    "question",
    [
        SIZE,  # two documents named: each_named's
        "What is the maximum single-file size in Orbit 5.0?",  # no such document
        "Who wrote the Heron on-call policy?",  # no measure
        # its best sentence says less than half of what is asked: another thing, perhaps
        "How long are the postmortem archives of a Heron rotation kept?",
    ],
)
def test_one_document_settles_only_what_its_sentence_says(
    notes: MemoryTools, question: str
) -> None:
    values = named_values(notes, question)
    assert values is None or len(values) > 1


def test_the_chat_reads_the_one_named_document_unless_asked_to_explore(built, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = built.request("What is the maximum single-file size in Orbit 4.0?")
    assert len(llm_server.state.requests) == before
    assert result.answer.startswith("200 GB.") and result.sources
    assert "read the value from Orbit 4.0 release notes" in result.trajectory
    # exploring on request runs the tool loop, whatever the documents settle
    explored = built.request("What is the maximum single-file size in Orbit 4.0?", explore=True)
    assert len(llm_server.state.requests) > before
    assert "read the value from" not in explored.trajectory


# The adversarial review's cases: each gave a confident wrong value with no model call.
TRAPS = {
    "orbit-5.0-release-notes.md": (
        "# Orbit 5.0 release notes\n\n## Defaults\n\n"
        "- Retention of deleted files was 60 days; it is now 30 days.\n"
        "- Backup interval: between 10 and 20 minutes, depending on load.\n"
        "- Re-keying a 2 TB vault is slow.\n\n## Progress\n\n"
        "The progress bar stays at 0% while the index is read.\n"
    ),
    "kite-oncall-policy.md": (
        "# Kite on-call policy\n\n## Rotation\n\nA separate two-day weekend rotation covers "
        "Saturdays, and each weekend rotation earns 1.5 days off.\n\n## Support\n\n"
        "Support replies to tickets within 8 hours on weekdays. On weekends, only urgent "
        "tickets are answered.\n\n## Weather\n\nThe mean temperature at the site is 11 °C.\n"
    ),
    "windows-setup-guide.md": (
        "# Windows setup guide\n\n- Maximum size of a single file on FAT32: 4 GB.\n"
    ),
    "field-report-varga-2022.md": "# Field report\n\nThe mean air temperature was 8.5 °C.\n",
    "field-report-lind-2022.md": "# Field report\n\nThe mean air temperature was 9.1 °C.\n",
    "field-report-maalouf-2023.md": "# Field report\n\nThe mean air temperature was 11.0 °C.\n",
}


@pytest.fixture
def traps(make_workflow, tmp_path: Path, memory_dir: Path) -> MemoryTools:
    return built_tools(make_workflow, tmp_path, memory_dir, {**NOTES, **TRAPS})


@pytest.mark.parametrize(
    "question",
    [
        "What is the retention of deleted files in Orbit 5.0?",  # the former value first
        "What is the backup interval in Orbit 5.0?",  # a range
        "How long does re-keying take in Orbit 5.0?",  # 2 TB: no time
        "How long does the Orbit 5.0 progress bar stay at 0%?",  # the question's own figure
        "How long is the weekend rotation at Kite?",  # what it earns, not what it lasts
        "How long does Kite support take to reply to tickets on weekends?",  # weekdays' value
        "What is the highest temperature at the Kite site?",  # the mean
        "What is the maximum single-file size in Orbit 4.0 on Windows?",  # no one family
        "What was the mean air temperature in 2022 and in 2023?",  # 2022: two reports
        "What was the mean air temperature in the Maalouf 2023 survey and in 2019?",  # none
        "How much does Kite pay for each weekend day on call?",  # no unit of money is read
    ],
)
def test_a_value_not_surely_the_one_asked_is_the_models(traps: MemoryTools, question: str) -> None:
    assert named_values(traps, question) is None


KITE = (
    "# Kite on-call policy\n\n## Rotation\n\nA rotation lasts 7 days. Breaks are agreed with "
    "the team lead. Accounts of enterprise customers page the lead.\n\n## Site\n\n"
    "The highest reading at the site was 19 °C. Its temperature is logged daily.\n"
)


@pytest.mark.parametrize(
    ("question", "sentence", "rare", "sure"),
    [
        ("How long is a rotation at Kite?", "A rotation lasts 7 days.", {}, True),
        # the document never says "battery": it may not speak of the case asked
        ("How long is a rotation on battery at Kite?", "A rotation lasts 7 days.", {}, False),
        # the rarest word asked ("break") is not in the clause
        ("How long is a break after a rotation?", "A rotation lasts 7 days.", {"break": 0.5},
         False),
        # it says the rarest, but not half of what is asked
        ("How long is a rotation for enterprise accounts with the team lead?",
         "A rotation lasts 7 days.", {"rotat": 0.5}, False),
        # a most asked, and the clause gives none
        ("What is the highest temperature at the Kite site?", "The temperature is 11 °C.",
         {"temperatur": 0.5, "highest": 0.1}, False),
        ("What is the highest temperature at the Kite site?",
         "The highest reading at the site was 19 °C.", {"highest": 0.5}, True),
        # the question's own figure is no answer to it
        ("How long does a rotation of 7 days last?", "A rotation lasts 7 days.", {}, False),
        # what was, where the statement says what is now
        ("What is the retention at Kite?", "Retention was 60 days; it is now 30 days.",
         {"retent": 0.5}, False),
    ],
)  # fmt: skip
def test_a_value_is_taken_only_when_its_clause_says_what_is_asked(
    question: str, sentence: str, rare: dict[str, float], sure: bool
) -> None:
    from gam_desktop.engine.ask.each_named import _says_it, _topic

    text = f"{KITE}\n{sentence}\n"
    topic = _topic(question, ["kite"])
    weights = {t: rare.get(t, 0.25) for t in topic}
    said = units.values(sentence)[0]
    value = Compared(
        "Kite oncall policy", said.base, said.written, sentence, ["m.md"], "kite-oncall-policy.md"
    )
    assert _says_it(value, question, topic, weights, text) == sure
