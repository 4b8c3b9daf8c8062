"""An add that did not finish (issue 39, item 11): after "Cancel the build and close" the next
start asked to "Resume the interrupted add (0 of 1 documents already summarized)" while
about 20 of its 120 parts were kept. A cancel is the person's own: not asked about at the
next start (adding the same files again resumes it); after a crash the question counts the
parts kept, not the documents."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.resume import PENDING
from gam_desktop.engine.progress import OperationCancelled
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.results import ResultStore
from tests.documents import topic_document
from tests.engine.helpers import wait_for
from tests.engine.test_resume import cancel_at, kept, memorize_calls

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def stepped(prefs):
    """Preferences committing a drop in steps of 10 documents."""
    return dataclasses.replace(prefs, step_documents=10, min_tokens=20, max_tokens=300)


def no_pool_workers() -> bool:
    """Whether the LLM client's worker pools have ended (their threads: gam-llm_<n>)."""
    return not [t for t in threading.enumerate() if t.name.startswith("gam-llm_")]


def cancelled_add(make_workflow, server, files: list[Path], memory: Path) -> int:
    """An add cancelled after 3 memories; the memorize calls it paid for, all kept."""
    server.state.latency_s = 0.2  # calls in flight when the cancel comes
    cancel, progress = cancel_at(3)
    with pytest.raises(OperationCancelled):
        make_workflow(cancel=cancel, progress=progress).add(files=files)
    assert wait_for(no_pool_workers, seconds=60)
    assert kept(memory) == memorize_calls(server)
    server.state.latency_s = 0
    return memorize_calls(server)


def crashed_add(make_workflow, server, files: list[Path], memory: Path) -> int:
    """An add that stopped without a cancel (the app or the computer stopped): its record
    as the run left it, without the mark a cancel adds."""
    paid = cancelled_add(make_workflow, server, files, memory)
    store = ResultStore.of(MemoryFolder(memory))
    record = store.state(PENDING)
    del record["cancelled"]
    store.set_state(PENDING, record)
    store.close()
    return paid


def test_a_cancelled_add_is_not_asked_about_at_the_next_start(
    make_window,
    make_workflow,
    stepped,
    recorder,
    llm_server,
    tmp_path,
    memory_dir,
) -> None:
    document = tmp_path / "handbook.md"
    document.write_text(topic_document({"python": 6, "rust": 6}))
    cancelled_add(make_workflow, llm_server, [document], memory_dir)
    window = make_window(stepped)
    assert window.open_memory(memory_dir)
    assert "An add did not finish" not in [title for title, _text in recorder.asked]
    assert window.workflow.interrupted_add() is not None  # kept: the same file resumes it


def test_after_a_crash_the_question_counts_the_parts_kept(
    make_window,
    make_workflow,
    stepped,
    recorder,
    llm_server,
    tmp_path,
    memory_dir,
) -> None:
    document = tmp_path / "handbook.md"
    document.write_text(topic_document({"python": 6, "rust": 6}))
    crashed_add(make_workflow, llm_server, [document], memory_dir)
    parts = make_workflow().estimate([document]).chunks
    kept = memorize_calls(llm_server)
    assert 0 < kept < parts
    recorder.answer = False
    window = make_window(stepped)
    assert window.open_memory(memory_dir)
    title, text = recorder.asked[-1]
    assert title == "An add did not finish"
    assert f"{kept} of {parts} passages already summarized; continue?" in text  # not "0 of 1"
