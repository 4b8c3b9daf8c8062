"""Summarizing again the memories written without the LLM (issue 36): an add whose memorize
calls kept failing wrote fallbacks (`fallback: true`) and succeeded; `Workflow.summarize_again`
gives them real summaries from their originals, in their place, one commit, and leaves a
memory whose call fails again as it was. A cancel writes nothing and pays for nothing twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.builder import BuildOptions
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.progress import CancelToken, OperationCancelled, ProgressEvent
from gam_desktop.engine.store.derived import regenerate
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory, parse_readme
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import Fault
from tests import invariants
from tests.documents import topic_document
from tests.engine.helpers import tree, wait_for
from tests.engine.test_resume import no_llm_workers
from tests.repos import git

pytestmark = pytest.mark.timeout(120)
OPTIONS = BuildOptions(chunk=ChunkConfig(min_tokens=20, max_tokens=200))


def fallback_memory(memory: Path, settings, llm_server) -> dict[str, str]:
    """A memory of four notes all written without the LLM (every memorize call failed); its
    files by path."""
    failing = Fault("500", times=10_000, task="memorize")
    llm_server.state.faults.append(failing)
    workflow = Workflow(gam_dir=memory, settings=settings, options=OPTIONS)
    report = workflow.add(text=topic_document({"python": 2, "rust": 2}))
    assert report.fallbacks == 4
    failing.times = 0  # the server works again
    return notes(memory)


def notes(memory: Path) -> dict[str, str]:
    folder = MemoryFolder(memory)
    return {
        f"{node.child_path(name)}": (memory / node.child_path(name)).read_text()
        for node in folder.load_view().walk()
        for name in node.files
    }


def commit(memory: Path, message: str) -> None:
    """A person's own commit of what they edited."""
    git(memory, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qam", message)


def front(text: str) -> dict:
    return parse_memory(text).front


def commits(memory: Path) -> list[str]:
    return git(memory, "log", "--format=%s").splitlines()


def one_at_a_time(settings):
    """Settings making one call at a time: the faults fall on one note's every attempt."""
    return settings.model_copy(update={"workers": 1})


def test_fallbacks_are_summarized_again_in_their_place_and_a_failure_again_loses_nothing(
    settings, llm_server, memory_dir: Path
) -> None:
    fallback_memory(memory_dir, settings, llm_server)
    # The scripted model's tldr is the passage's first sentence, as the fallback's: one
    # fallback says something else, listed so in its folder's README, to see the README follow
    *_, last = notes(memory_dir)
    said_first = "tldr: Written without the LLM.\n"
    file = memory_dir / last
    file.write_text(re.sub(r"tldr: .*\n", said_first, file.read_text(), count=1))
    regenerate(MemoryFolder(memory_dir), [str(Path(last).parent / "README.md")])
    commit(memory_dir, "A fallback of its own")
    before, history = notes(memory_dir), commits(memory_dir)
    # The first note's every attempt fails again (max_retries 3: four attempts), the others not
    llm_server.state.faults.append(Fault("500", times=settings.max_retries + 1, task="memorize"))
    workflow = Workflow(gam_dir=memory_dir, settings=one_at_a_time(settings), options=OPTIONS)
    heard, events = [], []
    workflow.on_change, workflow.progress = heard.append, events.append
    assert sorted(workflow.fallback_memories()) == sorted(before)

    changes = workflow.summarize_again()

    after = notes(memory_dir)
    assert set(after) == set(before)  # every note in its place: none moved, added or removed
    summarized = [p for p in before if after[p] != before[p]]
    (left,) = [p for p in before if after[p] == before[p]]  # byte for byte as it was
    assert len(summarized) == 3 and front(after[left])["fallback"] is True
    for path in summarized:
        old, new = front(before[path]), front(after[path])
        assert (
            "fallback" not in new
            and parse_memory(after[path]).body != parse_memory(before[path]).body
        )
        kept = ("index", "source", "source_hash", "span", "tokens", "hash", "created")
        assert {k: new[k] for k in kept} == {k: old[k] for k in kept}
    assert commits(memory_dir) == ["Summarized again: 3 notes", *history]  # one commit
    assert changes.kind == "summarize" and heard == [changes]
    assert set(summarized) <= changes.modified and not (changes.added | changes.removed)
    assert changes.moved == frozenset()
    assert last in summarized and front(after[last])["tldr"] != "Written without the LLM."
    readme = parse_readme((memory_dir / last).parent.joinpath("README.md").read_text())
    listed = " ".join(readme.entries)
    assert front(after[last])["tldr"] in listed and "without the LLM" not in listed
    assert workflow.fallback_memories() == [left]
    assert invariants.problems(memory_dir) == []
    assert events[-1].fraction == 1.0
    assert any(e.message == "Summarizing again: 3 of 4 notes" for e in events)

    again = workflow.summarize_again()  # the server works now: the last one too
    assert commits(memory_dir)[0] == "Summarized again: 1 note"
    assert again.modified >= {left} and workflow.fallback_memories() == []
    nothing = workflow.summarize_again()
    assert nothing.empty and commits(memory_dir)[0] == "Summarized again: 1 note"
    assert invariants.problems(memory_dir) == []


def test_a_cancel_midway_writes_nothing_and_the_next_run_pays_nothing_twice(
    settings, llm_server, memory_dir: Path
) -> None:
    before = fallback_memory(memory_dir, settings, llm_server)
    saved, history = tree(memory_dir), commits(memory_dir)
    asked = llm_server.state.tasks().count("memorize")
    cancel = CancelToken()

    def progress(event: ProgressEvent) -> None:
        if event.stage == "memorize" and event.done == 2:
            cancel.cancel()

    workflow = Workflow(
        gam_dir=memory_dir,
        settings=one_at_a_time(settings),
        options=OPTIONS,
        progress=progress,
        cancel=cancel,
    )
    with pytest.raises(OperationCancelled):
        workflow.summarize_again()
    assert wait_for(no_llm_workers, seconds=60)
    assert tree(memory_dir) == saved and commits(memory_dir) == history  # nothing written
    fresh = Workflow(gam_dir=memory_dir, settings=settings, options=OPTIONS)
    assert sorted(fresh.fallback_memories()) == sorted(before)
    paid = llm_server.state.tasks().count("memorize") - asked
    assert 2 <= paid < 4

    changes = fresh.summarize_again()
    assert commits(memory_dir)[0] == "Summarized again: 4 notes" and not changes.empty
    assert llm_server.state.tasks().count("memorize") - asked == 4  # each note once, in all
    assert invariants.problems(memory_dir) == []


def test_a_note_edited_meanwhile_or_without_its_original_is_left_as_it_is(
    settings, llm_server, memory_dir: Path
) -> None:
    before = fallback_memory(memory_dir, settings, llm_server)
    first, second, *rest = sorted(before)
    broken = before[second].replace("source_hash: ", "source_hash: 0", 1)  # no such original
    (memory_dir / second).write_text(broken)
    commit(memory_dir, "A person's edit")
    workflow = Workflow(gam_dir=memory_dir, settings=settings, options=OPTIONS)
    edited = before[first].replace("\n\n", "\n\nMy own words.\n\n", 1)

    def edit(event: ProgressEvent) -> None:  # while the LLM works, before the write
        if event.stage == "memorize" and event.done == 1:
            (memory_dir / first).write_text(edited)

    workflow.progress = edit
    workflow.summarize_again()
    after = notes(memory_dir)
    assert after[first] == edited and after[second] == broken  # theirs, untouched
    assert all("fallback" not in front(after[p]) for p in rest)
    assert commits(memory_dir)[0] == f"Summarized again: {len(rest)} notes"
    assert sorted(workflow.fallback_memories()) == [first, second]
