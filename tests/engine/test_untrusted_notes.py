"""Notes of an untrusted memory (a zip, a synced folder): a front matter of aliases that
expands to gigabytes is a damaged note, not a crash; a note's original text never comes
through a link into .git/ or .gam/."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.workflow import front_matter_problems
from tests.documents import topic_document
from tests.repos import git


def alias_bomb(levels: int) -> str:
    """Nine-fold nested aliases: `levels` levels stand for 9**levels strings."""
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    names = "abcdefghijklmnop"
    for before, name in itertools.pairwise(names[:levels]):
        text += f"{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]\n"
    last = names[levels - 1]
    return f"---\n{text}title: *{last}\ntldr: *{last}\n---\n\nA note.\n"


def merge_bomb(levels: int) -> str:
    """Merge keys (`<<`) expand while the value is built, before anything prints it."""
    text = "a: &a {x: 1, y: 2}\n"
    names = "abcdefghijklmnop"
    for before, name in itertools.pairwise(names[:levels]):
        text += f"{name}: &{name}\n" + "".join(f"  - <<: *{before}\n" for _ in range(9))
    return f"---\n{text}title: t\n---\n\nA note.\n"


@pytest.mark.parametrize(
    "text",
    [
        alias_bomb(6),  # half a million strings from 600 bytes
        merge_bomb(6),
        "---\nloop: &r [1, *r]\ntitle: t\n---\n\nA note.\n",  # an alias of itself
        "---\ntitle: " + "[" * 20_000 + "\n---\n\nA note.\n",  # nested past the stack
    ],
    ids=["aliases", "merge-keys", "recursive", "deep"],
)
def test_a_front_matter_too_large_once_expanded_is_a_problem_not_a_value(text: str) -> None:
    parsed = parse_memory(text)
    assert parsed.front == {} and parsed.body == "A note."
    assert parsed.problem and "too large or nested too deeply" in parsed.problem


def test_aliases_that_stay_small_still_read() -> None:
    parsed = parse_memory("---\ntitle: x\nspan: &s [0, 3]\nalso: [*s, *s]\n---\n\nBody.\n")
    assert parsed.problem is None and parsed.front["also"] == [[0, 3], [0, 3]]


def test_an_add_beside_a_bomb_note_finishes_and_names_the_note(
    make_workflow, memory_dir: Path
) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    folder = next(p for p in memory_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    (folder / "bomb.md").write_text(alias_bomb(6))  # 4 MB printed (nine levels: 15 GB)
    workflow.add(text=topic_document({"python": 2, "rust": 2}))
    readmes = "".join(p.read_text() for p in memory_dir.rglob("README.md"))
    assert "lol" not in readmes  # the note's tldr is its first line, not the expansion
    problems = front_matter_problems(MemoryFolder(memory_dir), [f"{folder.name}/bomb.md"])
    assert problems and "too large" in problems[0]


@pytest.mark.posix_only("builds its case with a symbolic link")
def test_an_original_text_linked_into_git_is_absent(make_workflow, memory_dir: Path) -> None:
    """`.gam/sources/<hash>.txt -> ../../.git/config` and a note naming that hash: the
    agent's `cat` with original=true would read the remote's token to the model."""
    make_workflow().add(text=topic_document({"python": 3}))
    git(memory_dir, "config", "remote.origin.url", "https://me:TOKEN-5@example.com/m.git")
    digest = "a" * 64
    (memory_dir / ".gam" / "sources" / f"{digest}.txt").symlink_to(Path("../../.git/config"))
    front = f"---\ntitle: evil\nsource: x.md\nsource_hash: {digest}\nspan: [0, 100000]\n---\n"
    (memory_dir / "evil.md").write_text(front + "\nA note.\n")
    result = MemoryTools(memory_dir).run("cat", {"file": "evil.md", "original": True})
    assert "TOKEN-5" not in result.text and result.error
    folder = MemoryFolder(memory_dir)
    assert not folder.readable(memory_dir / ".gam" / "sources" / f"{digest}.txt")
    own = next(p for p in (memory_dir / ".gam" / "sources").iterdir() if not p.is_symlink())
    assert folder.readable(own)  # the app's own originals, read as before


def test_a_source_hash_naming_another_file_is_no_original(tmp_path: Path) -> None:
    (tmp_path / ".gam" / "sources").mkdir(parents=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "private.txt").write_text("not a source")
    front = {"source_hash": "../../notes/private", "span": [0, 100]}
    assert MemoryFolder(tmp_path).original_text(front) is None
