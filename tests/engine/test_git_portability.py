"""Git as Windows and macOS machines configure it (issue 17): the memory's history must not
depend on the user's global git settings nor on who the file system says owns the folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from gam_desktop.engine.history.gitrepo import MemoryRepo
from tests.documents import topic_document
from tests.repos import git


@pytest.fixture
def global_config(tmp_path: Path, monkeypatch) -> Path:
    config = tmp_path / "global.gitconfig"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return config


def test_a_global_autocrlf_does_not_rewrite_restored_files(
    make_workflow, memory_dir: Path, global_config: Path
) -> None:
    """Windows' git defaults to core.autocrlf=true: a rollback would write every restored
    file with CRLF, unlike the app's own LF files."""
    global_config.write_text("[core]\n\tautocrlf = true\n")
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    workflow.rollback(workflow.history.operations()[0].sha)
    restored = [p for p in memory_dir.rglob("*.md") if ".git" not in p.parts]
    assert restored and not [p for p in restored if b"\r\n" in p.read_bytes()]
    assert git(memory_dir, "status", "--porcelain") == ""


@pytest.mark.posix_only("the stand-in signing program is a shell script")
def test_a_signing_setting_never_runs_a_signing_program(
    make_workflow, memory_dir: Path, global_config: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "signed"
    program = tmp_path / "fake-gpg"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    program.chmod(0o755)
    global_config.write_text(f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {program}\n")
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    assert [op.kind for op in workflow.history.operations()] == ["build"]
    assert not marker.exists()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("chown") is None,
    reason="needs root to give the folder another owner (as exFAT and network shares appear)",
)
def test_a_memory_the_file_system_says_someone_else_owns_keeps_its_history(
    make_workflow, memory_dir: Path
) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    subprocess.run(["chown", "-R", "65534:65534", str(memory_dir)], check=True, timeout=60)
    refused = subprocess.run(
        ["git", "status"], cwd=memory_dir, capture_output=True, text=True, timeout=60
    )
    assert "dubious ownership" in refused.stderr  # what plain git says of such a folder
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"rust": 3}))
    assert [op.kind for op in workflow.history.operations()] == ["add", "build"]


def committed_notes(root: Path, count: int) -> MemoryRepo:
    """A repository at `root` whose first commit holds `count` notes in notes/."""
    from gam_desktop.engine.history.gitrepo import MemoryRepo

    (root / "notes").mkdir(parents=True)
    for i in range(count):
        (root / "notes" / f"n{i}.md").write_text(f"note {i}\n")
    repo = MemoryRepo.open(root)
    repo.commit_all("first")
    return repo


def test_status_lists_folders_from_git_s_untracked_cache_and_still_sees_new_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "memory"
    repo = committed_notes(root, 30)
    past = time.time() - 60  # no folder as new as the index: git would list it again
    for folder in (root, root / "notes"):
        os.utime(folder, (past, past))
    assert repo.status(refresh=True) == {}  # (an operation's first status: writes the cache)
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE2_PERF", str(trace))
    assert repo.status() == {}
    visited = re.findall(r"paths-visited:(\d+)", trace.read_text())
    assert visited and int(visited[-1]) < 5  # the folders' times compared, no file listed
    (root / "notes" / "new.md").write_text("new\n")
    (root / "more").mkdir()
    (root / "more" / "other.md").write_text("other\n")
    assert repo.status() == {"notes/new.md": "??", "more/other.md": "??"}


def test_a_big_memorys_index_is_split_so_a_commit_rewrites_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the size a split pays off at (lowered here to this memory's), staging a few
    files rewrites only the small split part of the index, not the entry of every file
    (15 MB hashed twice per operation at 100,000 files); the user's own git reads it."""
    from gam_desktop.engine.history import gitrepo

    monkeypatch.setattr(gitrepo, "SPLIT_INDEX_BYTES", 1)
    root = tmp_path / "memory"
    repo = committed_notes(root, 200)
    shared = list((root / ".git").glob("sharedindex.*"))
    assert len(shared) == 1
    before = shared[0].read_bytes()
    (root / "notes" / "n0.md").write_text("changed\n")
    (root / "notes" / "new.md").write_text("new\n")
    repo.commit_all("second", paths={"notes/n0.md", "notes/new.md"})
    assert list((root / ".git").glob("sharedindex.*")) == shared  # not written again
    assert shared[0].read_bytes() == before
    assert git(root, "status", "--porcelain") == ""  # plain git reads it: all committed
    assert "notes/new.md" in git(root, "ls-files")


def test_a_small_memorys_index_stays_one_file_other_tools_read(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    committed_notes(root, 50)
    assert list((root / ".git").glob("sharedindex*")) == []


def test_an_index_that_lost_its_shared_part_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync tool or a partial copy brings the split index without its shared file: every
    git command would fail ("index file open failed"). The app makes it again from the
    last commit and goes on; nothing committed is lost."""
    from gam_desktop.engine.history import gitrepo

    monkeypatch.setattr(gitrepo, "SPLIT_INDEX_BYTES", 1)
    root = tmp_path / "memory"
    repo = committed_notes(root, 20)
    (shared,) = (root / ".git").glob("sharedindex.*")
    shared.unlink()
    assert repo.status() == {}
    (root / "notes" / "n1.md").write_text("edited\n")
    assert repo.status() == {"notes/n1.md": " M"}
    assert repo.commit_all("edit", paths={"notes/n1.md"}) is not None
    assert git(root, "show", "HEAD:notes/n1.md") == "edited\n"
    assert len(git(root, "ls-files").split()) == 20  # every file still tracked


def test_staging_through_an_index_that_lost_its_shared_part_stages_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first command to meet the lost shared file is the one staging an operation's
    paths, given on standard input: after the index is made again, it runs again and
    stages all of them."""
    from gam_desktop.engine.history import gitrepo

    monkeypatch.setattr(gitrepo, "SPLIT_INDEX_BYTES", 1)
    root = tmp_path / "memory"
    repo = committed_notes(root, 20)
    (shared,) = (root / ".git").glob("sharedindex.*")
    shared.unlink()
    paths = {f"notes/new{i}.md" for i in range(3)}
    for path in paths:
        (root / path).write_text(f"{path}\n")
    assert repo.commit_all("three new", paths=paths) is not None
    assert set(git(root, "show", "--name-only", "--format=", "HEAD").split()) == paths
    assert git(root, "status", "--porcelain") == ""


def test_a_shared_index_half_written_by_a_killed_git_is_cleared(tmp_path: Path) -> None:
    from gam_desktop.engine.history.recovery import clear_git_leftovers

    root = tmp_path / "memory"
    repo = committed_notes(root, 5)
    unfinished = root / ".git" / "sharedindex_Ab12Cd"  # git's temporary name while writing
    unfinished.write_bytes(b"DIRC")
    clear_git_leftovers(repo)
    assert not unfinished.exists() and repo.status() == {}
