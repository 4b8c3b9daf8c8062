"""A file of a dropped folder swapped for a link between the walk that approved it and the
read (issue 36, third adversarial pass): another program (an archive still unpacking, a
synced folder) replaces `paper.txt` by `paper.txt -> ~/.ssh/id_rsa`, or a subfolder by a
link to another folder. The walk leaves links out of the folder out; the read used to
follow the new link, and the secret went to the LLM and into the memory. What is read must
be the file the walk found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.documents import DocumentError, files_in, load_file

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not for the LLM\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / ".ssh"
    folder.mkdir(parents=True)
    (folder / "paper.txt").write_text(SECRET)
    return folder / "paper.txt"


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read(tmp_path: Path, secret: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "paper.txt").write_text("A paper about otters.\n")
    found, _ = files_in(drop)
    (drop / "paper.txt").unlink()
    os.symlink(secret, drop / "paper.txt")  # between the walk and the read
    with pytest.raises(DocumentError) as refused:
        load_file(found[0])
    assert str(refused.value) == (
        "paper.txt: replaced since its folder was read (by a link, or another file); nothing"
        " of it was read: add it again"
    )


def test_a_folder_swapped_for_a_link_after_the_walk_is_not_read(
    tmp_path: Path, secret: Path
) -> None:
    drop = tmp_path / "drop"
    (drop / "papers").mkdir(parents=True)
    (drop / "papers" / "paper.txt").write_text("A paper about otters.\n")
    found, _ = files_in(drop)
    (drop / "papers" / "paper.txt").unlink()
    (drop / "papers").rmdir()
    os.symlink(secret.parent, drop / "papers")  # the same name, in another folder
    with pytest.raises(DocumentError, match="replaced since its folder was read"):
        load_file(found[0])


def test_files_as_the_walk_found_them_are_read(tmp_path: Path, secret: Path) -> None:
    """Edited in place, linked within the folder, or named by the person (a link of their
    own): read as before."""
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "paper.txt").write_text("A paper about otters.\n")
    (drop / "notes.md").write_text("Notes on beavers.\n")
    os.symlink(drop / "notes.md", drop / "same-notes.md")  # a link inside the folder
    found, _ = files_in(drop)
    (drop / "paper.txt").write_text("A paper about sea otters.\n")  # the same file, edited
    assert [load_file(path).text for path in found] == [
        "Notes on beavers.\n",
        "A paper about sea otters.\n",
        "Notes on beavers.\n",
    ]
    mine = tmp_path / "mine.txt"
    os.symlink(secret, mine)  # named by the person: theirs to add
    assert load_file(mine).text == SECRET
