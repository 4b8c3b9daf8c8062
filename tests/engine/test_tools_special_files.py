"""The agent's tools and a named pipe, socket or device in a real memory (issue 36): `ls`
showed a pipe as a file of 0 bytes (and counted it in its folder), so the agent went to
read it. Only files and folders are listed now; and neither `ls`, `cat`, `grep` nor
`bm25_search` ever opens a pipe, even one put in a note's place after the search knew the
note as a file (opening one waits for a writer: the question would hang). The pipes are
watched by a thread that lets a reader through (an empty file) and records it, so a test
fails instead of hanging."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gam_desktop.engine.retrieval.tools import MemoryTools
from tests.documents import topic_document
from tests.engine.test_untrusted_repository import PipeWatch

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


def notes(memory: Path) -> list[Path]:
    return sorted(p for p in (memory / "python").glob("*.md") if p.name != "README.md")


def test_ls_lists_files_and_folders_only(memory: Path, pipes: PipeWatch) -> None:
    tools = MemoryTools(memory)
    before = {path: tools.run("ls", {"path": path}).text for path in ("/", "python")}
    pipes.make(memory / "python" / "pipe.md")
    pipes.make(memory / "pipe.md")
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(memory / "python" / "talk.sock"))
        for path, listing in before.items():
            result = tools.run("ls", {"path": path})
            assert not result.error
            assert result.text == listing  # as if they were not there: counts too
            assert "pipe.md" not in result.text and "talk.sock" not in result.text
    finally:
        listener.close()
    assert pipes.opened == set()


def test_no_tool_opens_a_pipe(memory: Path, pipes: PipeWatch) -> None:
    tools = MemoryTools(memory)
    word = notes(memory)[0].read_text().split()[-1]
    pipes.make(memory / "python" / "pipe.md")
    calls = [
        ("ls", {"path": "python"}),
        ("cat", {"file": "python/pipe.md"}),
        ("grep", {"pattern": word}),
        ("grep", {"pattern": word, "path": "python"}),
        ("grep", {"pattern": word, "path": "python/pipe.md"}),
        ("bm25_search", {"query": word}),
    ]
    for name, arguments in calls:
        result = tools.run(name, arguments)
        assert "python/pipe.md:" not in result.text, (name, result.text)
    assert tools.run("grep", {"pattern": word}).matched  # the notes are still found
    assert pipes.opened == set()


def test_a_note_swapped_for_a_pipe_after_the_walk_is_not_opened(
    memory: Path, pipes: PipeWatch
) -> None:
    """The search knows the note as a file (walked, its text not read yet); a watcher is on
    and has not reported the swap yet. grep and search skip it, without waiting."""
    tools = MemoryTools(memory)
    tools.corpus.watched = lambda: True  # no walk again until a change is reported
    tools.corpus.refresh()
    swapped, kept = notes(memory)[:2]
    word = kept.read_text().split()[-1]
    pipes.make(swapped)
    rel = swapped.relative_to(memory).as_posix()
    for name, arguments in [
        ("grep", {"pattern": word}),
        ("grep", {"pattern": word, "path": "python"}),
        ("bm25_search", {"query": word}),
    ]:
        result = tools.run(name, arguments)
        assert not result.error, result.text
        assert f"{rel}:" not in result.text
    assert pipes.opened == set()
    assert tools.run("cat", {"file": rel}).text == (
        f"error: '{rel}' is a named pipe (FIFO), not a file"
    )
    assert pipes.opened == set()


def test_cat_reads_a_regular_file_as_before(memory: Path) -> None:
    note = notes(memory)[0]
    rel = note.relative_to(memory).as_posix()
    assert MemoryTools(memory).run("cat", {"file": rel}).text == note.read_text()
