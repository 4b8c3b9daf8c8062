"""A named pipe, socket or device saved among a memory's notes by another program (issue 36,
section 2, "also seen"): git cannot stage one ("unsupported file type") and the memory was
refused whole ("git would wait for it forever; nothing is written to this memory"), its
history off. git never opens one under a visible name, nor does the app: it is left out of
the history by name, and everything else is committed, by an operation and by the
watcher's recording of outside edits alike. Under a hidden name (.git, .gam, a rules file)
it is still refused (tests/engine/test_untrusted_repository.py)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gam_desktop.engine.store.gitdir import UnsafeRepositoryError, special_files
from gam_desktop.engine.workflow import OutsideEdit
from tests.documents import topic_document
from tests.engine.helpers import wait_for
from tests.engine.test_untrusted_repository import PipeWatch
from tests.repos import git

pytestmark = pytest.mark.posix_only("named pipes and sockets")


@pytest.fixture
def pipes() -> Iterator[PipeWatch]:
    watch = PipeWatch()
    yield watch
    watch.stop()


@pytest.fixture
def memory(make_workflow, memory_dir: Path) -> Path:
    make_workflow().add(text=topic_document({"python": 3}))
    return memory_dir


def a_note(memory: Path) -> Path:
    return sorted(p for p in (memory / "python").glob("*.md") if p.name != "README.md")[0]


def committed(memory: Path) -> set[str]:
    return set(git(memory, "ls-files", "-z").split("\0")) - {""}


def said(rel: str, kind: str) -> str:
    return (
        f"{rel} is {kind}, not a file: left out of the memory's history (the rest is "
        "recorded); remove it, or replace it with a file, to record it"
    )


def test_a_pipe_among_the_notes_is_left_out_by_name_and_the_rest_committed(
    make_workflow, memory: Path, pipes: PipeWatch
) -> None:
    pipes.make(memory / "python" / "x.md")
    mine = memory / "python" / "mine.md"
    mine.write_text("# Mine\n\nA note of my own.\n", encoding="utf-8")
    workflow = make_workflow()
    report = workflow.add(text=topic_document({"rust": 3}))
    assert workflow.history_message is None  # history stays on
    assert said("python/x.md", "a named pipe (FIFO)") in report.warnings
    assert (memory / "rust").is_dir()
    files = committed(memory)
    assert "python/mine.md" in files and "python/x.md" not in files  # theirs recorded
    assert any(p.startswith("rust/") for p in files)  # and the add's own
    subjects = git(memory, "log", "--format=%s").splitlines()
    assert subjects[0].startswith("Added") and subjects[1] == "Manual edits"
    assert git(memory, "status", "--porcelain") == ""  # git lists no pipe: nothing left
    assert not pipes.opened  # nothing waited on it


def test_a_note_replaced_by_a_pipe_keeps_its_last_version(
    make_workflow, memory: Path, pipes: PipeWatch
) -> None:
    """git lists it as modified (by its type alone): staging it failed the whole commit."""
    note = a_note(memory)
    rel = note.relative_to(memory).as_posix()
    before = git(memory, "show", f"HEAD:{rel}")
    note.unlink()
    pipes.make(note)
    (memory / "python" / "mine.md").write_text("# Mine\n\nMine.\n", encoding="utf-8")
    report = make_workflow().add(text=topic_document({"rust": 3}))
    assert said(rel, "a named pipe (FIFO)") in report.warnings
    assert git(memory, "show", f"HEAD:{rel}") == before
    assert "python/mine.md" in committed(memory) and (memory / "rust").is_dir()
    assert not pipes.opened


def test_a_socket_among_the_notes_is_left_out(make_workflow, memory: Path) -> None:
    path = memory / "python" / "s.md"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        report = make_workflow().add(text=topic_document({"rust": 3}))
    finally:
        server.close()
    assert said("python/s.md", "a socket") in report.warnings
    assert "python/s.md" not in committed(memory) and (memory / "rust").is_dir()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="mknod needs root")
def test_a_device_among_the_notes_is_left_out(make_workflow, memory: Path) -> None:
    import stat

    os.mknod(memory / "python" / "zero.md", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    report = make_workflow().add(text=topic_document({"rust": 3}))
    assert said("python/zero.md", "a device") in report.warnings
    assert "python/zero.md" not in committed(memory) and (memory / "rust").is_dir()


def test_the_watchers_recording_commits_the_rest_and_names_the_pipe(
    make_workflow, memory: Path, pipes: PipeWatch
) -> None:
    """As the watcher calls it with the paths it saw: a pipe made and a note written."""
    pipes.make(memory / "python" / "x.md")
    note = a_note(memory)
    note.write_text(note.read_text(encoding="utf-8") + "\nEdited by hand.\n", encoding="utf-8")
    rel = note.relative_to(memory).as_posix()
    workflow = make_workflow()
    recorded = workflow.versioned.commit_manual_edits(["python/x.md", rel])
    assert recorded.commit is not None
    assert recorded.outside == [rel]
    assert recorded.left_out == [said("python/x.md", "a named pipe (FIFO)")]
    assert "Edited by hand." in git(memory, "show", f"HEAD:{rel}")
    assert git(memory, "status", "--porcelain") == ""
    # A note replaced by a pipe: git lists it, nothing is committed, it is said again.
    note.unlink()
    pipes.make(note)
    again = workflow.versioned.commit_manual_edits([rel])
    assert again.commit is None and again.outside == []
    assert again.left_out == [said(rel, "a named pipe (FIFO)")]
    assert not pipes.opened


def test_the_watcher_records_the_rest_while_a_pipe_is_made(
    make_workflow, memory: Path, pipes: PipeWatch
) -> None:
    """The real watcher (inotify): a pipe saved by another program, then a note edited;
    the edit is committed as before, and history stays on."""
    workflow = make_workflow()
    edits: list[OutsideEdit] = []
    watcher = workflow.watch(edits.append)
    try:
        pipes.make(memory / "python" / "x.md")
        note = a_note(memory)
        note.write_text(note.read_text(encoding="utf-8") + "\nBy hand.\n", encoding="utf-8")
        rel = note.relative_to(memory).as_posix()
        assert wait_for(lambda: any(e.commit and rel in e.paths for e in edits), seconds=60)
    finally:
        watcher.stop()
    assert workflow.history_message is None
    assert "By hand." in git(memory, "show", f"HEAD:{rel}")
    assert "python/x.md" not in committed(memory)
    assert not pipes.opened
    told = [line for e in edits for line in e.left_out]  # what the window shows
    assert told and "python/x.md is a named pipe" in told[0], edits


def test_special_files_are_listed_and_a_hidden_pipe_is_still_refused(
    memory: Path, pipes: PipeWatch
) -> None:
    pipes.make(memory / "python" / "b.md")
    pipes.make(memory / "a.txt")
    assert special_files(memory) == [
        ("a.txt", "a named pipe (FIFO)"),
        ("python/b.md", "a named pipe (FIFO)"),
    ]
    pipes.make(memory / "python" / ".hidden.md")
    with pytest.raises(UnsafeRepositoryError, match=r"hidden\.md.*named pipe"):
        special_files(memory)
