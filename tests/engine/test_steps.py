"""Progress you can use: a big drop committed in steps, each a normal operation (commit,
History entry, rollback), the memory consistent and askable between them; a cancel keeps
the finished steps, "stop after the current step" finishes it first, and "stop now, undo
this drop" rolls the drop back."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from gam_desktop.engine.progress import CancelToken, OperationCancelled, ProgressEvent
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import MemoryFolder
from tests import invariants
from tests.clirun import cli_command
from tests.documents import document_files
from tests.engine.helpers import wait_for
from tests.engine.test_resume import kept, memorize_calls


def operations(workflow) -> list[str]:
    """The History's summaries, oldest first."""
    return [op.summary for op in reversed(workflow.history.operations(limit=100))]


def test_a_big_drop_is_committed_in_steps_and_answers_questions_between_them(
    make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 60)
    answers: list[tuple[int, str, bool]] = []

    def between_steps(changes: Changes) -> None:
        if changes.kind not in ("build", "add"):
            return
        assert invariants.problems(memory_dir) == []  # consistent after every step
        known = len(MemoryFolder(memory_dir).known_sources())
        if len(answers) == 0:  # a question asked (and its turn saved) after the first step
            turn = make_workflow().chat("What does the Rust borrow checker do?")
            sources = turn.result.sources
            cited = bool(sources) and all((memory_dir / s).is_file() for s in sources)
            answers.append((known, turn.result.answer, cited))

    workflow = make_workflow(on_change=between_steps, threshold=8)
    report = workflow.add(files=files)

    assert report.steps == 3 and len(report.documents) == 60 and not report.remaining
    assert report.summary().startswith("Built 60 documents (60 notes) in 3 steps")
    summaries = operations(workflow)
    steps = [s for s in summaries if s.startswith(("Built", "Added"))]
    assert steps == [
        "Built 25 documents (25 notes)",
        "Added 25 documents (25 notes)",
        "Added 10 documents (10 notes)",
    ]
    assert any(s.startswith("Reorganized") for s in summaries)  # folders grown past 8
    (known, answer, cited) = answers[0]
    assert known == 25 and "borrow checker" in answer.lower() and cited
    chat = next(i for i, s in enumerate(summaries) if s.startswith("Chat: "))
    assert summaries.index(steps[0]) < chat < summaries.index(steps[1])
    assert invariants.problems(memory_dir) == []
    assert make_workflow().interrupted_add() is None


def cancel_in_step(number: int, cancel: CancelToken, how) -> object:
    """A progress callback that calls `how(cancel)` once step `number` has made 2 memories."""

    def progress(event: ProgressEvent) -> None:
        step = event.message.startswith(f"Step {number} of")
        if event.stage == "memorize" and event.done == 2 and step:
            how(cancel)

    return progress


def test_a_cancel_keeps_the_finished_steps(
    make_workflow, llm_server, tmp_path: Path, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 60)
    cancel = CancelToken()
    workflow = make_workflow(
        cancel=cancel, progress=cancel_in_step(2, cancel, lambda c: c.cancel())
    )
    with pytest.raises(OperationCancelled):
        workflow.add(files=files)
    assert workflow.last_add is not None and len(workflow.last_add.documents) == 25
    assert len(MemoryFolder(memory_dir).known_sources()) == 25
    assert operations(workflow)[0] == "Built 25 documents (25 notes)"
    assert invariants.problems(memory_dir) == []
    assert wait_for(lambda: kept(memory_dir) == memorize_calls(llm_server) - 25)
    pending = make_workflow().interrupted_add()
    assert pending is not None and pending.total == 60
    assert pending.summarized == 25 + kept(memory_dir)
    # The same drop again: the rest is added, no memory made twice.
    report = make_workflow().add(files=files)
    assert len(report.documents) == 35 and report.steps == 2
    assert memorize_calls(llm_server) == 60
    assert len(MemoryFolder(memory_dir).known_sources()) == 60
    assert invariants.problems(memory_dir) == []


def test_stop_after_the_current_step(make_workflow, tmp_path: Path, memory_dir: Path) -> None:
    files = document_files(tmp_path / "docs", 60)
    cancel = CancelToken()
    workflow = make_workflow(
        cancel=cancel, progress=cancel_in_step(1, cancel, lambda c: c.stop_after_step())
    )
    report = workflow.add(files=files)
    assert len(report.documents) == 25 and len(report.remaining) == 35 and report.steps == 1
    assert report.summary().startswith("Built 25 of 60 documents (25 notes); stopped")
    assert len(MemoryFolder(memory_dir).known_sources()) == 25
    assert invariants.problems(memory_dir) == []


@pytest.mark.parametrize("first", [True, False], ids=["first build", "into a memory"])
def test_stop_now_undo_this_drop(
    first: bool, make_workflow, tmp_path: Path, memory_dir: Path
) -> None:
    if not first:
        make_workflow().add(files=document_files(tmp_path / "earlier", 2, first=200))
    before = MemoryFolder(memory_dir).known_sources()
    files = document_files(tmp_path / "docs", 60)
    cancel = CancelToken()
    workflow = make_workflow(
        cancel=cancel, progress=cancel_in_step(2, cancel, lambda c: c.cancel(undo=True))
    )
    with pytest.raises(OperationCancelled):
        workflow.add(files=files)
    assert MemoryFolder(memory_dir).known_sources() == before
    rolled_back = [s for s in operations(workflow) if s.startswith("Rolled back: ")]
    step = "Built" if first else "Added"  # the first step, undone last
    assert rolled_back[-1] == f"Rolled back: {step} 25 documents (25 notes)"
    if first:
        assert not MemoryFolder(memory_dir).is_memory()  # as before the drop: no memory
    else:
        assert invariants.problems(memory_dir) == []
    assert workflow.last_add is not None and not workflow.last_add.documents
    assert make_workflow().interrupted_add() is None  # undone: nothing to resume


def test_gam_add_interrupted_after_a_step_says_what_it_kept(
    tmp_path: Path, llm_server, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 6)
    # Two memories answered (the first step's two documents); the third is held at the server
    # until the add has said it was cancelled, so no machine is too fast for the Ctrl+C.
    llm_server.state.hold_after = {"memorize": 2}
    args = ["--gam-dir", str(memory_dir), "--files", *map(str, files), "--step-documents", "2"]
    env = {
        **os.environ,
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_MODEL": "scripted",
        "PYTHONFAULTHANDLER": "1",  # a SIGABRT prints where every thread of it stood
    }
    # Ctrl+C as a terminal delivers it, even where this test runs as a background job
    # (whose children start with SIGINT ignored, and Python then leaves it so).
    command = cli_command("add_main", *args, "-q")
    command[2] = (
        f"import signal; signal.signal(signal.SIGINT, signal.default_int_handler); {command[2]}"
    )
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        # The third memory is asked for once the first step (two documents) is committed.
        assert wait_for(lambda: memorize_calls(llm_server) >= 3, seconds=60)
        process.send_signal(signal.SIGINT)  # Ctrl+C
        if not wait_for(lambda: bool(said), seconds=90):  # not a word: say where it hangs
            process.send_signal(signal.SIGABRT)
    finally:
        llm_server.state.released.set()  # the held calls end; the process can exit
    process.wait(timeout=60)
    reader.join(timeout=30)
    err = "".join(said)
    assert process.returncode == 130, err
    assert "gam-add: cancelled; 2 documents were added in finished steps and kept" in err
    assert len(MemoryFolder(memory_dir).known_sources()) == 2
    assert invariants.problems(memory_dir) == []


def test_a_step_that_reorganizes_recomputes_nothing_from_every_memory(
    make_workflow, tmp_path: Path, monkeypatch
) -> None:
    """Only memories someone else added or deleted while an operation ran make it recompute
    the READMEs and counts from every memory's front matter (derived.regenerate). The
    documents' text its own first change set wrote under .gam/sources was taken for such
    memories: every step that then reorganized read every memory of the memory again."""
    from gam_desktop.engine.history import versioned

    original, recomputed = versioned.regenerate, []

    def regenerate(folder, paths):
        recomputed.append(paths)
        return original(folder, paths)

    monkeypatch.setattr(versioned, "regenerate", regenerate)
    report = make_workflow(threshold=8).add(files=document_files(tmp_path / "docs", 60))
    assert report.reorganizations and recomputed == []
