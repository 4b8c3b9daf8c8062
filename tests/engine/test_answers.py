"""Answers that survive look-alike documents (issues 10 and 35): originals searchable,
memories that keep their context and facts, and answers, read or explored, that rest on
sentences of the document the question names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.context import NUMBER, number_coverage
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.selfcheck.scripted_llm import Fault

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
        assert front["title"].lower().startswith(company.lower()), front["title"]
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


def test_a_question_is_read_in_one_call_and_answered_from_the_named_document(
    lookalikes, llm_server
) -> None:
    before = len(llm_server.state.requests)
    result = lookalikes.request("How long until escalation at Borealis Systems?")
    assert llm_server.state.tasks()[before:] == ["read"]
    assert "45 minutes" in result.answer and result.confidence >= 0.5
    assert result.sources and all("borealis" in s for s in result.sources)
    assert set(result.sources) <= set(result.files_read)  # cites only what it read


def test_the_reading_prompt_names_documents_not_file_paths(lookalikes, llm_server) -> None:
    """A model shown paths answered "The passage from on_call_policy/…/borealis….md
    states…" instead of naming the company."""
    lookalikes.request("How long until escalation at Borealis Systems?")
    read = next(r for r in reversed(llm_server.state.requests) if r["task"] == "read")
    prompt = read["messages"][-1]["content"]
    assert re.search(r"^\[1\] \(Borealis oncall — ", prompt, re.M) and ".md" not in prompt


def test_unanswerable_questions_abstain(lookalikes) -> None:
    result = lookalikes.request("What is the on-call policy of Dunmore Shipping?")
    assert result.confidence < 0.3 and result.sources == []


def test_citations_name_the_document_and_span(lookalikes) -> None:
    result = lookalikes.request("How long until escalation at Borealis Systems?")
    assert [c.path for c in result.citations] == result.sources
    citation = next(c for c in result.citations if c.source)
    assert citation.source == "borealis_oncall.md" and citation.span is not None
    assert citation.describe().startswith(f"{citation.path} (borealis_oncall.md, characters ")


def test_explore_runs_the_tool_loop_and_its_answer_is_checked(lookalikes, llm_server) -> None:
    before = len(llm_server.state.requests)
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    tasks = llm_server.state.tasks()[before:]
    assert tasks and set(tasks) == {"chat"}, tasks
    assert "45" in result.answer and result.confidence >= 0.5
    assert result.sources and all("borealis" in s for s in result.sources), result.sources
    assert set(result.sources) <= set(result.files_read)
    assert "read README.md" in result.trajectory  # the steps, as a person reads them


def test_the_exploring_prompt_carries_the_best_passages_and_the_readme(
    lookalikes, llm_server
) -> None:
    lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    first = next(r for r in llm_server.state.requests if r["task"] == "chat")
    prompt = first["messages"][-1]["content"]
    assert "Passages found by searching the memory" in prompt and "45 minutes" in prompt
    assert "root README.md (already read for you)" in prompt


def _answering_with(text: str, sources: list[str]):
    """A model that answers at once, citing `sources`."""
    from gam_desktop.engine.llm.tools import ToolCall, ToolReply

    def answering(_llm, _messages, *_args, **_kwargs):
        args = {"text": text, "confidence": 0.9, "sources": sources}
        return ToolReply([ToolCall("answer", args)])

    return answering


def test_an_explored_answer_with_an_unsupported_figure_is_not_given(
    lookalikes, monkeypatch
) -> None:
    """Asked a revenue the memory never states, the 1.5B model wrote "$100,000" from
    nowhere at confidence 0.9: no sentence of what it read says it, so no answer."""
    from gam_desktop.engine.answering import exploring

    monkeypatch.setattr(
        exploring,
        "chat_with_tools",
        _answering_with("Acme Corp's annual revenue was $100,000.", ["README.md"]),
    )
    result = lookalikes.request("What is Acme Corp's annual revenue?", explore=True)
    assert "100,000" not in result.answer and result.confidence < 0.3


def test_a_readme_or_a_look_alike_cited_beside_the_right_memory_is_dropped(
    lookalikes, monkeypatch
) -> None:
    from gam_desktop.engine.answering import exploring

    files = list(memories(lookalikes.folder.root))
    cited = [
        "README.md",
        *[f for f in files if "borealis" in f],
        *[f for f in files if "acme" in f],
    ]
    monkeypatch.setattr(
        exploring,
        "chat_with_tools",
        _answering_with("Escalation after 45 minutes.", cited),
    )
    result = lookalikes.request("How long until escalation at Borealis Systems?", explore=True)
    assert result.sources and all("borealis" in s for s in result.sources), result.sources
    assert "45 minutes" in result.answer


def test_a_question_over_several_documents_gets_a_passage_from_each(lookalikes, memory_dir) -> None:
    from gam_desktop.engine.answering.passages import retrieve

    passages = retrieve(MemoryTools(memory_dir), "Which companies hand over rotations on Monday?")
    assert {p.document for p in passages} >= {"Acme oncall", "Borealis oncall", "Cobalt oncall"}


def test_a_name_asked_about_guides_the_window(make_workflow, tmp_path: Path) -> None:
    """ "Which companies use Sparrowcall?": each passage shows the sentence that names it,
    deep inside documents that say other things first."""
    from gam_desktop.engine.answering.passages import retrieve

    files = []
    for company in ("Acme", "Borealis"):
        filler = " ".join(
            f"{company} teams use the shared rota number {i} for every company holiday."
            for i in range(12)
        )
        path = tmp_path / f"{company.lower()}.md"
        path.write_text(
            f"# {company} On-Call Policy\n\n{filler}\n\nIncidents go to Sparrowcall.\n\n{filler}\n"
        )
        files.append(path)
    workflow = make_workflow(min_tokens=300, max_tokens=900)
    workflow.add(files=files)
    passages = retrieve(MemoryTools(workflow.folder.root), "Which companies use Sparrowcall?")
    documents = [p for p in passages if p.document]  # (a README may fill a place left)
    assert {p.document for p in documents} == {"Acme", "Borealis"}
    assert all("Sparrowcall" in p.text for p in documents), passages
