"""A memory whose `.gam/lock` is a link (issue 36, section 2, "also seen"): the raw "Too many
levels of symbolic links" named nothing to do. The lock is never taken through a link (an
older filelock opened it following the link, truncating or creating its target): a clear
message names the file and says what to do, and the link's target is never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gam_desktop.engine.store import lock as lock_module
from gam_desktop.engine.store.folder import LOCK_FILE, MemoryFolder
from gam_desktop.engine.store.lock import writer_lock
from tests.clirun import run_cli
from tests.documents import topic_document

pytestmark = pytest.mark.posix_only("symbolic links without privileges")


def linked_lock(root: Path, target: Path) -> Path:
    (root / ".gam").mkdir(parents=True, exist_ok=True)
    link = root / LOCK_FILE
    link.symlink_to(target)
    return link


def assert_clear(message: str, link: Path) -> None:
    assert "Too many levels" not in message
    assert str(link) in message
    assert "is a link" in message and "Delete the link" in message


def test_a_lock_linked_to_a_file_elsewhere_is_refused_and_the_file_untouched(
    tmp_path: Path,
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's own file\n")
    link = linked_lock(tmp_path / "memory", precious)
    with pytest.raises(OSError) as refused, writer_lock(MemoryFolder(link.parent.parent), 1):
        pass
    assert_clear(str(refused.value), link)
    assert str(precious) in str(refused.value)  # where it leads
    assert precious.read_text() == "the user's own file\n"
    assert link.is_symlink()  # not the app's to remove


def test_a_lock_linked_to_itself_says_what_to_do(tmp_path: Path) -> None:
    link = linked_lock(tmp_path / "memory", Path("lock"))  # a loop
    with pytest.raises(OSError) as refused, writer_lock(MemoryFolder(tmp_path / "memory"), 1):
        pass
    assert_clear(str(refused.value), link)


def test_a_dangling_lock_link_creates_nothing(tmp_path: Path) -> None:
    nowhere = tmp_path / "elsewhere" / "made-by-the-lock"
    nowhere.parent.mkdir()
    link = linked_lock(tmp_path / "memory", nowhere)
    with pytest.raises(OSError) as refused, writer_lock(MemoryFolder(tmp_path / "memory"), 1):
        pass
    assert_clear(str(refused.value), link)
    assert not nowhere.exists()


def test_a_link_made_between_the_check_and_the_open_is_told_as_well(
    tmp_path: Path, monkeypatch
) -> None:
    memory = tmp_path / "memory"
    link = linked_lock(memory, Path("lock"))
    monkeypatch.setattr(lock_module, "_check_lock_file", lambda path: None)
    with pytest.raises(OSError) as refused, writer_lock(MemoryFolder(memory), 1):
        pass  # a loop: every filelock's open fails with ELOOP
    assert_clear(str(refused.value), link)


def test_a_folder_at_the_lock_path_says_what_to_do(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    (memory / LOCK_FILE).mkdir(parents=True)
    with pytest.raises(OSError) as refused, writer_lock(MemoryFolder(memory), 1):
        pass
    message = str(refused.value)
    assert str(memory / LOCK_FILE) in message and "not a plain file" in message


def test_gam_add_with_a_linked_lock_prints_one_clear_line(tmp_path: Path, llm_server) -> None:
    memory = tmp_path / "memory"
    built = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"python": 3}), "-q"],
        llm_server.base_url,
    )
    assert built.returncode == 0, built.stderr
    (memory / LOCK_FILE).unlink(missing_ok=True)
    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n")
    link = linked_lock(memory, precious)
    asked = len(llm_server.state.requests)
    added = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
    )
    assert added.returncode == 1
    assert len(llm_server.state.requests) == asked  # said before any LLM call is paid for
    assert added.stderr.count("\n") == 1, added.stderr
    assert_clear(added.stderr, link)
    assert precious.read_text() == "mine\n"
    os.unlink(link)  # doing what it says works
    again = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
    )
    assert again.returncode == 0, again.stderr
