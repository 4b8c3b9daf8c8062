"""A figure an answer gives must be one its evidence states of what was asked (issue 10's
"answers that check themselves", issue 15's checked claims): the 1.5B model answered a
backup interval with the file size limit listed above it, and a count of puffin burrows
with the dead kittiwakes of the next paragraph."""

from __future__ import annotations

import pytest

from gam_desktop.engine.ask.topic import best_statement, off_topic_figures, unheard_of

NOTES = """# Orbit 3.1 release notes

Released June 20, 2023.

## Limits

- Maximum size of a single file: **50 GB**, up from the previous release.
- Maximum number of devices per account: **5**.

## Defaults

- Backup interval: every **30 minutes**.
- Retention of deleted files: **30 days** (unchanged).
"""

REPORT = """# Field report 2023

## Colony Counts

- **Mote Isle, Atlantic puffin**: 980 occupied burrows in the standard plots.
- **Greyholm, kittiwake**: 301 apparently occupied nests.

The fall in puffin and kittiwake numbers is large. We found **27 dead kittiwakes**.
"""

INTERVAL = "How did the default backup interval change across the Orbit releases 3.0 and 3.1?"
PUFFINS = "Compare the occupied Atlantic puffin burrows on Mote Isle counted by Varga and Lind."


@pytest.mark.parametrize(
    ("answer", "evidence", "question", "flagged"),
    [
        ("The default backup interval in Orbit 3.1 was 50 GB.", NOTES, INTERVAL, ["50"]),
        ("The default backup interval in Orbit 3.1 was 30 minutes.", NOTES, INTERVAL, []),
        ("Lind counted 27 dead kittiwakes.", REPORT, PUFFINS, ["27"]),
        ("Lind counted 301 occupied nests.", REPORT, PUFFINS, ["301"]),
        ("Lind counted 980 occupied burrows in 2023.", REPORT, PUFFINS, []),  # a year: a name
        ("Orbit 3.1 keeps 980 files.", REPORT, INTERVAL, []),  # says nothing of it: can't tell
        ("The interval was 45 minutes.", NOTES, INTERVAL, []),  # never stated: another check's
        ("The backup interval is 30 minutes; files up to 50 GB.", NOTES, INTERVAL, ["50"]),
        # a passage as the prompt shows it, flattened to one line
        ("The default backup interval was 50 GB.", " ".join(NOTES.split()), INTERVAL, ["50"]),
        ("The default backup interval was 30 minutes.", " ".join(NOTES.split()), INTERVAL, []),
    ],
)
def test_a_figure_stated_only_of_another_thing_is_flagged(
    answer: str, evidence: str, question: str, flagged: list[str]
) -> None:
    assert off_topic_figures(answer, evidence, question, "orbit-3.1-release-notes.md") == flagged


def test_the_documents_names_say_which_look_alike_not_what_about() -> None:
    """ "Orbit" and "release" are in every item's document: they weigh nothing; without
    `names` the title line naming Orbit counts as much as the interval."""
    titled = "Orbit 3.1 release notes: 12 fixes.\n\nBackup interval: every 30 minutes.\n"
    question = "What was the backup interval of the Orbit 3.1 release?"
    assert off_topic_figures("It was 12 minutes.", titled, question, "orbit release") == ["12"]
    assert off_topic_figures("It was 12 minutes.", titled, question) == []


def test_the_statement_saying_most_of_what_is_asked_is_taken_as_written() -> None:
    assert best_statement(NOTES, INTERVAL, "orbit-3.1-release-notes.md") == (
        3,
        "Defaults: Backup interval: every 30 minutes.",  # the heading says "default"
    )
    found = best_statement(REPORT, PUFFINS, "field-report-2023.md")
    assert found is not None and found[1].startswith("Colony Counts: Mote Isle, Atlantic puffin:")
    # none says half of what is asked: nothing is taken
    assert best_statement(NOTES, "Which releases renamed the backup interval setting?") is None
    # two say as much: it is not clear which
    twins = "- Upload limit: 10 MB.\n- Download limit: 20 MB.\n"
    assert best_statement(twins, "What is the limit?") is None


@pytest.mark.parametrize(
    ("limits", "stated"),
    [
        # the 3.1 notes' count of devices: one digit, given as the item's value
        ("- Maximum number of devices per account: **5**.\n", True),
        ("- Maximum number of devices per account: 5\n", True),
        # a digit in passing is no value
        ("- Maximum number of devices per account depends on 2 factors.\n", False),
        ("- Pair each device per account: press **2** twice.\n", False),
    ],
)
def test_a_single_digit_given_as_a_value_is_a_statement_of_it(limits: str, stated: bool) -> None:
    notes = f"## Limits\n\n- Maximum size of a single file: **50 GB**.\n{limits}"
    found = best_statement(notes, "What is the maximum number of devices per account?")
    assert (found is not None and "devices" in found[1]) is stated


ESCALATION = """## Escalation

The primary acknowledges a page within **15 minutes**. If the page is not acknowledged
after **20 minutes**, it escalates to the secondary. After **40 minutes** it escalates to
the engineering manager.

## Rotation

The rotation changes on 14 June at 09:00 and on 28 June at 17:30.
"""
SECONDARY = "After how many minutes does a page escalate to the secondary at Osprine?"


@pytest.mark.parametrize(
    ("answer", "flagged"),
    [
        # the 1.5B model's reading: the next sentence's figure, of the same unit
        ("It escalates to the secondary after 40 minutes.", ["40"]),
        ("It escalates to the secondary after 20 minutes.", []),
        # both given, each for what it is: no confusion of one for the other
        ("After 20 minutes to the secondary, after 40 minutes to the manager.", []),
        # days of a month and hours are when, not how much
        ("After 20 minutes; the rotation changed on 14 June at 09:00.", []),
        ("After 20 minutes; the rotation changed 28 times.", ["28"]),
    ],
)
def test_a_figure_of_the_sentence_beside_the_one_asked_is_flagged(
    answer: str, flagged: list[str]
) -> None:
    assert off_topic_figures(answer, ESCALATION, SECONDARY, "osprine-oncall.md") == flagged


def test_asked_of_the_manager_the_manager_sentence_is_the_one() -> None:
    question = "After how many minutes does a page escalate to the engineering manager?"
    assert off_topic_figures("After 40 minutes.", ESCALATION, question) == []
    assert off_topic_figures("After 20 minutes.", ESCALATION, question) == ["20"]


def test_of_a_paragraph_the_sentence_saying_it_is_taken() -> None:
    assert best_statement(ESCALATION, SECONDARY, "osprine-oncall.md") == (
        4,  # minutes, page, escalate, secondary
        "If the page is not acknowledged after 20 minutes, it escalates to the secondary.",
    )


@pytest.mark.parametrize(
    ("answer", "evidence", "question"),
    [  # the adversarial review's right answers, said in other words than the question's
        (
            "By default, backups run every 20 minutes.",
            "# Backup settings\n\nBackups run every 20 minutes.\n\n## Retention\n\n"
            "Deleted files are kept for 30 days by default.\n",
            "What is the default backup interval?",
        ),
        (
            "A full-time employee gets 25 days of annual leave per year.",
            "## Holidays\n\nStaff get 25 days of paid holiday a year.\n\n## Sick leave\n\nSick "
            "leave is paid for up to 10 days a year. A full-time employee's annual leave is "
            "not reduced by sickness.\n",
            "How many days of annual leave does a full-time employee get per year?",
        ),
        (
            "In Lumenvault 5.0, backups run every 20 minutes by default.",
            "## Schedule\n\n- Backups now run every **20 minutes**.\n\n## Upgrade Notes\n\n- The "
            "default backup interval setting now accepts values from 5 to 1440.\n",
            "What is the default backup interval in Lumenvault 5.0?",
        ),
        (  # a plain-text list whose dashes are no list markers
            "The backup interval is 30 minutes.",
            "LUMENVAULT 3.1 - DEFAULT SETTINGS Backup interval - 30 minutes Retention - 90 days",
            "What is the backup interval?",
        ),
    ],
)
def test_a_right_figure_said_in_other_words_is_not_flagged(
    answer: str, evidence: str, question: str
) -> None:
    assert off_topic_figures(answer, evidence, question, "settings.md") == []
    assert off_topic_figures(answer, " ".join(evidence.split()), question, "settings.md") == []


POLICY = """# Osprine Robotics On-Call Policy

## Pay

On-call pay: $55 for each night on call and $150 for each weekend day on call.

## Rotation

A rotation lasts 7 days.
"""
MEMORY_WORDS = {
    "osprine",
    "robotics",
    "call",
    "pay",
    "night",
    "weekend",
    "day",
    "rotation",
    "lasts",
    "year",
    "allowance",
}


@pytest.mark.parametrize(
    ("answer", "question", "unheard"),
    [
        # asked a thing no file names, answered with figures of another: flagged
        (
            "Osprine's annual revenue last year was $55 for each night on call.",
            "What was Osprine Robotics' annual revenue last year?",
            ["annual", "revenu"],
        ),
        # a statement saying a word of the question is another wording of it
        ("A rotation lasts 7 days.", "How long is Osprine's rotation cycle?", []),
        # every word of what is asked is in the memory: the other checks' business
        ("Osprine pays $55 for each night.", "How much does Osprine pay per night?", []),
        # no figure: nothing to judge
        ("Osprine does not state its revenue.", "What was Osprine's revenue?", []),
        # "how big" asks, it does not say what about (the adversarial review's case)
        ("Osprine pays $55 for each night.", "How big is the Osprine allowance?", []),
        # a year or a version is a name, not a value given of it
        ("Osprine's revenue grew in 2023.", "What was Osprine's revenue?", []),
    ],
)
def test_a_thing_the_memory_never_names_answered_with_other_figures_is_flagged(
    answer: str, question: str, unheard: list[str]
) -> None:
    from gam_desktop.engine.ask.words import stem

    def known(term: str) -> bool:
        return any(stem(term) == stem(word) for word in MEMORY_WORDS)

    names = "osprine-oncall-policy.md"
    assert unheard_of(answer, POLICY, question, names, known) == unheard
