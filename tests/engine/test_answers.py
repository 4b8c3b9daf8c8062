"""Answers that survive look-alike documents (issue 10): originals searchable, memories that
keep their context and facts, evidence in the first prompt, a grounded fallback, answers
that check they are about the entity the question names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gam_desktop.engine.ask.agent import PASSAGES_MARKER
from gam_desktop.engine.ask.evidence import (
    Passage,
    abstains,
    asked_thing,
    clean_ending,
    gather,
    is_scaffolding,
    name_citations,
    qualifiers,
    unsupported_values,
)
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.build.context import NUMBER, document_context, number_coverage
from gam_desktop.engine.build.documents import load_text
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import built_orbit_notes

COMPANIES = {
    "Acme Corp": (5, 30, "PagerBell"),
    "Borealis Systems": (15, 45, "Klaxon"),
    "Cobalt Labs": (10, 60, "Sirenly"),
}


def policy(company: str, page: int, escalate: int, tool: str) -> str:
    """Look-alike policies: the same headings, different numbers; the middle sections never
    name the company, as real policies do not."""
    return f"""# {company} On-Call Policy

This policy describes how on-call engineers are paged and how incidents escalate.

## Paging window

The primary engineer must acknowledge a page within {page} minutes. Pages are sent \
through {tool}. Acknowledgement is recorded automatically by the paging tool.

## Escalation

An unacknowledged incident escalates to the secondary engineer after {escalate} minutes. \
The incident commander is informed when a second escalation happens. Escalation \
reviews take place every Thursday morning with the whole team.

## Rotation

Rotations last one week. They hand over on Monday. Swaps are agreed in the team channel. \
Engineers write swaps into the schedule themselves. Every swap carries the mandatory \
quokka checklist.
"""


def built_policies(make_workflow, folder: Path):
    """The three on-call policies (same headings, different numbers), built in a memory."""
    files = []
    for company, (page, escalate, tool) in COMPANIES.items():
        path = folder / f"{company.split()[0].lower()}_oncall.md"
        path.write_text(policy(company, page, escalate, tool))
        files.append(path)
    workflow = make_workflow(min_tokens=20, max_tokens=90)
    workflow.add(files=files)
    return workflow


@pytest.fixture
def lookalikes(make_workflow, tmp_path: Path):
    return built_policies(make_workflow, tmp_path)


@pytest.fixture
def unsettled(monkeypatch) -> None:
    """The model's path, as for a question no named document settles by its own value
    (`each_named.named_values` answers "How long until escalation at Borealis?" itself)."""
    from gam_desktop.engine.ask import agent

    monkeypatch.setattr(agent, "named_values", lambda _tools, _question: None)


def memories(root: Path) -> dict[str, dict]:
    folder = MemoryFolder(root)
    found = {}
    for node in folder.load_view().walk():
        for name, front in folder.read_fronts(node).items():
            text = (root / node.path / name).read_text()
            found[f"{node.path}/{name}".lstrip("/")] = {**front, "body": parse_memory(text).body}
    return found


def test_every_memory_names_its_document_and_keeps_its_facts(lookalikes, memory_dir) -> None:
    folder = MemoryFolder(memory_dir)
    found = memories(memory_dir)
    assert len(found) >= 9
    titles = [m["title"] for m in found.values()]
    assert len(set(titles)) == len(titles) and not any(re.search(r"_\d+$", t) for t in titles)
    for front in found.values():
        company = {"acme": "Acme", "borealis": "Borealis", "cobalt": "Cobalt"}[
            front["source"].split("_")[0]
        ]
        assert front["title"].startswith(company.lower()), front["title"]
        assert company in front["body"] and company in front["tldr"]
        original = folder.original_text(front)
        assert original is not None
        note = f"{front['tldr']} {front['body']}"  # the body goes on from the tldr
        assert number_coverage(note, original) == 1.0, (note, original)


def test_a_model_that_lists_headings_gets_the_passages_own_sentences(
    make_workflow, llm_server
) -> None:
    """A small model that summarizes a chunk into its headings ("Covers: Escalation.", as
    tldr and text) loses every number: the note's text is then the passage's own opening
    sentences, numbers and all, not a dump appended to the model's words (issue 35)."""
    llm_server.state.faults.append(Fault("headings_only", times=100, task="memorize"))
    workflow = make_workflow(min_tokens=20, max_tokens=90)
    workflow.add(text=policy("Acme Corp", 5, 30, "PagerBell"))
    for front in memories(workflow.folder.root).values():
        original = MemoryFolder(workflow.folder.root).original_text(front)
        assert "Covers:" not in front["body"] and "Details from the original" not in front["body"]
        assert set(NUMBER.findall(original)) <= set(NUMBER.findall(front["body"]))


def test_originals_are_found_by_grep_and_bm25_and_readable(lookalikes, memory_dir) -> None:
    """The scripted model keeps three sentences and the ones with numbers: "quokka" (last
    sentence of the rotation section) is in the originals only."""
    tools = MemoryTools(memory_dir)
    assert not any("quokka" in m["body"] for m in memories(memory_dir).values())
    grep = tools.run("grep", {"pattern": "quokka"})
    assert "(original text):" in grep.text and len(grep.matched) == 3
    assert all(p.endswith(".md") and (memory_dir / p).is_file() for p in grep.matched)
    search = tools.run("bm25_search", {"query": "quokka checklist"})
    assert "(original text)" in search.text and set(search.matched) <= set(grep.matched)
    original = tools.run("cat", {"file": grep.matched[0], "original": True})
    assert "quokka" in original.text and original.text.startswith("Original text of")
    assert original.read == [grep.matched[0]]
    assert tools.run("cat", {"file": "README.md", "original": True}).error  # not a memory


def test_the_first_prompt_carries_the_best_passages(lookalikes, llm_server) -> None:
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    first = next(r for r in llm_server.state.requests if r["task"] == "chat")
    prompt = first["messages"][-1]["content"]
    assert PASSAGES_MARKER in prompt
    passages = prompt.split(PASSAGES_MARKER, 1)[1].split("\n\nThe memory's root README")[0]
    files = re.findall(r"^\[\d\] (\S+)", passages, re.MULTILINE)
    assert len(files) >= 3 and "45 minutes" in passages
    assert all("borealis" in f for f in files)  # only the named company's: no look-alike
    assert "45" in result.answer


def test_scaffolding_is_never_an_answer(lookalikes, llm_server) -> None:
    llm_server.state.faults.append(Fault("scaffold", times=10, task="chat"))
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    assert not is_scaffolding(result.answer) and "top-level folders" not in result.answer
    assert "45 minutes" in result.answer
    assert result.sources and all("borealis" in s for s in result.sources)
    assert "answered from passages" in (result.notes or "")


@pytest.fixture
def unfocused(monkeypatch) -> None:
    """Retrieval that lets look-alikes in (the first defence switched off), to test the
    second: the check of what an answer cites."""
    from gam_desktop.engine.ask import agent, evidence

    monkeypatch.setattr(agent, "gather", lambda *a, **k: evidence.gather(*a, **k, focus=False))


def test_only_the_named_companys_passages_are_gathered(lookalikes, memory_dir) -> None:
    from gam_desktop.engine.ask.evidence import gather

    question = "How many minutes until escalation at Cobalt Labs?"
    focused = gather(MemoryTools(memory_dir), question)
    assert focused and all("cobalt" in p.memory for p in focused)
    unfocused = gather(MemoryTools(memory_dir), question, focus=False)
    assert any("cobalt" not in p.memory for p in unfocused)  # the look-alikes it leaves out


def test_a_look_alike_citation_is_caught_and_corrected(lookalikes, llm_server, unfocused) -> None:
    llm_server.state.faults.append(Fault("wrong_lookalike", times=10, task="chat"))
    result = lookalikes.request("How many minutes until escalation at Cobalt Labs?", explore=True)
    assert "60 minutes" in result.answer
    assert all("cobalt" in s for s in result.sources), result.sources
    assert "did not mention cobalt" in (result.notes or "")
    sent = json.dumps([r["messages"] for r in llm_server.state.requests if r["task"] == "ground"])
    assert "Cobalt" in sent


def test_a_question_the_best_passages_answer_takes_one_call(
    lookalikes, llm_server, unsettled
) -> None:
    """Evidence first: a grounded answer over the passages, no exploration."""
    before = len(llm_server.state.requests)
    result = lookalikes.request("How long until escalation at Borealis Systems?")
    assert llm_server.state.tasks()[before:] == ["ground"]
    assert "45 minutes" in result.answer
    assert result.sources and all("borealis" in s for s in result.sources)
    assert result.notes == "answered from the best passages" and result.confidence == 0.6


def test_a_first_answer_in_the_unit_asked_is_taken_in_one_call(
    lookalikes, llm_server, unsettled
) -> None:
    before = len(llm_server.state.requests)
    result = lookalikes.request("After how many minutes does Borealis Systems escalate?")
    assert llm_server.state.tasks()[before:] == ["ground"]
    assert "45 minutes" in result.answer


def test_a_grounded_answer_about_a_look_alike_goes_on_to_explore(
    lookalikes, llm_server, unfocused, unsettled
) -> None:
    """The first answer cites a passage that never names Cobalt: the agent explores."""
    llm_server.state.faults.append(Fault("wrong_lookalike", times=1, task="ground"))
    before = len(llm_server.state.requests)
    result = lookalikes.request("How many minutes until escalation at Cobalt Labs?")
    tasks = llm_server.state.tasks()[before:]
    assert tasks[0] == "ground" and "chat" in tasks
    assert "do not mention cobalt, labs: exploring" in result.trajectory
    assert "60 minutes" in result.answer
    cited = [s for s in result.sources if not s.endswith("README.md")]
    assert cited and all("cobalt" in Path(s).name for s in cited), result.sources


def test_a_name_the_memory_never_mentions_is_not_searched_for(lookalikes, llm_server) -> None:
    """ "Lumenvault 5.0" when the memory holds 3.0 to 4.0: the 1.5B model answered with
    4.0's value at confidence 1.0. Nothing to find, so no call is made."""
    before = len(llm_server.state.requests)
    result = lookalikes.request("How long until escalation at Dunmore Shipping?")
    assert llm_server.state.tasks()[before:] == []
    assert result.answer == "The memory does not mention dunmore, shipping."
    assert result.confidence < 0.3 and result.sources == []


def test_a_kind_of_thing_the_memory_never_mentions_is_not_searched_for(
    lookalikes, llm_server
) -> None:
    """ "Which desserts are on the menu at Ferrovia?" of kitchen procedures that name no
    dessert: the 1.5B model explored for two minutes, then called the procedures the
    desserts. A thing no file names cannot be listed: no call. A thing named somewhere is
    searched for as usual."""
    before = len(llm_server.state.requests)
    result = lookalikes.request("Which desserts are on the menu at Acme Corp?")
    assert llm_server.state.tasks()[before:] == []
    assert result.answer == "The memory does not mention desserts."
    assert result.confidence < 0.3 and result.sources == []
    before = len(llm_server.state.requests)
    result = lookalikes.request("Which paging tool does Acme Corp use?")
    assert llm_server.state.tasks()[before:]  # "tool" is in the policies: asked as usual
    assert "does not mention" not in result.answer and result.sources


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("Which desserts are on the menu at Ferrovia Trattoria?", "desserts"),
        ("What paging tool does Quillfern Payments use?", "tool"),
        ("What core temperature must chicken reach at Juniper & Ash?", "temperature"),
        ("Which companies use Threadline for incident chat?", None),  # the named things
        ("What is the maximum size of a single file in Lumenvault 3.0?", None),
        ("Which settings were renamed?", None),  # no subject named: nothing to hold it to
    ],
)
def test_the_kind_of_thing_a_question_asks_for(question: str, thing: str | None) -> None:
    assert asked_thing(question) == thing


def test_an_abstaining_grounded_answer_goes_on_to_explore(lookalikes, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = lookalikes.request("What is the travel budget of Acme Corp?")
    tasks = llm_server.state.tasks()[before:]
    assert tasks[0] == "ground" and "chat" in tasks
    assert "the best passages did not answer it: exploring" in result.trajectory


def test_an_answer_saying_it_cannot_tell_is_not_confident(lookalikes, llm_server) -> None:
    """The 1.5B model, asked about puffins on an island the report counts kittiwakes on:
    "I don't have enough information to determine the number" at confidence 0.3."""
    llm_server.state.faults.append(Fault("unsure", times=10, task="chat"))
    result = lookalikes.request("What is the travel budget of Acme Corp?")
    assert result.answer.startswith("I don't have enough information")
    assert result.confidence < 0.3


@pytest.mark.parametrize(
    "answer",
    [
        "I don't have enough information to determine the number of puffin burrows.",
        "There is not enough information in the passages.",
        "There's no information about desserts.",
        "The revenue cannot be determined from the passages.",
        "The maximum single-file size in Lumenvault 3.0 is not specified in the passage.",
    ],
)
def test_ways_of_saying_the_memory_does_not_tell(answer: str) -> None:
    assert abstains(answer)


@pytest.mark.parametrize(
    "answer",
    [  # the adversarial review's answers that say something
        "Data science staff are not given the pager.",
        "The cause could not be determined yet: the avian influenza results are pending.",
        "Time off is not provided for weekday pages.",
        "Refunds were refused because of insufficient information from the customer.",
        "The exact date is not specified in the release notes, but it shipped in spring 2024.",
    ],
)
def test_answers_that_tell_something_are_not_abstentions(answer: str) -> None:
    assert not abstains(answer)


def test_explore_always_runs_the_tool_loop(lookalikes, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    assert llm_server.state.tasks()[before] == "chat" and "45" in result.answer


def test_unanswerable_questions_abstain(lookalikes) -> None:
    result = lookalikes.request("What is the on-call policy of Dunmore Shipping?")
    assert result.confidence < 0.3


def test_citations_name_the_document_and_span(lookalikes) -> None:
    result = lookalikes.request("How long until escalation at Borealis Systems?")
    assert [c.path for c in result.citations] == result.sources
    citation = next(c for c in result.citations if c.source)
    assert citation.source == "borealis_oncall.md" and citation.span is not None
    assert citation.describe().startswith(f"{citation.path} (borealis_oncall.md, characters ")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many minutes until escalation at Cobalt Labs?", ["cobalt", "labs"]),
        ("What changed in version 4.2 of Zephyr?", ["zephyr", "4.2"]),
        ("Compare CNNs and RNNs", ["cnn", "rnn"]),
        ("What is the escalation time?", []),
    ],
)
def test_question_qualifiers(question: str, expected: list[str]) -> None:
    assert qualifiers(question) == expected


def test_answers_end_cleanly() -> None:
    assert (
        clean_ending("Acme pages in 5 minutes. Borealis pages with") == "Acme pages in 5 minutes."
    )
    assert clean_ending("Escalation after 45 minutes") == "Escalation after 45 minutes"
    assert clean_ending("It is 45 minutes…") == "It is 45 minutes"
    assert is_scaffolding("The top-level folders are: topic/. Try something else, or call answer.")
    assert is_scaffolding("To find the escalation time, I'll follow th")
    assert is_scaffolding("  ") and not is_scaffolding("Escalation happens after 45 minutes.")
    # a template the model did not fill (the 1.5B model asked a revenue the memory lacks)
    assert is_scaffolding("Osprine Robotics' annual revenue last year was $XXXX,000,000.")
    assert is_scaffolding("The fee is [amount] per night.")
    assert not is_scaffolding("The XXL shirts and the Xmas rota are in the kit list.")
    # a tool's reply echoed as the answer (the 1.5B model, after a failed grep)
    assert is_scaffolding(
        "<tool_response>\nerror: 'survey_islands/x_' does not exist\n</tool_response>"
    )


def test_document_context_from_title_or_file_name() -> None:
    titled = load_text("# Borealis Systems On-Call Policy\n\n## Paging\nText.", name="x.md")
    assert document_context(titled).label == "borealis_systems"
    named = load_text("## Section one\nText.\n## Section two\nMore.", name="zephyr_4.2_notes.md")
    assert document_context(named).subject[0] == "zephyr"
    pasted = load_text("# Python notes 1\nA.\n# Rust notes 2\nB.")
    assert document_context(pasted).subject == ()  # sections, not a title: no subject


def test_a_citation_standing_for_a_name_becomes_the_documents_name() -> None:
    """The 1.5B model answered "…purple boards are [1] and [2]."; stripped, that read
    "are and."."""
    passages = [
        Passage(1, "kitchen/saltcellar.md", True, "…", 1.0, "Saltcellar kitchen procedures"),
        Passage(2, "kitchen/ferrovia.md", True, "…", 0.9, "Ferrovia kitchen procedures"),
    ]
    named = name_citations("The restaurants using purple boards are [1] and [2].", passages)
    assert named == (
        "The restaurants using purple boards are Saltcellar kitchen procedures and "
        "Ferrovia kitchen procedures."
    )
    assert name_citations("[2] requires 90 minutes.", passages).startswith("Ferrovia kitchen")
    assert name_citations("Cooling takes 90 minutes [1].", passages) == "Cooling takes 90 minutes."
    assert name_citations("It is 14 days. [1] [2]", passages) == "It is 14 days."


GREYHOLM = "How many puffin burrows did Priya Maalouf count on Greyholm?"


@pytest.mark.parametrize(
    ("answer", "unsupported"),
    [
        ("The annual revenue was $100,000 last year.", ["100000"]),
        ("It counted 1,240 burrows in 2022.", []),  # "1240" and "2022" in the evidence
        ("1. Acme pages within 5 minutes.\n2. Borealis within 15.", []),  # list numbers
        ("Acme 5.0 allows 20 GB.", []),  # 5.0 is the question's, 20 the evidence's
        ("The limit is 200 GB.", ["200"]),
        ("It was released on April 9.", []),  # a single digit tells nothing
    ],
)
def test_figures_an_answer_states_must_be_in_its_evidence(answer: str, unsupported) -> None:
    evidence = "Burrows: 1240 (2022). Acme pages within 5 minutes, Borealis 15. Up to 20 GB."
    assert unsupported_values(answer, evidence, "What about Acme 5.0?") == unsupported


@pytest.mark.parametrize(
    ("answer", "unsupported"),
    [
        # the 1.5B model's research claim, cited from release notes whose 5s are no °C
        ("Lumenvault keeps its fridges coldest at 5 °C.", ["5 °C"]),
        ("Backups are kept for 7 days.", ["7 days"]),
        # given in the evidence in a unit of the kind: as written, converted, in words,
        # or as the first number of a range
        ("Lumenvault allows 5 devices.", []),  # a count: no unit to check
        ("The fridges are held at 3 °C.", []),  # "3°C"
        ("Old versions are kept for 2 weeks.", []),  # "14 days"
        ("Wait five minutes.", []),  # "5 min"
        ("Chill below 1 °C.", []),  # "between 1 and 4 °C"
        ("Climb 4 m up.", []),  # a lone letter apart from its number: metres, maybe
    ],
)
def test_one_digit_measures_must_be_given_in_a_unit_of_their_kind(
    answer: str, unsupported: list[str]
) -> None:
    evidence = (
        "Maximum number of devices per account: **5** (unchanged). Compression: level 5. "
        "Fridges: 3°C. Retention: 14 days. Retry after 5 min. Store between 1 and 4 °C."
    )
    assert unsupported_values(answer, evidence, "What does Lumenvault keep?") == unsupported


@pytest.mark.parametrize(
    ("answer", "evidence"),
    [  # the adversarial review's right answers, given otherwise by their evidence
        ("Backups are kept for 7 days.", "Backups are kept on a seven-day rolling window."),
        ("Shifts last 8 hours.", "Eight-hour shifts."),
        ("Tokens expire after 1 hour.", "Access tokens expire after an hour."),
        ("Refunds take up to 7 days.", "Refunds are processed within 5 to 7 business days."),
        ("Sprints last 2 weeks.", "Sprints are a fortnight long."),
        ("The warranty lasts 1 year.", "The warranty period is 12 months."),
        ("The limit is 1 TB.", "The limit is 1000 GB."),
        ("The discount is 5%.", "Members get a 5 per cent discount."),
        ("Store at 5 °C.", "Store at 5ºC."),
        ("Hold at -5 °C.", "Hold at -5 to -2 °C."),
        ("Wait 3 seconds.", "Wait 3 s."),
        ("Cables up to 5m long.", "Cable runs may be up to 5 metres."),  # minutes or metres?
    ],
)
def test_one_digit_measures_given_otherwise_are_supported(answer: str, evidence: str) -> None:
    assert unsupported_values(answer, evidence, "What is it?") == []


@pytest.mark.parametrize(
    ("answer", "unsupported"),
    [
        # the 1.5B model's research claims about Lumenvault 3.0, which renamed nothing
        ("It renamed the backup interval setting to 'journal scan'.", ["“journal scan”"]),
        ("It was renamed from 'old_name' to 'new_name'.", ["“old_name”", "“new_name”"]),
        # said as the evidence says it, with other quotes, markup or case
        ("It was renamed to `schedule.every`.", []),
        ('It was renamed to "Schedule.Every".', []),
        ("The 'backup interval' setting.", []),  # the question's words
        ("Osprine's and Brindlewave's policies.", []),  # apostrophes open no quote
        ("He wrote 'engineers may swap shifts with a day of notice'.", []),  # a paraphrase
        # the adversarial review's: punctuation closing the quote, typography, spacing
        ('They used the boat "Kestrel Lass," a rigid inflatable.', []),
        ("The engine keeps a ‘journal’ now.", []),
        ("Set `schedule.every = 30`.", []),
        ("It was renamed from \"'old_name'\".", ["“old_name”"]),  # quotes in quotes
    ],
)
def test_short_values_an_answer_quotes_must_be_said_by_its_evidence(
    answer: str, unsupported: list[str]
) -> None:
    evidence = (
        "`backup_interval` is renamed to **`schedule.every`** (`schedule.every=30`). The "
        "engine uses a journal. The boat “Kestrel Lass” took us out."
    )
    question = "Which releases renamed the backup interval setting?"
    assert unsupported_values(answer, evidence, question) == unsupported


@pytest.mark.parametrize(
    ("question", "answer", "unsupported"),
    [
        # the 1.5B model's answer: the report counts puffins on Mote Isle, not on Greyholm
        (GREYHOLM, "Priya Maalouf counted 3 puffin burrows on Greyholm.", ["3"]),
        (GREYHOLM, "She counted 980 occupied burrows.", []),  # near burrows in the evidence
        (GREYHOLM, "She counted 1,240 burrows.", []),  # the thousands separator is no matter
        ("How many people were in the team?", "There were 6 members.", []),  # other words
        ("How many minutes is it?", "It is 3 minutes.", []),  # a unit: the unit check's
        ("How many burrows did 3 teams count?", "3 teams counted 9 burrows.", ["9"]),
        # the adversarial review's right answers, said otherwise than the evidence says them
        ("How many landings were made?", "There were 2 landings.", []),  # "two landings"
        ("How many kittiwakes were sampled?", "12 kittiwakes were sampled.", []),  # "12 of them"
        ("How many seals hauled out?", "58 grey seals.", []),  # "58 animals", same sentence
        ("How many days of fog were there?", "There were 9 days of fog.", []),  # days: a unit
    ],
)
def test_a_count_of_the_things_asked_must_be_given_of_them(
    question: str, answer: str, unsupported: list[str]
) -> None:
    evidence = (
        "Mote Isle, Atlantic puffin: 980 occupied burrows, down from 1,240. Greyholm, "
        "kittiwake: 301 nests. Fog delayed work on 3 days. The calm sea allowed two landings. "
        "We found 27 dead kittiwakes; the veterinarian took samples from 12 of them. The grey "
        "seal haul-out peaked at 58 animals. Fog covered the islands on 9 days."
    )
    assert unsupported_values(answer, evidence, question) == unsupported


def test_a_question_over_several_documents_gets_a_passage_from_each(lookalikes, memory_dir) -> None:
    tools = MemoryTools(memory_dir)
    question = "Which companies hand over rotations on Monday?"
    passages = gather(tools, question)
    assert {p.memory.split("/")[-1].split("_")[0] for p in passages} >= {
        "acme",
        "borealis",
        "cobalt",
    }
    assert {p.document for p in passages} >= {"Acme oncall", "Borealis oncall", "Cobalt oncall"}


def test_the_grounded_prompt_names_documents_not_file_paths(
    lookalikes, llm_server, unsettled
) -> None:
    """A model shown paths answered "The passage from on_call_policy/…/quillfern….md
    states…" instead of naming the company."""
    lookalikes.request("How long until escalation at Borealis Systems?")
    ground = next(r for r in reversed(llm_server.state.requests) if r["task"] == "ground")
    prompt = ground["messages"][-1]["content"]
    assert "[1] From Borealis oncall" in prompt and ".md" not in prompt


@pytest.mark.parametrize(
    ("question", "reply", "why"),
    [
        # a number its passages lack
        (
            "What is the travel budget of Acme Corp?",
            "Acme Corp's travel budget is $100,000 a year.",
            "do not state 100000: exploring",
        ),
        # asked after how many minutes, a figure of the passage that counts something else
        (
            "After how many minutes does Borealis Systems escalate?",
            "Escalation at Borealis Systems starts at SEV2 2.",
            "states no number of minutes: exploring",
        ),
    ],
    ids=["invented", "another-unit"],
)
def test_a_first_answer_with_a_figure_that_does_not_answer_is_not_taken(
    lookalikes, llm_server, monkeypatch, question: str, reply: str, why: str, unsettled
) -> None:
    """The grounded answer's figure does not answer: the agent explores instead."""
    from gam_desktop.engine.ask import agent

    monkeypatch.setattr(
        agent, "grounded_answer", lambda _llm, _q, passages, _c: (reply, [passages[0].memory])
    )
    before = len(llm_server.state.requests)
    result = lookalikes.request(question)
    assert "chat" in llm_server.state.tasks()[before:]
    assert why in result.trajectory


def test_an_explored_answer_with_an_unsupported_figure_is_not_confident(
    lookalikes, monkeypatch
) -> None:
    """Osprine's revenue: the 1.5B model explored, then wrote "$100,000" from nowhere at
    confidence 0.5, citing the policy files it had read."""
    from gam_desktop.engine.ask import agent
    from gam_desktop.engine.llm.tools import ToolCall, ToolReply

    def answering(_llm, messages, *_args, **_kwargs):
        first = messages[1]["content"]
        cited = re.findall(r"^\[\d+\] (\S+)", first, re.MULTILINE)
        text = "Acme Corp's annual revenue was $100,000 last year."
        args = {"text": text, "confidence": 0.9, "sources": cited[:1]}
        return ToolReply([ToolCall("answer", args)])

    monkeypatch.setattr(agent, "chat_with_tools", answering)
    result = lookalikes.request("What was Acme Corp's annual revenue last year?", explore=True)
    assert result.sources and result.confidence <= 0.2
    assert "not in its sources: 100000" in (result.notes or "")


def test_a_readme_or_a_look_alike_cited_beside_the_right_memory_is_dropped(
    lookalikes, monkeypatch
) -> None:
    from gam_desktop.engine.ask import agent
    from gam_desktop.engine.llm.tools import ToolCall, ToolReply

    def answering(_llm, messages, *_args, **_kwargs):
        cited = re.findall(r"^\[\d+\] (\S+)", messages[1]["content"], re.MULTILINE)
        borealis = [c for c in cited if "borealis" in c][:1]
        acme = [p for p in memories(lookalikes.folder.root) if p.startswith("acme")][:1]
        sources = ["README.md", *borealis, *acme]
        args = {"text": "Escalation after 45 minutes.", "confidence": 0.9, "sources": sources}
        return ToolReply([ToolCall("answer", args)])

    monkeypatch.setattr(agent, "chat_with_tools", answering)
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    assert result.sources and all("borealis" in s for s in result.sources), result.sources


def test_a_name_asked_about_guides_the_window_a_documents_own_name_does_not(
    make_workflow, tmp_path: Path
) -> None:
    """ "Which companies use Threadline?": Threadline is what is asked about, not what the
    documents are about, so each passage shows the sentence that names it."""
    files = []
    for company in ("Acme", "Borealis"):
        filler = " ".join(
            f"{company} teams use the shared rota number {i} for every company holiday."
            for i in range(12)
        )
        path = tmp_path / f"{company.lower()}.md"
        path.write_text(
            f"# {company} On-Call Policy\n\n{filler}\n\nIncidents go to Threadline.\n\n{filler}\n"
        )
        files.append(path)
    workflow = make_workflow(min_tokens=300, max_tokens=900)
    workflow.add(files=files)
    passages = gather(MemoryTools(workflow.folder.root), "Which companies use Threadline?")
    assert {p.document for p in passages} == {"Acme", "Borealis"}
    assert all(p.original and "Threadline" in p.text for p in passages), passages


@pytest.mark.parametrize(
    "reply",
    [
        "To determine the escalation time for unacknowledged pages at Tallowmere, let's analyze",
        "Let's look at the passages one by one.",
        "To find the answer, I'll read the policy.",
    ],
)
def test_a_plan_of_how_to_answer_is_not_an_answer(reply: str) -> None:
    """The 1.5B model's grounded reply began with its plan and was cut at 400 tokens."""
    assert is_scaffolding(reply)
    assert not is_scaffolding("Tallowmere escalates an unacknowledged page after 45 minutes.")


def test_an_answer_cites_the_documents_it_names_not_all_it_was_shown(
    lookalikes, monkeypatch
) -> None:
    """The 1.5B model cited all eight passages of a "which" question, or the first one
    while naming another company: the sources are the documents its answer names."""
    from gam_desktop.engine.ask import agent

    def citing_all(_llm, _question, passages, _cancel):
        return "Borealis Systems escalates after 45 minutes.", [p.memory for p in passages]

    monkeypatch.setattr(agent, "grounded_answer", citing_all)
    # (not "… after the longest wait?": the documents' own values answer that, no model)
    result = lookalikes.request("Which company escalates pages to the secondary engineer?")
    assert all("borealis" in s for s in result.sources), result.sources

    def citing_the_first(_llm, _question, passages, _cancel):
        others = [p for p in passages if "cobalt" not in p.memory]
        return "Cobalt Labs escalates after 60 minutes.", [others[0].memory]

    monkeypatch.setattr(agent, "grounded_answer", citing_the_first)
    result = lookalikes.request("Which company escalates pages to the secondary engineer?")
    assert result.sources and all("cobalt" in s for s in result.sources), result.sources


def test_a_documents_own_name_does_not_pick_its_window() -> None:
    """Research showed the 1.5B model the title of the Lumenvault 3.1 notes for "the default
    backup interval of Lumenvault 3.1" (the title says Lumenvault, 3.1 and backup), and the
    700 characters ended before the Defaults: the version and product are which document,
    not where in it the answer is."""
    from gam_desktop.engine.ask.evidence import document_window, window

    highlights = " ".join(
        f"- Highlight {n}: the restore browser got faster again." for n in range(12)
    )
    text = (
        "# Lumenvault 3.1 Release Notes\n\nProduct: Lumenvault desktop backup client 3.1.\n\n"
        f"## Highlights\n\n{highlights}\n\n## Defaults\n\n- Backup interval: every 30 minutes.\n"
    )
    question = "What was the default backup interval of Lumenvault 3.1?"
    assert "30 minutes" not in window(text, question)
    assert "30 minutes" in document_window(text, question, "lumenvault-3.1-release-notes.md")


def test_the_window_prefers_the_kind_of_thing_asked_for() -> None:
    """Research showed the 1.5B model Tallowmere's paging windows, asked which paging tool
    each company uses: "## Paging Windows … incidents page" holds "paging" twice, "## Tools
    Alerts are routed by SignalHarbor" only "tool". Between sentences holding as many of the
    question's words, the one naming the thing asked for (a "tool", what the company uses)
    wins; asked which company has the longest rotation, the company is what is asked for,
    not a word to look for."""
    from gam_desktop.engine.ask.evidence import document_window

    filler = " ".join(f"Note {n}: the handover document lists open incidents." for n in range(8))
    text = (
        "[x-oncall.md — Tallowmere On-Call]\nCompany: Tallowmere Analytics.\n\n"
        "## Paging Windows\n\n- SEV1 incidents page at any time of day or night.\n\n"
        f"## Handover\n\n{filler}\n\n## Review\n\n{filler}\n\n"
        "## Rotation\n\nA rotation lasts 14 days.\n\n"
        "## Tools\n\nAlerts are routed by SignalHarbor, which phones the primary.\n"
    )
    asked = "Which paging tool does each company's on-call policy use? (in x-oncall.md)"
    assert "SignalHarbor" in document_window(text, asked, "x-oncall.md")
    longest = "Which company has the longest rotation? (in x-oncall.md)"
    assert "14 days" in document_window(text, longest, "x-oncall.md")


def test_a_best_sentence_ending_the_text_is_shown_whole() -> None:
    """The window ends at the text's end when its best sentence is last; stepping back to
    the start of a sentence had cut that sentence off ("… are routed b…")."""
    from gam_desktop.engine.ask.evidence import window

    filler = " ".join(f"Note {n}: the handover document lists open incidents." for n in range(16))
    text = f"{filler} Alerts are routed by SignalHarbor, which phones the primary."
    assert "which phones the primary." in window(text, "Where are alerts routed?")


def test_a_figure_of_another_thing_is_explored_past(
    make_workflow, tmp_path, llm_server, unsettled
) -> None:
    """The 1.5B model gave "100 GB" for a file size limit from the sentence about pausing
    uploads: the answer from the best passages is not taken, the agent explores."""
    workflow = built_orbit_notes(make_workflow, tmp_path)
    llm_server.state.faults.append(Fault("other_figure", times=1, task="ground"))
    result = workflow.request("What is the default backup interval of Orbit 3.1?")
    assert "the passages give 50 of another thing: exploring" in result.trajectory
    assert "every 30 minutes" in result.answer and result.answer != "It is 50 GB."


def test_a_count_from_evidence_that_never_names_the_things_must_be_in_it() -> None:
    """The 1.5B model, asked of puffin burrows on an island the report counts kittiwakes
    on, answered "1 puffin burrow" citing the report's weather passage."""
    weather = "The survey ran from 2 to 14 June 2023. The team had 6 members. Fog on 3 days."
    question = "How many occupied puffin burrows did Priya Maalouf count on Greyholm?"
    assert unsupported_values("She counted 1 puffin burrow.", weather, question) == ["1"]
    # said otherwise than the evidence says it, the count stands: "6 members"
    assert unsupported_values("There were 6 people.", weather, "How many people went?") == []


def test_a_thing_the_memory_never_names_is_not_answered_with_confidence(
    lookalikes, monkeypatch
) -> None:
    """The 1.5B model, asked Osprine's annual revenue, answered with its on-call pay at 0.6
    confidence: no file of the memory says "revenue", and the line it gives the figure
    from says nothing of what was asked."""
    from gam_desktop.engine.ask import agent

    def revenue(_llm, _question, passages, _cancel):
        borealis = [p.memory for p in passages if "borealis" in p.memory]
        return "Borealis Systems' annual revenue last year was 45 million.", borealis[:1]

    monkeypatch.setattr(agent, "grounded_answer", revenue)
    result = lookalikes.request("What was Borealis Systems' annual revenue last year?")
    assert result.confidence < 0.3, result
    assert "the memory never mentions annual, revenu" in (result.notes or "")
    # asked what the memory does say, the same figure stands
    monkeypatch.setattr(
        agent,
        "grounded_answer",
        lambda _l, _q, passages, _c: (
            "Borealis Systems escalates after 45 minutes.",
            [p.memory for p in passages if "borealis" in p.memory][:1],
        ),
    )
    result = lookalikes.request("When does Borealis Systems escalate an unacknowledged page?")
    assert result.confidence >= 0.5 and "never mentions" not in (result.notes or ""), result
