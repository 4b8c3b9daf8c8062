"""Which documents state a thing (issue 10, item 4: "for 'which documents…' questions it
enumerates"): every document is read for the question's words, the ones that deny it are
left out, and each listed one comes with its sentence and its memory as the source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gam_desktop.engine.ask.listing import list_documents, listing_answer, listing_question
from gam_desktop.engine.ask.tools import MemoryTools
from tests.documents import built_documents, built_tools

NOTES = {
    "orbit-1.0-release-notes.md": (
        "# Orbit 1.0 release notes\n\nOrbit 1.0 is the first release of the sync client.\n\n"
        "## Removed settings\n\nNo settings were removed in this release. The settings "
        "file is new.\n\n## Weather\n\nThe launch day was clear.\n"
    ),
    "orbit-1.1-release-notes.md": (
        "# Orbit 1.1 release notes\n\nOrbit 1.1 speeds up uploads.\n\n"
        "## Removed settings\n\n- `lan_mode` is removed: it did not work well.\n"
        "- `retry_count` is renamed to `retries`.\n\n## Weather\n\nFog delayed the launch "
        "by (almost) two hours.\n"
    ),
    "orbit-1.2-release-notes.md": (
        "# Orbit 1.2 release notes\n\nOrbit 1.2 adds a dark theme.\n\n"
        "REMOVED SETTINGS\n----------------\nNothing was removed in this release.\n\n"
        "WEATHER\n-------\nThere was no fog on launch day.\n"
    ),
    "orbit-2.0-release-notes.md": (
        "# Orbit 2.0 release notes\n\nOrbit 2.0 is a new engine.\n\n"
        "REMOVED SETTINGS\n----------------\n`upload_cap` is removed, replaced by `bandwidth`."
        "\n\nWEATHER\n-------\nA light fog lay over the harbour; the launch went ahead.\n"
    ),
}


@pytest.fixture
def built(make_workflow, tmp_path: Path):
    """Four look-alike release notes with the same sections, built into a memory."""
    return built_documents(make_workflow, tmp_path, NOTES)


@pytest.fixture
def notes(built, memory_dir: Path) -> MemoryTools:
    return MemoryTools(memory_dir)


@pytest.mark.parametrize(
    ("question", "kind", "words"),
    [
        ("Which field reports mention fog?", ["field", "report"], ["fog"]),
        ("Which Orbit releases removed a setting?", ["orbit", "releas"], ["remov", "set"]),
        ("Which companies use Threadline for incident chat?", ["compani"], None),
        ("Which companies' on-call policies name Klaxo?", ["compani", "call", "polici"], None),
        ("Which researchers' teams landed on Hallan Skerry?", ["research", "team"], None),
    ],
)
def test_a_listing_question_names_what_is_listed_and_what_they_say(
    question: str, kind: list[str], words: list[str] | None
) -> None:
    parsed = listing_question(question)
    assert parsed is not None and parsed.kind == kind
    if words is not None:
        assert [w for w, _ in parsed.words] == words


@pytest.mark.parametrize(
    "question",
    [
        "Which company has the longest on-call rotation?",  # one thing, compared
        "Which companies have the longest rotations?",  # a superlative is not a listing
        "Which companies page for any SEV3 incident?",  # "any" of them: read, not listed
        "Which restaurants cool food within 90 minutes or less?",
        "Which paging tool does Quillfern use?",  # one thing of a named subject
        "Which releases changed the retention, and to how many days?",  # and a second one
        "Which releases removed no settings?",  # denies: the ones that did are not it
        "How many reports mention fog?",
        "What is the retention of Orbit 2.0?",
    ],
)
def test_other_questions_are_not_listings(question: str) -> None:
    assert listing_question(question) is None


def test_documents_that_deny_it_are_not_listed(notes: MemoryTools) -> None:
    """ "No settings were removed", "Nothing was removed": the 1.5B model named those
    releases. "is removed: it did not work" is not a denial."""
    listed = list_documents(notes, "Which Orbit releases removed a setting?")
    assert listed is not None
    assert [item.document for item in listed] == [
        "Orbit 1.1 release notes",
        "Orbit 2.0 release notes",
    ]
    assert listed[0].sentence == "`lan_mode` is removed: it did not work well."
    assert listed[1].sentence == "`upload_cap` is removed, replaced by `bandwidth`."


def test_each_listed_document_is_cited_by_the_memory_holding_its_sentence(
    notes: MemoryTools,
) -> None:
    listed = list_documents(notes, "Which release notes mention fog?")
    assert listed is not None
    assert [item.document for item in listed] == [
        "Orbit 1.1 release notes",
        "Orbit 2.0 release notes",
    ]  # 1.2: "There was no fog"
    for item in listed:
        assert item.memories
        for memory in item.memories:
            original = notes.run("cat", {"file": memory, "original": True}).text
            assert "fog" in original.lower(), (memory, original)


def test_nothing_is_listed_when_no_document_says_it(notes: MemoryTools) -> None:
    assert list_documents(notes, "Which release notes mention snow?") is None
    # A kind that is not documents nor who they are about is the model's to answer.
    assert list_documents(notes, "Which settings were removed?") is None


def test_a_listing_is_answered_from_the_documents_without_a_call(built, llm_server) -> None:
    """The answer names each document, quotes it, and cites its memory; no model call."""
    before = len(llm_server.state.requests)
    result = built.request("Which Orbit releases removed a setting?")
    assert llm_server.state.tasks()[before:] == []
    assert result.answer.splitlines()[0] == "Orbit 1.1 release notes and Orbit 2.0 release notes."
    assert "“`lan_mode` is removed: it did not work well.”" in result.answer
    assert "1.0" not in result.answer and "1.2" not in result.answer
    assert {c.source for c in result.citations} == {
        "orbit-1.1-release-notes.md",
        "orbit-2.0-release-notes.md",
    }


LOGS = {
    "north-field-log.md": "# North field log\n\nFog: none.\n\nGales blew on 2 days.\n",
    "east-field-log.md": "# East field log\n\nThe whole season was fog-free and calm.\n",
    "west-field-log.md": (
        "# West field log\n\nFog did not stop the boat work; fog lay over the bay on 6 mornings.\n"
    ),
    "south-field-log.md": (
        "# South field log\n\nThere was no fog in May. Fog covered the islands on 9 days in June.\n"
    ),
    "quiz-field-log.md": (
        "# Quiz field log\n\nWas there fog this season?\n\n| Weather | Days |\n|---|---|\n"
        "| Fog | 0 |\n"
    ),
    "harbour-policy.md": "# Harbour policy\n\nBoats leave at 15 minutes past the hour in fog.\n",
    "ice-field-log.md": "# Ice field log\n\nFog rolled over Tern Point every morning.\n",
    "cape-field-log.md": "# Cape field log\n\nFog hid Tern Point from the boat all week.\n",
}


@pytest.fixture
def logs(make_workflow, tmp_path: Path, memory_dir: Path) -> MemoryTools:
    return built_tools(make_workflow, tmp_path, memory_dir, LOGS)


def names(listed) -> list[str]:
    assert listed is not None
    return [item.document for item in listed]


def test_what_denies_it_in_other_words_is_not_listed(logs: MemoryTools) -> None:
    """ "Fog: none", "fog-free", a table's 0 and a question are no mention of fog; "did not
    stop …; fog lay" and "no fog in May. Fog covered …" are (the adversarial review's
    cases). A harbour policy is not a field log."""
    listed = list_documents(logs, "Which field logs mention fog?")
    assert {item.document for item in listed} == {
        "Cape field log",
        "Ice field log",
        "South field log",
        "West field log",
    }
    assert all(not item.lacking for item in listed)


def test_the_kind_asked_for_is_the_documents_kind(logs: MemoryTools) -> None:
    assert names(list_documents(logs, "Which policies mention fog?")) == ["Harbour policy"]
    # documents of any kind; "anything" is no word of what they say
    assert "Harbour policy" in names(list_documents(logs, "What documents say anything about fog?"))


def test_a_question_that_denies_is_the_models(logs: MemoryTools) -> None:
    assert list_documents(logs, "Which field logs had no fog?") is None
    assert list_documents(logs, "Which field logs mention fog without gales?") is None


def test_a_document_saying_all_but_one_word_is_listed_apart(logs: MemoryTools) -> None:
    listed = list_documents(logs, "Which field logs mention fog rolling over Tern Point?")
    assert listed is not None
    assert [(item.document, item.lacking) for item in listed] == [
        ("Ice field log", ""),
        ("Cape field log", "rolling"),
    ]
    answer = listing_answer(listed)
    assert answer.startswith("Ice field log.\n")
    assert "- **Cape field log** (no “rolling”): “Fog hid Tern Point from the boat all week.”" in (
        answer
    )
    # Nothing says every word: no list, the model answers
    assert list_documents(logs, "Which field logs mention fog hiding Gull Point?") is None


def test_a_span_of_thousands_of_digits_is_no_span(built, memory_dir: Path) -> None:
    """A hand-edited front matter (the review's case: int() refuses 4,300 digits and more)
    leaves that memory without an original; search and listing go on."""
    memory = next(p for p in memory_dir.rglob("*.md") if p.name != "README.md")
    text = memory.read_text()
    memory.write_text(re.sub(r"(?m)^span: .*$", f"span: [1, {'9' * 5000}]", text, count=1))
    tools = MemoryTools(memory_dir)
    key = memory.relative_to(memory_dir).as_posix()
    assert tools.corpus.text(key + "#original") is None and tools.corpus.source_of(key) is None
    assert not tools.run("grep", {"pattern": "removed"}).error
    assert list_documents(tools, "Which Orbit releases removed a setting?") is not None


LANDINGS = {
    "puffin-field-log.md": "# Puffin field log\n\nWe landed on Hallan Skerry on 10 June.\n",
    "tern-field-log.md": "# Tern field log\n\nThe calm sea allowed two landings on Hallan Skerry.",
    "gull-field-log.md": (
        "# Gull field log\n\nThe swell prevented any landing on Hallan Skerry.\n\n## Counts\n\n"
        "Hallan Skerry was counted from the boat.\n\n## Advice\n\n"
        "A landing on Hallan Skerry should be attempted in a calmer month.\n"
    ),
    "seal-field-log.md": "# Seal field log\n\nThe team plans to land on Hallan Skerry in May.\n",
    # says "landing" of something else: a paraphrase, perhaps, for the reader to judge
    "kittiwake-field-log.md": (
        "# Kittiwake field log\n\nHallan Skerry was counted from the boat.\n\n## Gear\n\n"
        "The landing net was mended.\n"
    ),
}


@pytest.fixture
def landings(make_workflow, tmp_path: Path, memory_dir: Path) -> MemoryTools:
    return built_tools(make_workflow, tmp_path, memory_dir, LANDINGS)


def test_asked_what_was_done_a_plan_or_advice_is_not_listed(landings: MemoryTools) -> None:
    """The 1.5B evaluation's finding: "Which researchers' teams landed on Hallan Skerry?"
    listed the report whose team never landed, quoting its advice "A landing … should be
    attempted in a calmer month", then as "close" (its counts name the island, not a
    landing), though it says "landing" only to deny or advise it. Asked what a document
    mentions, its advice and plans do mention it."""
    listed = list_documents(landings, "Which teams landed on Hallan Skerry?")
    assert [(item.document, item.lacking) for item in listed or []] == [
        ("Puffin field log", ""),
        ("Tern field log", ""),
        ("Kittiwake field log", "landed"),
    ]
    mentioned = names(list_documents(landings, "Which field logs mention landing on Hallan?"))
    assert mentioned == [
        "Gull field log",
        "Puffin field log",
        "Seal field log",
        "Tern field log",
        "Kittiwake field log",
    ]


@pytest.mark.parametrize(
    ("sentence", "past", "denied"),
    [
        ("`upload_cap` will be removed in 5.0.", "removed", True),
        ("`upload_cap` will be removed in 5.0.", "", False),  # not asked what was done
        ("We'll remove `upload_cap` later.", "removed", True),
        ("`upload_cap` is removed; a new setting will replace it.", "removed", False),
        ("`upload_cap` is removed.", "removed", False),
        # the adversarial review's: it says it was done, and what will be done too
        ("`lan_sync`, deprecated in 3.0, is removed and will be ignored.", "removed", False),
        ("We landed on Hallan on 10 June and will land there again in 2024.", "landed", False),
    ],
)
def test_a_plan_says_nothing_of_what_was_done(sentence: str, past: str, denied: bool) -> None:
    from gam_desktop.engine.ask.listing import _denies

    word = "land" if past == "landed" else "remov"
    assert _denies(sentence, word, past=past) is denied


@pytest.mark.parametrize(
    ("question", "verb"),
    [
        ("Which researchers' teams landed on Hallan Skerry?", "landed"),
        ("Which Lumenvault releases removed a setting?", "removed"),
        # "cooked", "unacknowledged", "encrypted": no verb of what was done
        ("Which restaurants require cooked food to be cooled within 90 minutes?", ""),
        ("Which policies escalate unacknowledged pages to the manager?", ""),
        ("Which release notes mention encrypted backups?", ""),
    ],
)
def test_what_was_done_is_asked_by_the_verb_after_the_kind(question: str, verb: str) -> None:
    parsed = listing_question(question)
    assert parsed is not None and parsed.past == verb


PAGING = {
    "kestrel-oncall-policy.md": (
        "# Kestrel on-call policy\n\n## Paging windows\n\n"
        "- SEV1 and SEV2 incidents page at any time of day or night.\n"
        "- SEV3 incidents page only between 07:00 and 22:00. Outside those hours they wait.\n"
    ),
    "heron-oncall-policy.md": (
        "# Heron on-call policy\n\n## Paging windows\n\n"
        "All severities page at any hour. SEV1, SEV2 and SEV3 incidents page 24 hours a day, "
        "because payouts wait otherwise. Only SEV4 issues wait for business hours.\n"
    ),
    "plover-oncall-policy.md": (
        "# Plover on-call policy\n\n## Paging windows\n\n"
        "SEV3 incidents page at any hour only on working days.\n"
    ),
    # limited in other words, or in the paragraph's next sentence (the review's cases)
    "gull-oncall-policy.md": (
        "# Gull on-call policy\n\n## Paging windows\n\nSEV3 incidents page at any hour, except "
        "during the Sunday maintenance window.\n"
    ),
    "tern-oncall-policy.md": (
        "# Tern on-call policy\n\n## Paging windows\n\nSEV3 incidents page at any hour. This "
        "rule is suspended from 1 January 2024; SEV3 then pages during office hours.\n"
    ),
    "puffin-oncall-policy.md": (
        "# Puffin on-call policy\n\n## Paging windows\n\nSEV3 incidents page 24x7.\n"
    ),
    # says nothing of when: not an answer to "at any hour"
    "stilt-oncall-policy.md": (
        "# Stilt on-call policy\n\n## Paging windows\n\nSEV3 incidents page the primary by phone.\n"
    ),
    "wren-oncall-policy.md": (
        "# Wren on-call policy\n\n## Paging windows\n\nSEV3 incidents page around the clock.\n"
    ),
}


@pytest.fixture
def paging(make_workflow, tmp_path: Path, memory_dir: Path) -> MemoryTools:
    return built_tools(make_workflow, tmp_path, memory_dir, PAGING)


def test_asked_what_happens_at_any_hour_a_window_is_no_answer(paging: MemoryTools) -> None:
    """The 1.5B model named the two companies whose SEV3 pages "only between 07:00 and
    22:00" as paging SEV3 at any hour: their other severities do, a list item above.
    The sentence listed must say the asked thing happens always and limit it nowhere."""
    question = "Which companies' on-call policies page for SEV3 incidents at any hour of the day?"
    listed = list_documents(paging, question)
    assert names(listed) == ["Heron oncall policy", "Puffin oncall policy", "Wren oncall policy"]
    assert "24 hours a day" in (listed or [])[0].sentence
    # the same question without the quantifier lists every policy paging SEV3
    every = names(list_documents(paging, "Which companies' on-call policies page SEV3 incidents?"))
    assert len(every) == 8
