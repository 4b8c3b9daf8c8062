"""A folder of the memory replaced by a link (moved away by another program, or linked to
.git): refused with the link named and what to do, before any LLM call when it was there
at the start, before anything is written when it appeared meanwhile; never git's raw
"Unable to process path" after the calls were paid for.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gam_desktop.engine.history.versioned import VersionedFolder
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.links import LinkedFolderError
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.engine.helpers import edit_during
from tests.repos import git

pytestmark = pytest.mark.posix_only(
    "builds its case with symbolic links, which Windows allows only with privileges"
)


def _swap_out(memory_dir: Path, name: str, outside: Path) -> Path:
    """Move the folder `name` out of the memory and leave a link to it in its place."""
    moved = outside / name
    shutil.move(str(memory_dir / name), moved)
    (memory_dir / name).symlink_to(moved, target_is_directory=True)
    return moved


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_folder_moved_out_and_linked_is_refused_before_any_llm_call(
    make_workflow, memory_dir: Path, tmp_path: Path, llm_server
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    outside = tmp_path / "outside"
    outside.mkdir()
    moved = _swap_out(memory_dir, "python", outside)
    before, head = _files(outside), git(memory_dir, "rev-parse", "HEAD")
    calls = len(llm_server.state.requests)
    with pytest.raises(LinkedFolderError) as refused:
        make_workflow().add(text=topic_document({"rust": 3}))
    said = refused.value.strerror
    assert said.startswith(f"'python/' is a link to {moved}")
    assert "Replace the link" in said and "or remove it" in said
    assert "Unable to process path" not in said
    assert len(llm_server.state.requests) == calls  # nothing paid for
    assert _files(outside) == before and git(memory_dir, "rev-parse", "HEAD") == head
    # Once the folder is back, the same add works.
    (memory_dir / "python").unlink()
    shutil.move(str(moved), memory_dir / "python")
    assert len(make_workflow().add(text=topic_document({"rust": 3})).memories) == 3


def test_a_folder_linked_to_git_during_an_add_is_named_before_anything_is_written(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    head = git(memory_dir, "rev-parse", "HEAD")
    git_files = {p.name for p in (memory_dir / ".git").iterdir()}

    def link_to_git() -> None:
        shutil.move(str(memory_dir / "python"), tmp_path / "python.moved")
        (memory_dir / "python").symlink_to(".git", target_is_directory=True)

    workflow = make_workflow(progress=edit_during("place", link_to_git))
    with pytest.raises(LinkedFolderError, match=r"'python/' is a link to \.git \(the memory's"):
        workflow.add(text=topic_document({"rust": 3}))
    assert git(memory_dir, "rev-parse", "HEAD") == head
    assert {p.name for p in (memory_dir / ".git").iterdir()} == git_files  # nothing put there
    assert not (memory_dir / ".gam" / "journal.json").exists()


def test_recording_outside_edits_names_the_linked_folder(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """The watcher's commit of a person's edits (no operation's preflight before it): git's
    failure on the link is said naming the link."""
    make_workflow().add(text=topic_document({"python": 3}))
    outside = tmp_path / "outside"
    outside.mkdir()
    _swap_out(memory_dir, "python", outside)
    versioned = VersionedFolder(MemoryFolder(memory_dir))
    with pytest.raises(LinkedFolderError, match=r"'python/' is a link to "):
        versioned.commit_manual_edits(["python"])


def test_the_cli_says_which_folder_is_a_link(
    make_workflow, memory_dir: Path, tmp_path: Path, llm_server
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    outside = tmp_path / "outside"
    outside.mkdir()
    _swap_out(memory_dir, "python", outside)
    out = run_cli(
        ["--gam-dir", str(memory_dir), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
    )
    assert out.returncode == 1
    assert "'python/' is a link to" in out.stderr and "Traceback" not in out.stderr
    assert "Unable to process path" not in out.stderr
