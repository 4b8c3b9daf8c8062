"""Versioned memory: one commit per operation, history, rollback, restore, no git, crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gam_desktop.engine.history.gitrepo import APP_AUTHOR
from gam_desktop.engine.history.log import RollbackConflict
from gam_desktop.engine.history.versioned import InterruptedOperationError
from gam_desktop.engine.store.folder import NotAMemoryError
from tests import invariants
from tests.crash import crash_mid_add
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.repos import git, user_repo


@pytest.fixture
def workflow(make_workflow):
    return make_workflow(min_tokens=20, max_tokens=200, threshold=10)


def test_every_operation_is_one_commit_with_trailers(workflow, memory_dir: Path) -> None:
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    workflow.add(text=topic_document({"git": 3}))
    ops = workflow.history.operations()
    assert [op.kind for op in ops] == ["add", "build"]
    assert ops[1].summary == "Built 1 document (6 notes)"
    assert ops[0].summary == "Added 1 document (3 notes)"
    assert ops[0].trailers["Gam-Memories"] == "3" and ops[0].trailers["Gam-Model"] == "scripted"
    assert ops[0].tokens > 0 and ops[0].trailers["Gam-Sources"] == "text"
    assert git(memory_dir, "status", "--porcelain") == ""  # nothing left uncommitted
    author = git(memory_dir, "log", "-1", "--format=%an <%ae>").strip()
    assert author == f"{APP_AUTHOR[0]} <{APP_AUTHOR[1]}>"  # no git identity on this machine


def test_gitignore_and_an_existing_repository_are_respected(make_workflow, memory_dir) -> None:
    user_repo(memory_dir, {".gitignore": "*.bak\n"})
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    with pytest.raises(NotAMemoryError, match=r"holds \.git, \.gitignore"):
        workflow.add(text=topic_document({"python": 2}))  # the user's repository: ask first
    assert git(memory_dir, "rev-list", "--count", "HEAD").strip() == "1"
    workflow.initialize()  # what the app does after the user said yes
    workflow.add(text=topic_document({"python": 2}))
    summaries = [op.summary for op in workflow.history.operations()]
    assert summaries[-1] == "mine" and len(summaries) == 3  # mine, made a memory, the build
    assert (memory_dir / ".gitignore").read_text() == "*.bak\n"  # the user's, untouched
    excluded = (memory_dir / ".git" / "info" / "exclude").read_text().splitlines()
    assert ".gam/cache/" in excluded and ".gam/journal.json" in excluded
    tracked = git(memory_dir, "ls-files").split()
    assert not any(p.startswith(".gam/cache") for p in tracked)
    assert ".gam_meta.json" in tracked and any(p.startswith(".gam/sources/") for p in tracked)


def test_automatic_reorganization_is_its_own_commit(workflow, memory_dir: Path) -> None:
    workflow.add(text=topic_document({"python": 6}))
    report = workflow.add(text=topic_document({"python": 9}))
    assert report.reorganizations
    newest, add = workflow.history.operations(limit=2)
    assert newest.kind == "reorganize" and newest.summary.startswith("Reorganized python/ into")
    assert add.kind == "add"
    changes = workflow.history.changes(newest.sha)
    moves = [c for c in changes if c.status == "moved"]
    assert len(moves) >= 10 and all(c.old_path.startswith("python/") for c in moves)
    patch = workflow.history.diff(newest.sha, moves[0].path)
    assert "rename from" in patch and moves[0].old_path in patch


def test_history_is_paged_newest_first(workflow) -> None:
    for i, topic in enumerate(["python", "rust", "git", "docker", "haskell"]):
        workflow.add(text=topic_document({topic: 1}) + f"\nVariant {i}.")
    assert workflow.history.count() == 5
    first, second = workflow.history.operations(0, 2), workflow.history.operations(2, 2)
    assert [op.kind for op in first] == ["add", "add"] and len(second) == 2
    assert first[0].time >= first[1].time >= second[0].time
    assert {op.sha for op in first}.isdisjoint(op.sha for op in second)


def test_rollback_of_a_reorganization_and_its_undo(workflow, memory_dir: Path) -> None:
    workflow.add(text=topic_document({"python": 6}))
    workflow.options.auto_reorganize = False
    workflow.add(text=topic_document({"python": 9}))
    before = tree(memory_dir)
    operation = workflow.reorganize("python")
    assert operation.moved_files
    reorganized = tree(memory_dir)
    reorg_sha = workflow.history.operations(limit=1)[0].sha
    rollback_sha = workflow.rollback(reorg_sha)
    assert tree(memory_dir) == before  # exactly the previous tree
    assert workflow.history.get(rollback_sha).summary.startswith("Rolled back: Reorganized")
    undo_sha = workflow.rollback(rollback_sha)
    assert tree(memory_dir) == reorganized  # exactly the reorganized tree
    assert workflow.history.get(undo_sha).summary.startswith("Undid rollback: Reorganized")


def test_rollback_of_an_add_before_two_later_adds(workflow, memory_dir: Path) -> None:
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    target = workflow.history.operations(limit=1)[0]
    workflow.add(text=topic_document({"git": 3}))
    workflow.add(text=topic_document({"docker": 3}))
    workflow.rollback(target.sha)
    folders = {p.split("/")[0] for p in tree(memory_dir) if "/" in p and not p.startswith(".")}
    assert "python" in folders and "docker" in folders and not any("rust" in f for f in folders)
    contents = (memory_dir / "README.md").read_text().split("## Contents")[1]
    assert "rust" not in contents.lower() and "docker/" in contents  # regenerated from the tree
    meta = json.loads((memory_dir / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == 9
    assert git(memory_dir, "status", "--porcelain") == ""


def test_conflicting_rollback_names_the_later_operation_then_restore(
    workflow, memory_dir: Path
) -> None:
    workflow.add(text=topic_document({"python": 3}))
    state_before_add = tree(memory_dir)
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    rust_file = next(memory_dir.glob("rust*/*.md"))
    if rust_file.name == "README.md":
        rust_file = next(p for p in memory_dir.glob("rust*/*.md") if p.name != "README.md")
    rust_file.write_text(rust_file.read_text() + "\nMy own note.\n")  # a manual edit
    with pytest.raises(RollbackConflict) as caught:
        workflow.rollback(add.sha)
    assert caught.value.later[0].kind == "manual-edit"  # committed first: nothing was lost
    assert "My own note." in rust_file.read_text()
    workflow.restore_before(add.sha)
    assert tree(memory_dir) == state_before_add
    assert workflow.history.operations(limit=1)[0].kind == "restore"


def test_uncommitted_edits_are_committed_before_a_rollback(workflow, memory_dir: Path) -> None:
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    (memory_dir / "my_notes.md").write_text("# Mine\n\nNot a generated memory.\n")
    workflow.rollback(add.sha)
    kinds = [op.kind for op in workflow.history.operations(limit=3)]
    assert kinds == ["rollback", "manual-edit", "add"]
    assert (memory_dir / "my_notes.md").exists()


def test_without_git_building_and_answering_still_work(
    make_workflow, memory_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    report = workflow.add(text=topic_document({"python": 3}))
    assert len(report.memories) == 3 and not (memory_dir / ".git").exists()
    assert workflow.history is None and "git was not found" in workflow.history_message
    result = workflow.request("What is the Python GIL?")
    assert result.sources  # answering works without history
    with pytest.raises(Exception, match="git was not found"):
        workflow.rollback("HEAD")


@pytest.mark.posix_only(
    "builds its case with symbolic links, which Windows allows only with privileges"
)
def test_a_configured_git_is_used_for_every_call(
    make_workflow, memory_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """A fresh Windows has git only where the app bundles it, not on PATH: every git call
    (not only the first) must run the executable that was chosen."""
    import shutil

    private = tmp_path / "tools" / "git"
    private.parent.mkdir()
    private.symlink_to(shutil.which("git"))
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    workflow = make_workflow(min_tokens=20, max_tokens=200, git_path=str(private))
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    workflow.rollback(add.sha)
    assert [op.kind for op in workflow.history.operations()] == ["rollback", "add", "build"]
    status = [str(private), "-C", str(memory_dir), "status", "--porcelain"]
    assert subprocess.run(status, capture_output=True, text=True, check=True).stdout == ""


@pytest.mark.posix_only(
    "builds its case with symbolic links, which Windows allows only with privileges"
)
def test_git_gone_since_the_memory_opened_fails_clearly_and_loses_nothing(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """The chosen git is uninstalled while the app runs: the next operation says so with
    advice and leaves the memory as it was, instead of an uncaught GitCommandNotFound."""
    import shutil

    from gam_desktop.engine.history.gitrepo import GitMissing

    private = tmp_path / "tools" / "git"
    private.parent.mkdir()
    private.symlink_to(shutil.which("git"))
    workflow = make_workflow(min_tokens=20, max_tokens=200, git_path=str(private))
    workflow.add(text=topic_document({"python": 3}))
    before = {p: p.read_bytes() for p in memory_dir.rglob("*.md")}
    private.unlink()
    with pytest.raises(GitMissing, match=r"git could not be started .*Settings"):
        workflow.add(text=topic_document({"rust": 3}))
    assert {p: p.read_bytes() for p in memory_dir.rglob("*.md")} == before
    assert workflow.interrupted() is None  # nothing half-done for the next start to mend


def test_gam_add_runs_with_no_git_on_path(llm_server, tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    env = {
        **os.environ,
        "PATH": str(empty_bin),
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_MODEL": "scripted",
    }
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "gam_desktop.cli",
            "--gam-dir",
            str(tmp_path / "m"),
            "--text",
            "Git merges histories.",
            "-q",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "m" / ".git").exists()


def test_a_crash_mid_build_is_detected_and_recovered(
    workflow, memory_dir: Path, llm_server
) -> None:
    workflow.add(text=topic_document({"python": 3}))
    committed = tree(memory_dir)
    out = crash_mid_add(
        memory_dir,
        llm_server.base_url,
        topic_document({"rust": 4}),
        3,
        "--min-tokens",
        "20",
        "--max-tokens",
        "200",
    )
    assert out.returncode == 137  # died in the middle of writing
    assert tree(memory_dir) != committed  # half an operation is on disk
    interrupted = workflow.interrupted()
    assert interrupted is not None and interrupted.operation == "add"
    with pytest.raises(InterruptedOperationError, match="interrupted"):
        workflow.add(text=topic_document({"git": 2}))
    assert workflow.recover(restore=True).startswith("restored")
    after = tree(memory_dir)
    assert after == committed  # the last commit, nothing of it lost
    assert workflow.interrupted() is None
    workflow.add(text=topic_document({"git": 2}))  # and work goes on


def test_recover_can_keep_the_files(workflow, memory_dir: Path, llm_server) -> None:
    workflow.add(text=topic_document({"python": 3}))
    before = {k: v for k, v in tree(memory_dir).items() if k.endswith(".md")}
    rust = topic_document({"rust": 3})
    crash_mid_add(memory_dir, llm_server.base_url, rust, 2)  # its source + 1 of 3 memories
    message = workflow.recover(restore=False)
    assert message.startswith("kept the files as they are (3 notes)")
    assert "removed 'text' (1 of 3 notes had been written): add it again" in message
    assert invariants.problems(memory_dir) == []  # READMEs, counts, sources, git: consistent
    kept = {k: v for k, v in tree(memory_dir).items() if k.endswith(".md") and "README" not in k}
    assert kept.items() <= before.items()  # the earlier memories are untouched
    assert workflow.history.operations(limit=1)[0].kind == "recover"
    report = workflow.add(text=rust)  # the dropped document comes back whole, once
    assert len(report.memories) == 3 and invariants.problems(memory_dir) == []
    assert sum("rust" in k for k in tree(memory_dir) if "README" not in k) == 3


def test_keeping_files_that_are_the_last_commit_is_still_in_the_history(
    workflow, memory_dir: Path, llm_server, monkeypatch
) -> None:
    """Whether the recomputed files differ from the last commit used to depend on the
    clock (the meta file's time has whole seconds): within one second, no entry."""
    from datetime import UTC, datetime

    from gam_desktop.engine.store import readmes

    frozen = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    monkeypatch.setattr(readmes, "utc_now", lambda: frozen)
    workflow.add(text=topic_document({"python": 3}))
    last = git(memory_dir, "rev-parse", "HEAD^{tree}")
    crash_mid_add(memory_dir, llm_server.base_url, topic_document({"rust": 3}), 2)
    workflow.recover(restore=False)
    assert git(memory_dir, "rev-parse", "HEAD^{tree}") == last  # the same files...
    assert workflow.history.operations(limit=1)[0].kind == "recover"  # ...and the entry
    assert workflow.interrupted() is None


def test_a_crash_with_the_whole_document_written_keeps_it(
    workflow, memory_dir: Path, llm_server
) -> None:
    workflow.add(text=topic_document({"python": 3}))
    crash_mid_add(memory_dir, llm_server.base_url, topic_document({"rust": 3}), 4)  # + README
    message = workflow.recover(restore=False)
    assert message == (
        "kept the files as they are (6 notes); folder READMEs and counts were recomputed"
    )
    assert invariants.problems(memory_dir) == []
    again = workflow.add(text=topic_document({"rust": 3}))
    assert again.memories == [] and "already in this memory" in again.warnings[0]


@pytest.mark.linux_only("stands shell scripts in for /usr/bin/git and xcode-select")
def test_macos_git_shim_is_not_run_without_developer_tools(tmp_path: Path, monkeypatch) -> None:
    """On macOS /usr/bin/git opens an install dialog when the tools are missing."""
    from gam_desktop.engine.history import gitrepo

    if not Path("/usr/bin/git").is_file():
        pytest.fail("this check needs /usr/bin/git (apt-get install git)")
    monkeypatch.setattr(gitrepo.sys, "platform", "darwin")
    monkeypatch.setenv("PATH", "/usr/bin")
    missing = tmp_path / "xcode-select-missing"
    missing.write_text("#!/bin/sh\nexit 2\n")
    missing.chmod(0o755)
    monkeypatch.setattr(gitrepo, "XCODE_SELECT", str(missing))
    assert gitrepo.find_git() is None  # the tools are missing: no dialog, no git
    present = tmp_path / "xcode-select-present"
    present.write_text("#!/bin/sh\necho /Library/Developer/CommandLineTools\n")
    present.chmod(0o755)
    monkeypatch.setattr(gitrepo, "XCODE_SELECT", str(present))
    assert gitrepo.find_git() == "/usr/bin/git"


@pytest.mark.posix_only(
    "builds its case with symbolic links, which Windows allows only with privileges"
)
def test_a_bundled_git_is_preferred(tmp_path: Path, monkeypatch) -> None:
    from gam_desktop.engine.history import gitrepo

    bundled = tmp_path / "git" / "bin" / "git"
    bundled.parent.mkdir(parents=True)
    bundled.symlink_to(
        Path(subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip())
    )
    monkeypatch.setattr(gitrepo.sys, "_MEIPASS", str(tmp_path), raising=False)
    assert gitrepo.find_git() == str(bundled)
    assert gitrepo.find_git("/nonexistent/git") == str(bundled)  # a bad setting falls through
