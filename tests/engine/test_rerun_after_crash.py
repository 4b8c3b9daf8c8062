"""`gam-add` run again after a crash, as the README says to (issue 36, section 2, finding 2).

A `gam-add` killed (os._exit(137), as kill -9) while it writes its change set or between
`git add` and the commit left its documents' source texts on disk, uncommitted. Run again,
the add judged them "already in this memory; skipped" before it read the crash's journal,
and said "Added 0 documents" with exit 0: a person could delete the originals believing
them stored. Now an add refuses while an operation awaits recovery (exit 1, how to recover,
never "Added 0"), only committed documents count as held, and once recovered the same
command adds every document. Kills are real: tests/fault_runner.py's fault points.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.history.versioned import InterruptedOperationError
from gam_desktop.engine.ingest.builder import BuildOptions
from gam_desktop.engine.ingest.documents import load_file
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.workflow import Workflow
from tests import invariants
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.repos import git

pytestmark = pytest.mark.timeout(600)

TOPICS = ("python", "rust", "docker", "git")
CHUNKS = ["--min-tokens", "20", "--max-tokens", "200", "-q"]
# "Committing": killed between `git add` and the commit, everything written; "writing":
# killed after the fifth file of the change set (the source texts come first: all four
# are written, and the memories of none or some).
FAULTS = {"committing": "staged:1", "writing": "write:5"}


def documents(where: Path) -> list[Path]:
    where.mkdir()
    files = []
    for topic in TOPICS:
        path = where / f"{topic}.md"
        path.write_text(topic_document({topic: 2}))
        files.append(path)
    return files


def committed_sources(memory: Path) -> set[str]:
    """The documents whose source text the memory's last commit holds."""
    listed = git(memory, "ls-tree", "-r", "--name-only", "HEAD", "--", ".gam/sources")
    return {Path(line).stem for line in listed.splitlines() if line.endswith(".txt")}


def add(memory: Path, files: list[Path], base_url: str, **kwargs) -> subprocess.CompletedProcess:
    args = ["--gam-dir", str(memory), "--files", *map(str, files), *CHUNKS]
    return run_cli(args, base_url, **kwargs)


def recover(memory: Path, base_url: str, mode: str) -> subprocess.CompletedProcess:
    args = ["--gam-dir", str(memory), "recover", f"--{mode}"]
    return run_cli(args, base_url, entry="history_main")


def crashed_add(kind: str, fault: str, tmp_path: Path, settings) -> tuple[Path, list[Path]]:
    """A memory (empty for a first build, else with one document) and the four documents
    whose `gam-add` died at `fault`."""
    memory = tmp_path / "memory"
    if kind == "later add":
        options = BuildOptions(ChunkConfig(min_tokens=20, max_tokens=200))
        Workflow(gam_dir=memory, settings=settings, options=options).add(
            text=topic_document({"haskell": 3})
        )
    files = documents(tmp_path / "docs")
    died = add(memory, files, settings.base_url, exit_at=FAULTS[fault])
    assert died.returncode == 137, died.stderr  # it died at the point, not before
    return memory, files


@pytest.mark.parametrize(
    ("kind", "fault", "mode"),
    [
        ("first build", "committing", "restore"),
        ("first build", "writing", "keep"),
        ("later add", "committing", "keep"),
        ("later add", "writing", "restore"),
        ("later add", "writing", "keep"),
    ],
)
def test_the_same_add_again_refuses_then_adds_everything_once_recovered(
    kind: str, fault: str, mode: str, tmp_path: Path, settings
) -> None:
    memory, files = crashed_add(kind, fault, tmp_path, settings)
    hashes = {load_file(f).content_hash for f in files}
    saved = tree(memory)

    again = add(memory, files, settings.base_url)
    assert again.returncode == 1, again.stdout
    assert "was interrupted; recover first: gam-history" in again.stderr
    assert "run the same gam-add again" in again.stderr
    assert "already in this memory" not in again.stderr
    assert again.stdout == ""  # no "Added 0 documents", no "Built 0 documents"
    assert tree(memory) == saved  # the refusal changed nothing

    recovered = recover(memory, settings.base_url, mode)
    assert recovered.returncode == 0, recovered.stderr
    done = add(memory, files, settings.base_url)
    assert done.returncode == 0, done.stderr
    assert hashes <= committed_sources(memory)  # every document is in the memory's history
    assert invariants.problems(memory) == []
    if done.stdout.startswith("Nothing added"):  # --keep had kept all four whole
        assert mode == "keep" and "all 4 documents are already in this memory" in done.stdout
    else:
        assert done.stdout.startswith(("Built", "Added")) and "Added 0" not in done.stdout

    third = add(memory, files, settings.base_url)  # now they are held: said so, not "Added 0"
    assert third.returncode == 0, third.stderr
    assert third.stdout.startswith("Nothing added: all 4 documents are already in this memory")
    assert third.stderr.count("already in this memory; skipped") == 4


@pytest.mark.parametrize("kind", ["first build", "later add"])
def test_the_engine_refuses_before_judging_duplicates(kind: str, tmp_path: Path, settings) -> None:
    """The window's path (Workflow.add) refuses the same way, and its estimate does not call
    the crashed add's uncommitted documents "already in this memory"."""
    memory, files = crashed_add(kind, "committing", tmp_path, settings)
    workflow = Workflow(gam_dir=memory, settings=settings)
    assert workflow.estimate(files).skipped == []  # not held: never committed
    saved = tree(memory)
    with pytest.raises(InterruptedOperationError, match="add was interrupted"):
        workflow.add(files=files)
    assert tree(memory) == saved
    assert workflow.last_add is None  # nothing was added, nothing claimed


def test_a_source_text_left_uncommitted_is_not_held(tmp_path: Path, settings) -> None:
    """Only committed content counts: a source text on disk that no commit holds (its
    operation's journal gone, a copy left by hand) does not make a document "already in
    this memory"; the add adds it."""
    memory, files = crashed_add("later add", "committing", tmp_path, settings)
    sources = memory / ".gam" / "sources"
    texts = {p.name: p.read_bytes() for p in sources.glob("*.txt")}
    workflow = Workflow(gam_dir=memory, settings=settings)
    workflow.recover(restore=True)  # the add's files are gone, and its journal...
    for name, text in texts.items():  # ...but its source texts are back on disk
        (sources / name).write_bytes(text)
    hashes = {load_file(f).content_hash for f in files}
    assert hashes <= {Path(name).stem for name in texts}
    assert not hashes & committed_sources(memory) and workflow.interrupted() is None
    report = workflow.add(files=files)
    assert len(report.documents) == 4 and not [w for w in report.warnings if "already" in w]
    assert hashes <= committed_sources(memory)
