"""Lock files a git killed mid-commit leaves behind (.git/index.lock, a branch's
refs/heads/<name>.lock): no git ever runs to remove them, so the message names the file and
says that deleting it is safe when no other git runs; one old enough that no program has
open is called stale and refused before any LLM call.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gam_desktop.engine.history import held
from gam_desktop.engine.history.held import HeldByAnotherProgram, StaleGitLock
from tests.documents import topic_document
from tests.repos import git


def _branch_lock(root: Path) -> Path:
    branch = git(root, "symbolic-ref", "HEAD").strip()  # refs/heads/<name>
    return root / ".git" / f"{branch}.lock"


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.mark.parametrize("which", ["index", "branch"])
def test_a_lock_left_by_a_killed_git_is_named_with_how_to_clear_it(
    make_workflow, memory_dir: Path, which: str
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    head = git(memory_dir, "rev-parse", "HEAD")
    lock = memory_dir / ".git" / "index.lock" if which == "index" else _branch_lock(memory_dir)
    lock.write_text("")  # just now: another git may be working (no "stale" yet)
    with pytest.raises(HeldByAnotherProgram) as raised:
        make_workflow().add(text=topic_document({"rust": 3}))
    said = raised.value.strerror
    assert said.startswith(f"{lock} is held by another git")
    assert said.endswith(
        "If no other git program is running, one that stopped (a crash, a kill) left it, "
        f"and deleting {lock} is safe"
    )
    assert "remove the file manually" not in said
    assert git(memory_dir, "rev-parse", "HEAD") == head
    lock.unlink()  # as told: the same add then works
    assert len(make_workflow().add(text=topic_document({"rust": 3})).memories) == 3


@pytest.mark.linux_only("which programs have a file open is read from /proc")
@pytest.mark.parametrize("which", ["index", "branch"])
def test_an_old_lock_no_program_holds_is_called_stale_before_any_llm_call(
    make_workflow, memory_dir: Path, llm_server, which: str
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    lock = memory_dir / ".git" / "index.lock" if which == "index" else _branch_lock(memory_dir)
    lock.write_text("")
    _age(lock, 11 * 60)
    calls = len(llm_server.state.requests)
    with pytest.raises(StaleGitLock) as raised:
        make_workflow().add(text=topic_document({"rust": 3}))
    assert raised.value.strerror == (
        f"{lock} is a stale lock file: it is 11 minutes old and no program has it open, so a "
        f"git program that stopped (a crash, a kill) left it. Delete {lock}, then try again"
    )
    assert len(llm_server.state.requests) == calls  # refused before anything was paid for


@pytest.mark.linux_only("which programs have a file open is read from /proc")
def test_an_old_lock_a_program_holds_open_is_not_called_stale(tmp_path: Path) -> None:
    lock = tmp_path / "index.lock"
    lock.write_text("")
    _age(lock, 30 * 60)
    assert isinstance(held.lock_error(lock), StaleGitLock)
    with lock.open("rb"):  # a git at work holds it open (here: this test)
        said = held.lock_error(lock)
    assert not isinstance(said, StaleGitLock)
    assert said.strerror.startswith(f"{lock} is held by another git")


def test_where_open_files_cannot_be_seen_an_old_lock_is_most_likely_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(held, "PROC", tmp_path / "no-proc")  # macOS, Windows
    lock = tmp_path / "index.lock"
    lock.write_text("")
    _age(lock, 5 * 60)
    said = held.lock_error(lock)
    assert isinstance(said, StaleGitLock)
    assert said.strerror == (
        f"{lock} is 5 minutes old, and git holds such a file for a moment only: a git program "
        "that stopped (a crash, a kill) most likely left it. If no other git program is "
        f"running, deleting {lock} is safe; then try again"
    )
