"""A reorganization's plan handed to `Workflow.reorganize(plan=…)` is checked as the LLM's
plans are (issue 36): a hand-made (or tampered) plan that moves a memory into `.git/hooks`,
`.gam`, an absolute path, up with `..` or through a link out of the memory is refused with
a clear error before anything is written, and no hook is ever installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.ingest.reorganize import ReorganizeError
from gam_desktop.engine.models import ReorganizeOperation
from gam_desktop.engine.store.markdown import README
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.repos import git


@pytest.fixture
def memory(make_workflow, memory_dir: Path):
    workflow = make_workflow(min_tokens=20, max_tokens=200, threshold=50)
    workflow.add(text=topic_document({"python": 3, "rust": 3}))
    return workflow


def a_memory(root: Path) -> str:
    """One memory of the folder, as a plan names it."""
    found = sorted(p for p in root.rglob("*.md") if p.name != README and ".gam" not in p.parts)
    return found[0].relative_to(root).as_posix()


def folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def refused(workflow, plan: ReorganizeOperation, match: str) -> None:
    """The plan is refused, and the memory (files, history, hooks) is exactly as it was."""
    root = workflow.folder.root
    before, head = tree(root), git(root, "rev-parse", "HEAD").strip()
    hooks = sorted(p.name for p in (root / ".git" / "hooks").iterdir())
    with pytest.raises(ReorganizeError, match=match):
        workflow.reorganize(plan=plan)
    assert not (root / ".git" / "hooks" / "post-commit").exists()
    assert sorted(p.name for p in (root / ".git" / "hooks").iterdir()) == hooks
    assert tree(root) == before
    assert git(root, "rev-parse", "HEAD").strip() == head
    assert workflow.interrupted() is None  # refused before it wrote: nothing to recover


@pytest.mark.parametrize(
    "target",
    [
        ".git/hooks/post-commit",
        ".GIT/hooks/post-commit",  # a case-insensitive file system reads it as .git
        ".git./hooks/post-commit",  # Windows drops the trailing dot
        ".gam/sources/x.md",
        "/tmp/escaped.md",
        "../escaped.md",
        "python/../../escaped.md",
        "python/./x.md",
        "python//x.md",
        "C:/escaped.md",
        "..\\escaped.md",  # a separator on Windows
        "facts/x.md",  # the user's own folders are never a document folder
    ],
)
def test_a_move_out_of_the_document_tree_is_refused(memory, target: str) -> None:
    """With its folders among the plan's new ones, as a crafted plan would have them."""
    source = a_memory(memory.folder.root)
    parents = target.replace("\\", "/").split("/")[:-1]
    made = ["/".join(parents[: i + 1]) for i in range(len(parents)) if parents[i]]
    plan = ReorganizeOperation(
        directory=folder_of(source), new_directories=made, moved_files=[(source, target)]
    )
    refused(memory, plan, "cannot be applied")


def test_a_new_folder_inside_git_is_refused(memory) -> None:
    """A plan's new folders get a README each: `.git/hooks` would get one written."""
    source = a_memory(memory.folder.root)
    plan = ReorganizeOperation(
        directory=folder_of(source),
        new_directories=[".git", ".git/hooks"],
        descriptions={".git/hooks": "hooks"},
        moved_files=[(source, ".git/hooks/post-commit.md")],
    )
    refused(memory, plan, r"\.git")


def test_a_plan_for_a_directory_inside_git_is_refused(memory) -> None:
    plan = ReorganizeOperation(directory=".git", moved_files=[(".git/config", "x/config.md")])
    refused(memory, plan, "cannot be applied")


def test_a_move_that_is_not_a_memory_is_refused(memory) -> None:
    """Only memories move: never a README, never onto a name that is not a memory's."""
    source = a_memory(memory.folder.root)
    folder = folder_of(source)
    readme = f"{folder}/{README}" if folder else README
    onto_readme = ReorganizeOperation(directory=folder, moved_files=[(source, readme)])
    refused(memory, onto_readme, "cannot be applied")
    not_md = ReorganizeOperation(directory=folder, moved_files=[(source, f"{folder}/x.sh")])
    refused(memory, not_md, "cannot be applied")


def test_a_move_through_a_link_is_refused(memory, tmp_path: Path) -> None:
    root = memory.folder.root
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "away").symlink_to(outside)  # a folder link out of the memory
    (root / "hooks").symlink_to(root / ".git" / "hooks")  # a link inside, into .git
    source = a_memory(root)
    for target in ("away/x.md", "hooks/post-commit.md"):
        plan = ReorganizeOperation(directory=folder_of(source), moved_files=[(source, target)])
        refused(memory, plan, "link")
    assert list(outside.iterdir()) == []


def test_a_plan_within_the_memory_is_still_applied(memory) -> None:
    """The check refuses nothing a real plan holds: a hand-made move into a new folder."""
    root = memory.folder.root
    source = a_memory(root)
    folder = folder_of(source)
    new = f"{folder}/mine" if folder else "mine"
    plan = ReorganizeOperation(
        directory=folder,
        new_directories=[new],
        descriptions={new: "Mine."},
        moved_files=[(source, f"{new}/moved.md")],
    )
    memory.reorganize(plan=plan)
    assert (root / new / "moved.md").is_file() and not (root / source).exists()
