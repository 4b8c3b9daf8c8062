"""Edits made outside the app: watched (real inotify), coalesced, committed, reported."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.store.watcher import FolderWatcher
from gam_desktop.engine.workflow import OutsideEdit
from tests.documents import topic_document
from tests.engine.helpers import wait_for


@pytest.fixture
def built(make_workflow):
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    return workflow


@pytest.fixture
def watched(built):
    edits: list[OutsideEdit] = []
    watcher = built.watch(edits.append)
    yield built, edits
    watcher.stop()
    assert not watcher.running  # stops cleanly


def memory_file(root: Path) -> Path:
    return next(
        p for p in sorted(root.rglob("*.md")) if p.name != "README.md" and ".gam" not in p.parts
    )


def test_an_outside_edit_becomes_one_commit(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    target = memory_file(memory_dir)
    target.write_text(target.read_text() + "\nAdded in another editor.\n")
    assert wait_for(lambda: edits)
    assert edits[0].paths == [target.relative_to(memory_dir).as_posix()]
    newest = workflow.history.operations(limit=1)[0]
    assert newest.kind == "manual-edit" and newest.sha == edits[0].commit
    assert newest.summary == "Edited 1 file outside the app"


def test_an_editor_save_by_temp_file_and_rename(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    target = memory_file(memory_dir)
    temp = target.with_name(f".{target.name}.swp")
    temp.write_text(target.read_text() + "\nSaved the careful way.\n")
    os.replace(temp, target)
    assert wait_for(lambda: edits)
    rel = target.relative_to(memory_dir).as_posix()
    assert edits[0].paths == [rel]  # the rename's destination; the temp file is ignored
    assert "+Saved the careful way." in workflow.history.diff(edits[0].commit, rel)


def test_a_burst_of_changes_is_coalesced(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    count_before = workflow.history.count()
    (memory_dir / "python_extra").mkdir()
    for i in range(5):
        (memory_dir / "python_extra" / f"note_{i}.md").write_text(f"# Note {i}\n\nText.\n")
    victim = memory_file(memory_dir)
    victim.unlink()
    assert wait_for(lambda: edits)
    time.sleep(1.0)  # nothing further arrives
    assert len(edits) == 1 and len(edits[0].paths) == 7  # 5 files, their folder, 1 deletion
    assert workflow.history.count() == count_before + 1
    assert workflow.history.operations(limit=1)[0].summary == "Edited 6 files outside the app"


def test_the_apps_own_writes_are_not_manual_edits(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    workflow.add(text=topic_document({"git": 3}))
    time.sleep(1.5)  # longer than the coalescing delay
    assert edits == []
    assert [op.kind for op in workflow.history.operations(limit=2)] == ["add", "build"]


def test_rolling_back_the_first_build_is_no_outside_edit(watched, memory_dir: Path) -> None:
    """With its only build rolled back the folder is no memory any more (no .gam_meta.json),
    but its repository still tells git's writes from a person's: they were reported as
    "11 files changed outside the app"."""
    workflow, edits = watched
    build = workflow.history.operations(limit=1)[0]
    rollback = workflow.rollback(build.sha)
    assert not workflow.folder.is_memory()
    assert wait_for(lambda: edits)
    assert all(edit.paths == [] for edit in edits)  # seen, but none of it a person's
    assert edits[0].head == rollback and edits[0].commit is None
    assert "README.md" in edits[0].changed


def test_git_and_app_folders_are_ignored(memory_dir: Path, built) -> None:
    seen: list[list[str]] = []
    watcher = FolderWatcher(memory_dir, seen.append, delay=0.2)
    watcher.start()
    try:
        (memory_dir / ".gam" / "cache" / "x.json").parent.mkdir(parents=True, exist_ok=True)
        (memory_dir / ".gam" / "cache" / "x.json").write_text("{}")
        (memory_dir / ".git" / "scratch").write_text("x")
        (memory_dir / "notes.md~").write_text("backup")
        time.sleep(1.0)
        assert seen == []
        (memory_dir / "real.md").write_text("# Real\n")
        assert wait_for(lambda: seen) and seen == [["real.md"]]
    finally:
        watcher.stop()


def test_broken_front_matter_is_reported_searched_and_left_alone(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    target = memory_file(memory_dir)
    broken = "---\ntitle: [unclosed\ntldr: x\n---\n\nThe zanzibar fact stays findable.\n"
    target.write_text(broken)
    assert wait_for(lambda: edits)
    assert (
        edits[0].problems
        and "cannot be read: the list opened with '[' on line 2" in (edits[0].problems[0])
    )
    assert target.read_text() == broken  # never silently rewritten
    result = workflow.request("zanzibar")
    rel = target.relative_to(memory_dir).as_posix()
    assert rel in result.files_read or rel in result.sources or "zanzibar" in result.answer


def test_the_search_index_sees_outside_edits(watched, memory_dir: Path) -> None:
    workflow, edits = watched
    workflow.request("What is Python?")  # builds the index
    (memory_dir / "quokka.md").write_text(
        render_memory({"title": "quokka"}, "Quokkas live on Rottnest Island.")
    )
    assert wait_for(lambda: edits)
    result = workflow.request("Where do quokkas live?")
    assert "Rottnest" in result.answer and result.sources == ["quokka.md"]


def test_watcher_starts_and_stops_cleanly(tmp_path: Path) -> None:
    watcher = FolderWatcher(tmp_path, lambda paths: None)
    threads_before = threading.active_count()
    watcher.start()
    assert watcher.running
    watcher.stop()
    assert not watcher.running
    assert wait_for(lambda: threading.active_count() <= threads_before, 5)


def test_events_in_nfd_or_another_case_are_still_the_memorys(tmp_path: Path) -> None:
    """macOS reports event paths in NFD and in the case on disk; the folder was opened
    with the NFC name the person typed. Before, such an edit fell outside the root and
    was ignored, and the app's own writes were taken for a person's."""
    import unicodedata

    from gam_desktop.engine.store.ownwrites import OwnWrites
    from gam_desktop.engine.store.watcher import is_interesting, relative_parts

    root = tmp_path / unicodedata.normalize("NFC", "Mémoire")
    event = (
        tmp_path
        / unicodedata.normalize("NFD", "MÉMOIRE")
        / unicodedata.normalize("NFD", "café/crème.md")
    )
    assert is_interesting(root, str(event))
    assert relative_parts(root, event) == ("café", "crème.md")  # reported in NFC
    assert relative_parts(root, tmp_path / "elsewhere" / "a.md") is None
    own = OwnWrites()  # the app deleted a file (NFC); the event names it in NFD, upper case
    own.note_deleted(root / unicodedata.normalize("NFC", "crème.md"))
    assert own.is_own(event.parent.parent / unicodedata.normalize("NFD", "CRÈME.md"))


def test_a_flushed_batch_names_each_file_once_in_nfc(tmp_path: Path) -> None:
    import unicodedata

    seen: list[list[str]] = []
    watcher = FolderWatcher(tmp_path, seen.append, delay=60)
    for form in ("NFC", "NFD"):
        watcher.touch(tmp_path / unicodedata.normalize(form, "crème.md"))
    watcher._flush()
    watcher.stop()
    assert seen == [[unicodedata.normalize("NFC", "crème.md")]]


def test_an_edit_whose_notification_was_lost_is_found_by_the_rescan(
    built, memory_dir: Path
) -> None:
    """Windows drops every notification when ReadDirectoryChangesW's buffer overflows
    (and watchdog says nothing): the periodic rescan (git status) still records the edit.
    Simulated by stopping the notifications and keeping the rescan."""
    built.rescan_every = 0.2
    edits: list[OutsideEdit] = []
    watcher = built.watch(edits.append)
    try:
        assert watcher._observer is not None
        watcher._observer.stop()  # from now on no notification arrives
        watcher._observer.join(timeout=5)
        target = memory_file(memory_dir)
        target.write_text(target.read_text() + "\nSaved while notifications were lost.\n")
        assert wait_for(lambda: edits)
        rel = target.relative_to(memory_dir).as_posix()
        assert edits[0].paths == [rel] and edits[0].commit is not None
        assert built.history.operations(limit=1)[0].kind == "manual-edit"
    finally:
        watcher.stop()
    assert not watcher.running


def test_the_rescan_leaves_a_running_operation_alone(built, memory_dir: Path) -> None:
    """While an operation writes (its journal exists), uncommitted files are its own."""
    from gam_desktop.engine.history import journal

    built.rescan_every = 0.1
    edits: list[OutsideEdit] = []
    target = memory_file(memory_dir)
    with built.versioned.operation("add") as _transaction:
        assert journal.read(built.folder) is not None
        watcher = built.watch(edits.append)
        watcher._observer.stop()
        target.write_text(target.read_text() + "\nWritten by the operation.\n")
        rescans = watcher.rescan
        assert rescans is not None and rescans() == []
        watcher.stop()
    assert edits == []
