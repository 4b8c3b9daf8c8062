"""Links, odd paths and folders that are not empty: nothing leaks out, nothing is written out.

A link that leaves the memory is absent to every scan, read, commit and prompt; nothing
is written through a link; `$VARS` in a path are not expanded; a folder holding anything
of the user's (dotfiles, a git repository) is not taken over without consent.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.folder import MemoryFolder, NotAMemoryError
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.repos import git, user_repo

pytestmark = pytest.mark.posix_only(
    "builds its case with symbolic links, which Windows allows only with privileges"
)


SECRET = "root:x:0:0:TOP-SECRET-LINE"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the memory holding a secret file, as /etc would."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "passwd.md").write_text(SECRET + "\n")
    (folder / "README.md").write_text("# Elsewhere\n\nNot the memory's.\n")
    return folder


def everything_the_llm_saw(llm_server) -> str:
    return json.dumps([r["messages"] for r in llm_server.state.requests])


def test_a_file_link_out_is_never_read_committed_or_prompted(
    make_workflow, memory_dir: Path, outside: Path, llm_server
) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    (memory_dir / "passwd_link.md").symlink_to(outside / "passwd.md")
    (memory_dir / "python" / "also_link.md").symlink_to(outside / "passwd.md")
    workflow.add(text=topic_document({"rust": 3, "git": 3}))  # placement sees the root
    workflow.reorganize("")  # reorganize and describe prompts list the root
    answer = workflow.request("What is in passwd_link?")
    assert SECRET not in everything_the_llm_saw(llm_server)
    assert SECRET not in answer.answer and "passwd_link.md" not in answer.sources
    readmes = "".join(p.read_text() for p in memory_dir.rglob("README.md"))
    assert "passwd_link" not in readmes and "also_link" not in readmes
    assert SECRET not in git(memory_dir, "log", "-p", "--all")  # never committed
    tracked = git(memory_dir, "ls-files").split()
    assert "passwd_link.md" not in tracked and "python/also_link.md" not in tracked
    view = MemoryFolder(memory_dir).load_view()
    assert "passwd_link.md" not in view.files
    tools = MemoryTools(memory_dir)
    tools.corpus.refresh()
    assert "passwd_link.md" not in tools.corpus.files
    assert "passwd_link" not in tools.ls("/").text
    assert tools.run("cat", {"file": "passwd_link.md"}).error
    assert (outside / "passwd.md").read_text() == SECRET + "\n"  # and the target is intact


def test_a_folder_link_out_is_never_written_through(
    make_workflow, memory_dir: Path, outside: Path
) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    # The scripted model names folders after topics: "rust" is where rust memories go.
    (memory_dir / "rust").symlink_to(outside, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    head = git(memory_dir, "rev-parse", "HEAD")
    with pytest.raises(StoreError, match="'rust' is a link; nothing is written through links"):
        workflow.add(text=topic_document({"rust": 3}))
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before  # nothing out there
    assert git(memory_dir, "rev-parse", "HEAD") == head
    assert git(memory_dir, "status", "--porcelain") == "?? rust\n"  # the link: never staged
    (memory_dir / "rust").unlink()  # once the link is gone, the same add works
    assert len(workflow.add(text=topic_document({"rust": 3})).memories) == 3


def test_a_link_inside_the_memory_is_read_like_the_file(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    target = next((memory_dir / "python").glob("python_notes*.md"))
    (memory_dir / "shortcut.md").symlink_to(target)
    tools = MemoryTools(memory_dir)
    assert tools.run("cat", {"file": "shortcut.md"}).text == target.read_text()


def test_a_symlink_loop_is_skipped(make_workflow, memory_dir: Path, llm_server) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    (memory_dir / "loop_a.md").symlink_to(memory_dir / "loop_b.md")
    (memory_dir / "loop_b.md").symlink_to(memory_dir / "loop_a.md")
    (memory_dir / "python" / "self").symlink_to(memory_dir / "python" / "self")
    asked = run_cli(
        ["--gam-dir", str(memory_dir), "-Q", "What is loop_a?"],
        llm_server.base_url,
        entry="request_main",
    )
    assert asked.returncode == 0, asked.stderr
    assert "Traceback" not in asked.stderr
    tools = MemoryTools(memory_dir)
    for call in (("ls", {"path": "/"}), ("ls", {"path": "python"}), ("grep", {"pattern": "x"})):
        assert "loop" not in tools.run(*call).text
    assert tools.run("cat", {"file": "loop_a.md"}).error
    assert len(workflow.add(text=topic_document({"git": 3})).memories) == 3  # builds go on


def test_dollar_variables_in_the_path_are_not_expanded(
    llm_server, tmp_path: Path, monkeypatch
) -> None:
    victim = user_repo(tmp_path / "victim", {"keep.txt": "mine\n"})
    victim_head = git(victim, "rev-parse", "HEAD")
    env = {"GAM_VICTIM": "victim"}
    for name in ("$GAM_VICTIM", "notes $HOME"):
        memory = tmp_path / name
        out = run_cli(
            ["--gam-dir", str(memory), "--text", topic_document({"python": 3}), "-q"],
            llm_server.base_url,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        assert (memory / ".git").is_dir() and git(memory, "log", "--format=%s").strip()
        first = git(memory, "rev-list", "--max-parents=0", "HEAD").strip()
        rolled = run_cli(
            ["--gam-dir", str(memory), first], llm_server.base_url, env=env, entry="rollback_main"
        )
        assert rolled.returncode == 0, rolled.stderr
    assert git(victim, "rev-parse", "HEAD") == victim_head  # the other repository untouched
    assert (victim / "keep.txt").read_text() == "mine\n"


@pytest.mark.parametrize(
    ("names", "refused"),
    [
        ([".env"], True),
        ([".git-with-history"], True),
        ([".DS_Store"], False),
        ([".git-empty"], False),
    ],
)
def test_a_folder_with_anything_of_the_users_is_not_taken_over(
    make_workflow, memory_dir: Path, names: list[str], refused: bool
) -> None:
    memory_dir.mkdir()
    for name in names:
        if name == ".git-with-history":
            user_repo(memory_dir, {".gitignore": "*.bak\n"})
        elif name == ".git-empty":
            git(memory_dir, "init", "-q")
        else:
            (memory_dir / name).write_text("SECRET_TOKEN=abc\n")
    workflow = make_workflow()
    if not refused:
        assert len(workflow.add(text=topic_document({"python": 3})).memories) == 3
        return
    before = sorted(p.name for p in memory_dir.iterdir())
    with pytest.raises(NotAMemoryError, match="is not a GAM memory and is not empty"):
        workflow.add(text=topic_document({"python": 3}))
    assert sorted(p.name for p in memory_dir.iterdir()) == before  # not even a .git made


def test_ignored_files_of_the_user_are_never_committed(make_workflow, memory_dir: Path) -> None:
    memory_dir.mkdir()
    (memory_dir / ".gitignore").write_text(".env\n")
    (memory_dir / ".env").write_text("SECRET_TOKEN=abc\n")
    workflow = make_workflow()
    workflow.initialize()  # the user agreed to make this folder a memory
    workflow.add(text=topic_document({"python": 3}))
    (memory_dir / ".env").write_text("SECRET_TOKEN=changed\n")
    workflow.versioned.commit_manual_edits([".env"])
    workflow.add(text=topic_document({"rust": 3}))
    assert "SECRET_TOKEN" not in git(memory_dir, "log", "-p", "--all")


@pytest.mark.parametrize(("umask", "mode"), [("022", 0o644), ("027", 0o640)])
def test_files_are_written_with_the_users_umask(
    llm_server, tmp_path: Path, umask: str, mode: int
) -> None:
    memory = tmp_path / "memory"
    out = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"python": 3}), "-q"],
        llm_server.base_url,
        umask=umask,
    )
    assert out.returncode == 0, out.stderr
    written = [
        p for p in memory.rglob("*") if p.is_file() and ".git" not in p.relative_to(memory).parts
    ]
    assert written and {stat.S_IMODE(p.stat().st_mode) for p in written} == {mode}


def test_a_replaced_file_keeps_its_mode(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    readme = memory_dir / "README.md"
    os.chmod(readme, 0o600)  # the user made it private
    workflow.add(text=topic_document({"rust": 3}))
    assert stat.S_IMODE(readme.stat().st_mode) == 0o600


def test_a_source_linked_into_git_is_absent(make_workflow, memory_dir: Path, llm_server) -> None:
    """A file of .gam/sources that is a link into .git (the adversarial review's case: the
    originals are searched, quoted by a listing and sent to the model) reads as missing."""
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    (memory_dir / ".git" / "config").write_text(
        (memory_dir / ".git" / "config").read_text() + "\n[fog]\n\ttoken = GIT-SECRET-FOG\n"
    )
    sources = memory_dir / ".gam" / "sources"
    for source in sources.iterdir():
        source.unlink()
        source.symlink_to(Path("..") / ".." / ".git" / "config")
    tools = MemoryTools(memory_dir)
    memory = next(p for p in tools.corpus.snapshot() if not p.endswith("README.md"))
    assert "GIT-SECRET-FOG" not in tools.run("cat", {"file": memory, "original": True}).text
    assert "GIT-SECRET-FOG" not in tools.run("grep", {"pattern": "GIT-SECRET"}).text
    answer = workflow.request("Which documents mention the fog token?")
    assert "GIT-SECRET-FOG" not in answer.answer + everything_the_llm_saw(llm_server)
