"""The crash matrix: a process killed at each stage of each writing operation, then
recovered both ways; every cell must end in a consistent memory (tests/invariants.py)
where work goes on, and "restore" must give back exactly the last saved state.

Kills are real: `kill -9` while the LLM calls are in flight, and os._exit(137) at the
fault points of engine/store/faults.py (after a file write, between `git add` and the
commit, inside a rollback's revert, inside a restore), hooked by tests/fault_runner.py.

A kill while the chunks are memorized leaves nothing to recover: an add makes its memories
before it takes the folder (engine/drop.py), so the folder is as it was, and what was paid
for is kept for the next run (tests/engine/test_resume.py). Killed while it plans or places
(inside the operation), it is an interrupted operation like the others.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests import invariants
from tests.clirun import cli_command
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.fault_runner import dying_at
from tests.repos import git

CHUNKS = ["--min-tokens", "20", "--max-tokens", "200"]
REORGANIZE = (
    "import sys; from gam_desktop.engine.workflow import Workflow; "
    "Workflow(gam_dir=sys.argv[1]).reorganize('python')"
)


def run_until_killed(cmd: list[str], base_url: str, fault: str | None, server) -> None:
    """Run `cmd`; with a fault point it dies there; with "llm:<task>" it is killed (-9) once
    the LLM has been asked for that task (a plan, a placement); with None once it has been
    asked two things (memorizing)."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "scripted"}
    if fault and not fault.startswith("llm:"):
        command = dying_at(fault, cmd)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 137, done.stderr  # it died at the point, not before
        return
    task = fault.removeprefix("llm:") if fault else None
    asked = len(server.state.requests)

    def reached() -> bool:
        seen = server.state.tasks()[asked:]
        return task in seen if task else len(seen) >= 2

    process = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not reached() and process.poll() is None:
        assert time.monotonic() < deadline, "the LLM was never called"
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


def base_memory(memory: Path, settings) -> None:
    """python/ with 12 memories (so it can be reorganized), two operations to undo."""
    from gam_desktop.engine.ingest.builder import BuildOptions
    from gam_desktop.engine.models import ChunkConfig

    options = BuildOptions(ChunkConfig(min_tokens=20, max_tokens=200), reorganize_threshold=100)
    workflow = Workflow(gam_dir=memory, settings=settings, options=options)
    workflow.add(text=topic_document({"python": 6}))
    workflow.add(text=topic_document({"python": 6, "git": 1}, repeats=4))


def last_operation(memory: Path) -> str:
    return git(memory, "rev-parse", "HEAD").strip()


# stage -> (the command that gets interrupted, its fault point; None: kill -9 mid-LLM)
CELLS = {
    "first build, planning": ("first", "llm:organize"),
    "first build, writing": ("first", "write:2"),
    "add, placing": ("add", "llm:place"),
    "add, writing": ("add", "write:3"),
    "add, between git add and commit": ("add", "staged:1"),
    "reorganize, moving": ("reorganize", "write:2"),
    "rollback": ("rollback", "reverted:1"),
    "restore": ("restore", "restored:1"),
    "chat turn, writing": ("chat", "write:1"),
    "learning facts, writing": ("chat", "write:2"),
    "learning facts, between git add and commit": ("chat", "staged:2"),
}


@pytest.fixture
def slow_server():
    with RunningServer(latency_ms=150) as server:  # LLM calls in flight long enough to kill
        yield server


@pytest.mark.parametrize("kind", ["first", "add"])
def test_killed_while_memorizing(kind: str, tmp_path: Path, settings, slow_server) -> None:
    """Nothing was written, so there is nothing to recover, and work goes on."""
    memory = tmp_path / "memory"
    if kind == "first":
        memory.mkdir()
    else:
        base_memory(memory, settings)
    saved = tree(memory)
    text = topic_document({"rust": 4})
    cmd = cli_command("add_main", "--gam-dir", str(memory), "--text", text, "-q", *CHUNKS)
    run_until_killed(cmd, slow_server.base_url, None, slow_server)
    workflow = Workflow(gam_dir=memory, settings=settings)
    assert workflow.interrupted() is None
    assert tree(memory) == saved
    assert workflow.add(text=topic_document({"haskell": 2})).memories
    assert invariants.problems(memory) == []


@pytest.mark.parametrize("mode", ["restore", "keep"])
@pytest.mark.parametrize("cell", list(CELLS))
def test_crash_and_recover(cell: str, mode: str, tmp_path: Path, settings, slow_server) -> None:
    kind, fault = CELLS[cell]
    memory = tmp_path / "memory"
    killed = fault is None or fault.startswith("llm:")
    base_url = slow_server.base_url if killed else settings.base_url
    if kind == "first":
        memory.mkdir()
    else:
        base_memory(memory, settings)
    saved = tree(memory)
    cmd = {
        "first": cli_command(
            "add_main",
            "--gam-dir",
            str(memory),
            "--text",
            topic_document({"rust": 4}),
            "-q",
            *CHUNKS,
        ),
        "add": cli_command(
            "add_main",
            "--gam-dir",
            str(memory),
            "--text",
            topic_document({"docker": 4}),
            "-q",
            *CHUNKS,
        ),
        "reorganize": [sys.executable, "-c", REORGANIZE, str(memory)],
        "rollback": cli_command("rollback_main", "--gam-dir", str(memory), "HEAD~1"),
        "chat": cli_command(
            "request_main",
            "--gam-dir",
            str(memory),
            "--query",
            "I live in Porto. What is python?",
            "--conversation",
            "new",
            "-q",
        ),
        "restore": cli_command(
            "rollback_main", "--gam-dir", str(memory), "HEAD", "--restore-before"
        ),
    }[kind]
    run_until_killed(cmd, base_url, fault, slow_server)

    workflow = Workflow(gam_dir=memory, settings=settings)
    interrupted = workflow.interrupted()
    assert interrupted is not None, "the interruption went unnoticed"
    with pytest.raises(Exception, match="interrupted"):  # no writing until recovered
        workflow.add(text=topic_document({"haskell": 2}))
    message = workflow.recover(restore=mode == "restore")
    assert workflow.interrupted() is None

    if mode == "restore":
        assert message.startswith("restored")
        if cell.startswith("learning"):  # the turn was saved (its own commit), then it died
            saved |= {p: t for p, t in tree(memory).items() if p.startswith("conversations/")}
            assert git(memory, "log", "-1", "--format=%s").startswith("Chat: ")
        assert tree(memory) == saved  # exactly the last saved state
    if kind != "first" or mode == "keep":
        assert invariants.problems(memory) == [], message
    # And work goes on: the next operation succeeds and leaves a consistent memory.
    report = workflow.add(text=topic_document({"haskell": 2}))
    assert report.memories
    assert invariants.problems(memory) == []


@pytest.mark.parametrize("mode", ["restore", "keep"])
def test_an_edit_pending_when_the_operation_died_stays_the_persons(
    mode: str, tmp_path: Path, settings, slow_server
) -> None:
    """An operation commits the edits pending before it only when it writes; killed before
    that, they are still the person's: kept by both recoveries, and committed apart from
    the kept files (undoing those does not undo them)."""
    memory = tmp_path / "memory"
    base_memory(memory, settings)
    note = next(p for p in sorted((memory / "python").glob("*.md")) if p.name != "README.md")
    edited = note.read_text() + "\nMy own line.\n"
    note.write_text(edited)
    before = note.stat().st_mtime - 60
    os.utime(note, (before, before))
    text = topic_document({"docker": 4})
    cmd = cli_command("add_main", "--gam-dir", str(memory), "--text", text, "-q", *CHUNKS)
    run_until_killed(cmd, slow_server.base_url, "llm:place", slow_server)
    workflow = Workflow(gam_dir=memory, settings=settings)
    assert workflow.interrupted() is not None
    workflow.recover(restore=mode == "restore")
    assert note.read_text() == edited
    rel = note.relative_to(memory).as_posix()
    (manual,) = [op for op in workflow.history.operations(limit=3) if op.kind == "manual-edit"]
    assert [c.path for c in workflow.history.changes(manual.sha)] == [rel]
    assert invariants.problems(memory) == []


def test_kept_files_of_an_add_killed_between_staging_and_commit_are_not_the_persons(
    tmp_path: Path, settings
) -> None:
    """What the dead add staged is its own: the person's edit (saved before recovery) is
    committed apart, and the add's files are the kept files' commit, not "Manual edits"
    (undoing that edit undid the whole add)."""
    memory = tmp_path / "memory"
    base_memory(memory, settings)
    text = topic_document({"docker": 4})
    cmd = cli_command("add_main", "--gam-dir", str(memory), "--text", text, "-q", *CHUNKS)
    run_until_killed(cmd, settings.base_url, "staged:1", None)
    note = next(p for p in sorted((memory / "python").glob("*.md")) if p.name != "README.md")
    note.write_text(note.read_text() + "\nMy own line.\n")
    workflow = Workflow(gam_dir=memory, settings=settings)
    workflow.recover(restore=False)
    newest = workflow.history.operations(limit=3)
    kinds = [op.kind for op in newest[:2]]
    assert kinds == ["recover", "manual-edit"], kinds
    manual = [c.path for c in workflow.history.changes(newest[1].sha)]
    assert manual == [note.relative_to(memory).as_posix()]
    kept = [c.path for c in workflow.history.changes(newest[0].sha)]
    assert any(p.startswith("docker") for p in kept), kept
    assert invariants.problems(memory) == []
