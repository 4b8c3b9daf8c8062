"""A memory's repository is untrusted ground (the folder may arrive as a zip or through a
synced folder, its .git/config too): a `.git` that leads out of the memory is refused and
nothing is committed through it; a named pipe where git or the app reads a file (a rules
file, HEAD, a file the config includes) is refused, naming it, instead of hanging forever.

The named pipes are watched by a thread that opens each one for writing without waiting:
a reader that came (the bug) gets an empty file at once and is recorded, so a test fails
instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gam_desktop.engine.history.gitrepo import MemoryRepo, UnsafeHistory
from gam_desktop.engine.store.gitdir import UnsafeRepositoryError
from tests.documents import topic_document
from tests.repos import git, user_repo

pytestmark = pytest.mark.posix_only("builds its cases with symbolic links and named pipes")


class PipeWatch:
    """Named pipes made for a test; any process that opens one to read is let through
    (an empty file) and recorded in `opened`."""

    def __init__(self) -> None:
        self.pipes: list[Path] = []
        self.opened: set[Path] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def make(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        self.pipes.append(path)
        return path

    def _serve(self) -> None:
        while not self._stop.is_set():
            for pipe in list(self.pipes):
                try:  # succeeds only while a reader waits in open(); never blocks
                    fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    continue
                self.opened.add(pipe)
                os.close(fd)  # the reader reads an empty file
            self._stop.wait(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def pipes() -> Iterator[PipeWatch]:
    watch = PipeWatch()
    yield watch
    watch.stop()


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Another project of the user's, beside the memory, with its own history."""
    return user_repo(tmp_path / "victim", {"precious.txt": "the user's own project\n"})


@pytest.fixture
def memory(make_workflow, memory_dir: Path) -> Path:
    make_workflow().add(text=topic_document({"python": 3}))
    return memory_dir


def _git_file(memory: Path, victim: Path) -> None:
    _remove_git(memory)
    (memory / ".git").write_text(f"gitdir: {os.path.relpath(victim / '.git', memory)}\n")


def _git_link(memory: Path, victim: Path) -> None:
    _remove_git(memory)
    (memory / ".git").symlink_to(os.path.relpath(victim / ".git", memory))


def _refs_link(memory: Path, victim: Path) -> None:
    """The memory's own .git, its branches a link to the other repository's."""
    git(memory, "pack-refs", "--all")  # its branch now lives in packed-refs alone
    heads = memory / ".git" / "refs" / "heads"
    heads.rmdir()
    heads.symlink_to(victim / ".git" / "refs" / "heads")
    (memory / ".git" / "packed-refs").unlink()


def _commondir(memory: Path, victim: Path) -> None:
    (memory / ".git" / "commondir").write_text(f"{victim / '.git'}\n")


def _remove_git(memory: Path) -> None:
    shutil.rmtree(memory / ".git")


@pytest.mark.parametrize("lead_out", [_git_file, _git_link, _refs_link, _commondir])
def test_a_git_leading_out_of_the_memory_is_refused_and_never_written(
    make_workflow, memory: Path, victim: Path, lead_out: Callable[[Path, Path], None]
) -> None:
    head = git(victim, "rev-parse", "HEAD")
    branches = sorted(p.name for p in (victim / ".git" / "refs" / "heads").iterdir())
    lead_out(memory, victim)
    workflow = make_workflow()
    with pytest.raises(UnsafeRepositoryError, match="nothing is written to this memory"):
        workflow.add(text=topic_document({"rust": 3}))
    assert workflow.history is None  # nor read: history is off, and says why
    assert "History is off for this memory" in (workflow.history_message or "")
    assert git(victim, "rev-parse", "HEAD") == head
    assert sorted(p.name for p in (victim / ".git" / "refs" / "heads").iterdir()) == branches
    assert git(victim, "status", "--porcelain") == ""
    assert not (memory / "rust").exists()  # nothing written to the memory either


@pytest.mark.parametrize(
    "where",
    [".gitignore", "python/.gitignore", ".gitattributes", ".git/info/exclude", ".git/HEAD"],
)
def test_a_named_pipe_git_would_read_is_refused_by_name(
    make_workflow, memory: Path, pipes: PipeWatch, where: str
) -> None:
    pipe = pipes.make(memory / where)
    workflow = make_workflow()
    with pytest.raises(UnsafeRepositoryError, match=f"{pipe}.*named pipe"):
        workflow.add(text=topic_document({"rust": 3}))
    reading = make_workflow()
    assert reading.history is None and str(pipe) in (reading.history_message or "")
    assert not pipes.opened


def test_a_nested_repositorys_head_as_a_named_pipe_is_refused(
    make_workflow, memory: Path, pipes: PipeWatch
) -> None:
    """git status looks into an untracked folder holding a repository (reading its HEAD)."""
    nested = memory / "python" / "vendored"
    git(memory, "init", "-q", str(nested))
    pipe = pipes.make(nested / ".git" / "HEAD")
    with pytest.raises(UnsafeRepositoryError, match=str(pipe)):
        make_workflow().add(text=topic_document({"rust": 3}))
    assert not pipes.opened


def test_a_config_including_a_named_pipe_is_refused_by_name(
    make_workflow, memory: Path, pipes: PipeWatch, tmp_path: Path
) -> None:
    outside = pipes.make(tmp_path / "elsewhere" / "extra.cfg")
    (tmp_path / "elsewhere" / "chain.cfg").write_text(f"[include]\n\tpath = {outside}\n")
    git(memory, "config", "includeIf.onbranch:nothing.path", "../../elsewhere/chain.cfg")
    workflow = make_workflow()
    with pytest.raises(UnsafeRepositoryError, match=f"{outside}.*named pipe"):
        workflow.add(text=topic_document({"rust": 3}))
    assert workflow.history is None and str(outside) in (workflow.history_message or "")
    with pytest.raises(UnsafeHistory):
        MemoryRepo.open(memory)
    assert not pipes.opened


@pytest.mark.parametrize("key", ["core.excludesFile", "core.attributesFile"])
def test_config_keys_naming_a_file_outside_the_memory_are_not_read(
    make_workflow, memory: Path, pipes: PipeWatch, tmp_path: Path, key: str
) -> None:
    outside = pipes.make(tmp_path / "elsewhere" / "rules")
    git(memory, "config", key, str(outside))
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))  # history works, the file is never read
    operations = workflow.history.operations()
    workflow.history.diff(operations[0].sha, workflow.history.changes(operations[0].sha)[0].path)
    assert (memory / "rust").is_dir() and len(operations) == 2
    assert not pipes.opened


def test_an_ordinary_memory_is_not_refused(make_workflow, memory: Path) -> None:
    """Links that stay inside, rules files of the person's, a nested repository: as before."""
    (memory / ".gitignore").write_text("*.tmp\n")
    (memory / "python" / ".gitattributes").write_text("*.md text\n")
    (memory / "shortcut.md").symlink_to(next((memory / "python").glob("*.md")))
    git(memory, "init", "-q", str(memory / "python" / "vendored"))
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))
    assert workflow.history is not None and len(workflow.history.operations()) >= 2
