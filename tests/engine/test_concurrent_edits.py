"""Edits made by someone else while an operation runs are never lost or taken as the app's.

The edits happen at a chosen moment of the operation (from its progress callback, while
the LLM would be thinking), as another editor saving a file would.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gam_desktop.engine.history import versioned
from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.versioned import ConcurrentEditError
from gam_desktop.engine.store.folder import JOURNAL_FILE, MemoryFolder
from gam_desktop.engine.store.markdown import parse_readme
from gam_desktop.engine.workflow import OutsideEdit
from tests import invariants
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.engine.helpers import edit_during, wait_for
from tests.repos import git

NOTE = "---\ntitle: My own note\n---\n\nPython notes of my own.\n"
USER_README = (
    "# My languages\n\nHand-written notes about the languages I use.\n\n## Contents\n\n- x\n"
)


def test_a_readme_edited_during_an_add_keeps_the_persons_words(
    make_workflow, memory_dir: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    readme = memory_dir / "README.md"
    workflow = make_workflow(progress=edit_during("place", lambda: readme.write_text(USER_README)))
    workflow.add(text=topic_document({"rust": 3}))
    add, manual = workflow.history.operations(limit=2)
    assert manual.kind == "manual-edit" and add.kind == "add"  # theirs first, on its own
    assert git(memory_dir, "show", f"{manual.sha}:README.md") == USER_README  # their bytes
    merged = parse_readme(readme.read_text())
    assert merged.title == "My languages"
    assert merged.description == "Hand-written notes about the languages I use."
    assert any("rust/" in entry for entry in merged.entries)  # and the contents are current
    assert invariants.problems(memory_dir) == []


def test_another_file_edited_during_an_add_is_committed_apart(
    make_workflow, memory_dir: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    memory = sorted((memory_dir / "python").glob("python_notes*.md"))[0]
    edited = memory.read_text() + "\nA line from another editor.\n"
    workflow = make_workflow(progress=edit_during("memorize", lambda: memory.write_text(edited)))
    workflow.add(text=topic_document({"rust": 3}))
    add, manual = workflow.history.operations(limit=2)
    rel = memory.relative_to(memory_dir).as_posix()
    assert manual.kind == "manual-edit" and [
        c.path for c in workflow.history.changes(manual.sha)
    ] == [rel]
    assert rel not in [c.path for c in workflow.history.changes(add.sha)]
    assert memory.read_text() == edited


def test_a_file_the_operation_would_replace_stops_it_before_any_write(
    make_workflow, memory_dir: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    meta = memory_dir / ".gam_meta.json"
    theirs = meta.read_text().replace('"total_chunks"', '"note": "mine",\n  "total_chunks"')
    head = git(memory_dir, "rev-parse", "HEAD")
    listing = sorted(p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*.md"))
    workflow = make_workflow(progress=edit_during("place", lambda: meta.write_text(theirs)))
    with pytest.raises(ConcurrentEditError, match=r"'\.gam_meta\.json' was changed by another"):
        workflow.add(text=topic_document({"rust": 3}))
    assert meta.read_text() == theirs  # never overwritten
    # Theirs is recorded on its own (trying again does not meet it as an edit meanwhile).
    assert git(memory_dir, "rev-parse", "HEAD~1") == head
    assert git(memory_dir, "show", "HEAD:.gam_meta.json") == theirs
    assert git(memory_dir, "log", "-1", "--format=%s").strip() == "Manual edits"
    assert sorted(p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*.md")) == listing
    assert workflow.interrupted() is None  # a clean stop, not a crash
    assert make_workflow().add(text=topic_document({"rust": 3})).memories  # and again works


@pytest.fixture
def watched(make_workflow):
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    edits: list[OutsideEdit] = []
    watcher = workflow.watch(edits.append)
    yield workflow, edits
    watcher.stop()


def test_another_processs_add_is_not_an_outside_edit(watched, memory_dir: Path, llm_server) -> None:
    workflow, edits = watched
    out = run_cli(
        ["--gam-dir", str(memory_dir), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
    )
    assert out.returncode == 0, out.stderr
    assert wait_for(lambda: any("rust" in " ".join(e.changed) for e in edits))
    assert [e.paths for e in edits if e.paths] == []  # seen, refreshed, not called outside
    assert all(e.commit is None for e in edits)
    assert workflow.history.operations(limit=1)[0].kind == "add"


def test_a_rollback_is_not_an_outside_edit(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    workflow.rollback(add.sha)
    assert wait_for(lambda: any(e.changed for e in edits))
    assert [e.paths for e in edits if e.paths] == []
    assert workflow.history.operations(limit=1)[0].kind == "rollback"


def test_a_memory_added_during_an_add_is_listed_by_its_folder(
    make_workflow, memory_dir: Path
) -> None:
    """Someone saves a memory into a folder while an add runs: the add's listings (which it
    computed before) follow it, and it is committed apart, as the person's."""
    make_workflow().add(text=topic_document({"python": 3}))
    note = memory_dir / "python" / "my_own_note.md"
    workflow = make_workflow(progress=edit_during("place", lambda: note.write_text(NOTE)))
    workflow.add(text=topic_document({"rust": 3}))
    assert "my_own_note" in (memory_dir / "python" / "README.md").read_text()
    _, manual = workflow.history.operations(limit=2)
    assert manual.kind == "manual-edit" and [
        c.path for c in workflow.history.changes(manual.sha)
    ] == ["python/my_own_note.md"]


def test_an_operation_with_history_never_walks_the_folder(
    make_workflow, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git says what changed while an operation ran (one status): the two walks of every
    file it made instead took two seconds an operation at 100,000 memories."""
    make_workflow().add(text=topic_document({"python": 3}))

    def walked(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the operation walked the folder")

    monkeypatch.setattr(versioned, "stat_files", walked)
    make_workflow().add(text=topic_document({"rust": 3}))


def test_a_copied_memory_has_its_index_refreshed_by_the_next_operation(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """A memory copied or restored from a backup: every file's time and inode differ from
    what git's index says, and a status with the index left as it is (as the app asks
    for it) reads all of them again, every time (4 s at 100,000 files). The status an
    operation starts with may refresh the index."""
    make_workflow().add(text=topic_document({"python": 3}))
    copy = tmp_path / "copy"
    shutil.copytree(memory_dir, copy, symlinks=True)  # new inodes, new times
    shutil.rmtree(memory_dir)
    copy.rename(memory_dir)
    memory = next((memory_dir / "python").glob("python_notes*.md")).relative_to(memory_dir)

    def indexed_inode() -> int:
        debug = git(memory_dir, "ls-files", "--debug", memory.as_posix())
        return int(debug.split("ino:")[1].split()[0])

    assert indexed_inode() != (memory_dir / memory).stat().st_ino
    make_workflow().add(text=topic_document({"rust": 3}))
    assert indexed_inode() == (memory_dir / memory).stat().st_ino


def test_a_file_edited_before_an_operation_began_is_committed_first_and_replaced(
    make_workflow, memory_dir: Path
) -> None:
    """An edit saved before the operation started is the person's, pending: committed on
    its own, then replaced like any file the operation rewrites (it read it as it is)."""
    make_workflow().add(text=topic_document({"python": 3}))
    meta = memory_dir / ".gam_meta.json"
    theirs = meta.read_text().replace('"total_chunks"', '"note": "mine",\n  "total_chunks"')
    meta.write_text(theirs)
    saved = meta.stat().st_mtime - 60  # a minute before the add
    os.utime(meta, (saved, saved))
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))
    add, manual = workflow.history.operations(limit=2)
    assert manual.kind == "manual-edit" and add.kind == "add"
    assert git(memory_dir, "show", f"{manual.sha}:.gam_meta.json") == theirs  # kept in history
    assert '"note"' not in meta.read_text()  # and the add's counts written over it


def test_an_operation_looks_at_every_file_once_per_change_set(
    make_workflow, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One git status per change set written, none when the operation starts (each costs
    ~150 ms at 100,000 memories); a rollback, which git writes itself, starts with one."""
    make_workflow().add(text=topic_document({"python": 3}))
    looks: list[str] = []
    status = MemoryRepo.status

    def counted(repo: MemoryRepo, refresh: bool = False) -> dict[str, str]:
        looks.append("status")
        return status(repo, refresh)

    write = versioned.Transaction.write

    def written(transaction, *args, **kwargs) -> None:
        looks.append("write")
        write(transaction, *args, **kwargs)

    monkeypatch.setattr(MemoryRepo, "status", counted)
    monkeypatch.setattr(versioned.Transaction, "write", written)
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))
    assert looks and looks == ["write", "status"] * (len(looks) // 2)
    looks.clear()
    workflow.rollback(workflow.history.operations(limit=1)[0].sha)
    assert looks[0] == "status"


def test_an_edit_meanwhile_that_kept_an_old_file_time_still_stops_the_operation(
    make_workflow, memory_dir: Path
) -> None:
    """A sync tool, `cp -p` or a file manager writes the file now with the time it had
    elsewhere: its inode changed now all the same, and it is never overwritten."""
    make_workflow().add(text=topic_document({"python": 3}))
    meta = memory_dir / ".gam_meta.json"
    theirs = meta.read_text().replace('"total_chunks"', '"note": "mine",\n  "total_chunks"')

    def synced() -> None:
        meta.write_text(theirs)
        os.utime(meta, (meta.stat().st_mtime - 30, meta.stat().st_mtime - 30))

    workflow = make_workflow(progress=edit_during("place", synced))
    with pytest.raises(ConcurrentEditError):
        workflow.add(text=topic_document({"rust": 3}))
    assert meta.read_text() == theirs


def test_a_memory_moved_meanwhile_is_listed_where_it_went(make_workflow, memory_dir: Path) -> None:
    """A move keeps the file's time: the folder it went to still gets its listing."""
    make_workflow().add(text=topic_document({"python": 3}))
    moved = next(p for p in sorted((memory_dir / "python").glob("*.md")) if p.name != "README.md")
    (memory_dir / "notes").mkdir()
    workflow = make_workflow(
        progress=edit_during("place", lambda: moved.rename(memory_dir / "notes" / "moved.md"))
    )
    workflow.add(text=topic_document({"rust": 3}))
    assert "moved" in (memory_dir / "notes" / "README.md").read_text()
    assert invariants.problems(memory_dir) == []


def test_an_operation_starts_by_the_clock_of_the_folders_files(tmp_path: Path) -> None:
    """A network drive's server a minute ahead: its file times, not this machine's, say
    what was saved before the operation began."""
    folder = MemoryFolder(tmp_path)
    journal_file = tmp_path / JOURNAL_FILE
    journal_file.parent.mkdir(parents=True, exist_ok=True)
    journal_file.write_text("{}")
    now = journal_file.stat().st_mtime_ns
    assert versioned._folder_clock(folder, now + 1000) == now + 1000  # the same clock: ours
    ahead = now + 60_000_000_000
    os.utime(journal_file, ns=(ahead, ahead))
    assert versioned._folder_clock(folder, now) == ahead
