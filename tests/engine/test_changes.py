"""What an operation changed: each writing operation reports, once, exactly the files its
commits touched (as git itself lists them), and the watcher's outside edits say too."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.workflow import OutsideEdit
from tests.documents import topic_document
from tests.engine.helpers import wait_for
from tests.repos import git

# -- the value itself -------------------------------------------------------------------------


def test_touches_files_folders_and_moves() -> None:
    changes = Changes(
        "reorganize",
        added=frozenset({"a/new.md"}),
        removed=frozenset({"gone.md"}),
        moved=frozenset({("all/x.md", "python/x.md")}),
    )
    assert changes.touches("a/new.md") and changes.touches("a")  # a folder holding it
    assert changes.touches("gone.md") and changes.touches("all/x.md")
    assert not changes.touches("b/other.md") and not changes.touches("all/y.md")
    assert changes.moved_to("all/x.md") == "python/x.md" and changes.moved_to("a/new.md") is None
    assert Changes("recover", everything=True).touches("anything.md")
    assert Changes("add").empty and not changes.empty


def test_a_folder_seen_removed_touches_what_was_inside() -> None:
    changes = Changes("outside-edit", removed=frozenset({"rust"}))
    assert changes.touches("rust/ownership.md") and not changes.touches("rusty.md")


def test_steps_combine_into_their_net_effect() -> None:
    build = Changes("build", added=frozenset({"all/a.md", "all/b.md", "README.md"}))
    reorganize = Changes(
        "reorganize",
        modified=frozenset({"README.md"}),
        moved=frozenset({("all/a.md", "x/a.md"), ("all/b.md", "y/b.md")}),
        commit="c2",
    )
    net = build.then(reorganize)
    assert net.kind == "build" and net.commit == "c2"
    assert net.added == {"x/a.md", "y/b.md", "README.md"} and not net.moved and not net.modified
    edit = Changes("add", modified=frozenset({"m.md"}), moved=frozenset({("p.md", "q.md")}))
    back = Changes("add", moved=frozenset({("q.md", "p.md")}), removed=frozenset({"m.md"}))
    expected = Changes("add", modified=frozenset({"p.md"}), removed=frozenset({"m.md"}))
    assert edit.then(back) == expected
    swap = Changes("add", moved=frozenset({("a.md", "b.md"), ("b.md", "c.md")}))
    assert Changes("add").then(swap).moved == {("a.md", "b.md"), ("b.md", "c.md")}


# -- operations on a real repository ----------------------------------------------------------


def name_status(root: Path, sha: str, since: str | None = None) -> dict[str, set]:
    """A commit's changes as git lists them (renames detected), by kind; with `since`,
    everything between that commit and `sha`."""
    if since is None:
        out = git(root, "diff-tree", "-r", "-M", "--root", "--no-commit-id", "--name-status", sha)
    else:
        out = git(root, "diff", "-M", "--name-status", since, sha)
    kinds: dict[str, set] = {"added": set(), "modified": set(), "removed": set(), "moved": set()}
    for line in out.splitlines():
        status, *paths = line.split("\t")
        if status.startswith("R"):
            kinds["moved"].add((paths[0], paths[1]))
        else:
            kinds[{"A": "added", "D": "removed"}.get(status[0], "modified")].add(paths[0])
    return kinds


def as_kinds(changes: Changes) -> dict[str, set]:
    return {
        "added": set(changes.added),
        "modified": set(changes.modified),
        "removed": set(changes.removed),
        "moved": set(changes.moved),
    }


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def heard(make_workflow):
    """A workflow whose writing operations report to the list returned beside it."""
    changes: list[Changes] = []
    return make_workflow(on_change=changes.append), changes


def test_an_add_reports_exactly_the_files_its_commit_touched(heard, memory_dir: Path) -> None:
    workflow, changes = heard
    workflow.add(text=topic_document({"python": 3}))
    assert len(changes) == 1 and changes[0].kind == "build"
    assert changes[0].commit == head(memory_dir)
    assert as_kinds(changes[0]) == name_status(memory_dir, head(memory_dir))
    assert any(p.startswith("python/") and p.endswith(".md") for p in changes[0].added)
    workflow.add(text=topic_document({"rust": 3}))
    assert len(changes) == 2 and changes[1].kind == "add"
    assert as_kinds(changes[1]) == name_status(memory_dir, head(memory_dir))
    assert changes[1].modified and not changes[1].removed  # the root README, the meta file


def test_an_add_that_reorganizes_reports_both_commits_as_one(heard, memory_dir: Path) -> None:
    workflow, changes = heard
    workflow.add(text=topic_document({"python": 6}))
    before = head(memory_dir)
    report = workflow.add(text=topic_document({"python": 9}))
    assert report.reorganizations and len(changes) == 2  # one report for the add
    commits = git(memory_dir, "rev-list", f"{before}..HEAD").split()
    assert len(commits) == 2  # the add, then the reorganization
    assert as_kinds(changes[1]) == name_status(memory_dir, head(memory_dir), since=before)
    assert changes[1].moved and changes[1].commit == head(memory_dir)


def test_a_reorganize_its_rollback_and_a_restore_report_their_commits(
    heard, memory_dir: Path
) -> None:
    workflow, changes = heard
    workflow.add(text=topic_document({"python": 6}))
    workflow.options.auto_reorganize = False
    workflow.add(text=topic_document({"python": 9}))
    second = head(memory_dir)
    changes.clear()
    plan = workflow.plan_reorganization("python")
    assert plan.moved_files and changes == []  # a plan changes nothing and reports nothing
    workflow.reorganize("python")
    reorganized = head(memory_dir)
    assert [c.kind for c in changes] == ["reorganize"]
    assert as_kinds(changes[0]) == name_status(memory_dir, reorganized)
    assert len(changes[0].moved) == len(plan.moved_files)
    new = workflow.rollback(reorganized)
    assert [c.kind for c in changes] == ["reorganize", "rollback"] and changes[1].commit == new
    assert as_kinds(changes[1]) == name_status(memory_dir, new)
    assert {(b, a) for a, b in changes[1].moved} == set(changes[0].moved)  # moved back
    restored = workflow.restore_before(second)
    assert changes[2].kind == "restore" and changes[2].commit == restored
    assert as_kinds(changes[2]) == name_status(memory_dir, head(memory_dir))
    assert changes[2].removed and not changes[2].added  # the second add's memories went


def test_without_git_the_change_sets_say_what_changed(
    make_workflow, memory_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    changes: list[Changes] = []
    workflow = make_workflow(on_change=changes.append)
    report = workflow.add(text=topic_document({"python": 3}))
    assert workflow.history is None and len(changes) == 1
    on_disk = {
        p.relative_to(memory_dir).as_posix()
        for p in memory_dir.rglob("*")
        if p.is_file() and ".gam/cache" not in p.as_posix() and ".gam/lock" not in p.as_posix()
    }
    assert changes[0].added == on_disk and changes[0].commit is None
    assert set(report.memories) <= changes[0].added


def test_an_outside_edit_carries_what_changed_and_the_watcher_has_its_own_repository(
    make_workflow, memory_dir: Path, monkeypatch
) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    repos: list[tuple[MemoryRepo, threading.Thread]] = []
    original = MemoryRepo.git

    def recording(self: MemoryRepo, *args: str, **kwargs) -> str:
        repos.append((self, threading.current_thread()))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MemoryRepo, "git", recording)
    edits: list[OutsideEdit] = []
    watcher = workflow.watch(edits.append)
    try:
        (memory_dir / "quokkas.md").write_text(
            render_memory({"title": "quokkas", "tldr": "Q."}, "Quokkas live on Rottnest.")
        )
        assert wait_for(lambda: edits)
    finally:
        watcher.stop()
    edit = edits[0]
    assert edit.changes.kind == "outside-edit" and edit.changes.added == {"quokkas.md"}
    assert edit.changes.commit == edit.commit == edit.head == head(memory_dir)
    on_watcher = {id(repo) for repo, thread in repos if thread is not threading.main_thread()}
    assert on_watcher and id(workflow.versioned.repo) not in on_watcher
