"""Where a memory may live (issue 13): the home folder, a drive root, system folders and a
folder inside another memory or a git repository are refused, with a reason; a new memory
needs a usable name and a free place. The checks only read: nothing is made on disk.

Path.home is a folder of the test's own: these tests never look at the real home folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.store.location import (
    DEFAULT_NAME,
    bad_name,
    cannot_create,
    free_name,
    holds_files,
    unsuitable,
    user_content,
)
from gam_desktop.engine.workflow import foreign_content
from tests.places import git_init, listing
from tests.repos import user_repo

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX system folders")
SYSTEM_FOLDERS = ["/usr", "/etc", "/bin", "/tmp", "/var", "/run", "/proc", "/dev/shm", "/System"]


@pytest.fixture(params=["not mounted", "mounted"])
def mounts(request, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Which folders are mount points: none, or the system folders a distribution mounts
    (tmpfs /tmp on Fedora and Arch, /run, /proc, /dev/shm, a /var or /usr partition). The answer
    must not depend on the machine the tests run on."""
    mounted = (
        {"/tmp", "/run", "/proc", "/dev/shm", "/var", "/usr"}
        if request.param == "mounted"
        else set()
    )
    monkeypatch.setattr(os.path, "ismount", lambda path: os.fspath(path) in mounted)
    return mounted


def make_memory(folder: Path) -> Path:
    git_init(folder)
    (folder / META_FILE).write_text('{"schema_version": 1}\n', encoding="utf-8")
    return folder


def test_a_folder_inside_the_home_folder_is_fine(home: Path) -> None:
    assert unsuitable(home / "GAM Memory") is None  # absent: made once confirmed
    (home / "Notes").mkdir()
    assert unsuitable(home / "Notes") is None
    assert unsuitable(home / "Documents" / "deep" / "memory") is None


def test_the_home_folder_is_refused_with_its_reason(home: Path) -> None:
    reason = unsuitable(home)
    assert reason is not None and "home folder" in reason
    assert unsuitable(home / ".." / home.name) == reason  # the same folder, spelled otherwise


def test_the_folders_holding_the_home_folder_are_refused(home: Path) -> None:
    reason = unsuitable(home.parent)
    assert reason is not None and "holds your home folder" in reason


def test_the_home_folder_is_refused_whatever_the_case_it_is_typed_in(home: Path) -> None:
    # macOS and Windows ignore case: /users/ada is /Users/ada there. The comparison ignores
    # it as the system folders' does (on every platform: refusing too much is harmless).
    typed = home.parent / home.name.upper()
    reason = unsuitable(typed)
    assert reason is not None and "your home folder" in reason
    holding = home.parent.parent / home.parent.name.upper()
    reason = unsuitable(holding)
    assert reason is not None and "holds your home folder" in reason
    assert unsuitable(home.parent / "ADA2") is None  # another folder, whatever the case


@posix_only
def test_the_root_is_refused_as_a_drive_root(home: Path) -> None:
    reason = unsuitable(Path("/"))
    assert reason is not None and "root of a drive" in reason


@posix_only
@pytest.mark.parametrize("folder", SYSTEM_FOLDERS)
def test_system_folders_are_refused(home: Path, mounts: set[str], folder: str) -> None:
    reason = unsuitable(Path(folder))
    assert reason is not None and "system folder" in reason  # mounted or not
    assert "root of a drive" not in reason


@posix_only
def test_a_mounted_folder_outside_the_system_folders_is_a_drive_root(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usb, data = Path("/run/media/ada/USB"), home / "data"  # udisks2's mount, a mounted folder
    data.mkdir()
    mounted = {str(usb), str(data.resolve())}
    monkeypatch.setattr(os.path, "ismount", lambda path: os.fspath(path) in mounted)
    is_dir = Path.is_dir
    monkeypatch.setattr(Path, "is_dir", lambda path: path == usb or is_dir(path))  # plugged in
    for drive in (usb, data):
        reason = unsuitable(drive)
        assert reason is not None and "root of a drive" in reason
    assert unsuitable(usb / "memory") is None


@posix_only
@pytest.mark.parametrize("folder", ["/usr/share/gam", "/etc/memory", "/Applications/Notes"])
def test_folders_inside_the_systems_own_trees_are_refused(
    home: Path, mounts: set[str], folder: str
) -> None:
    reason = unsuitable(Path(folder))
    assert reason is not None and "system folder" in reason and "inside" in reason


@posix_only
def test_a_link_is_judged_by_where_it_leads(home: Path, mounts: set[str]) -> None:
    (home / "looks-harmless").symlink_to("/usr")
    reason = unsuitable(home / "looks-harmless")
    assert reason is not None and "system folder" in reason


@posix_only
def test_scratch_folders_refuse_themselves_but_not_what_is_inside(
    home: Path, mounts: set[str]
) -> None:
    assert unsuitable(Path("/tmp")) is not None
    assert unsuitable(Path("/mnt/data/memory")) is None  # a data drive's folder
    assert unsuitable(Path("/run/media/ada/USB/memory")) is None  # udisks2's mounts


def test_a_folder_inside_another_memory_is_refused(home: Path) -> None:
    memory = make_memory(home / "Work memory")
    for inside in (memory / "notes", memory / "a" / "b" / "c"):
        reason = unsuitable(inside)
        assert reason is not None and "inside the memory" in reason and str(memory) in reason
    assert unsuitable(home / "Other") is None


def test_a_folder_inside_a_git_repository_is_refused(home: Path) -> None:
    repository = git_init(home / "code" / "project")
    for inside in (repository / "memory", repository / "docs" / "memory"):
        reason = unsuitable(inside)
        assert reason is not None and "git repository" in reason and str(repository) in reason
    assert unsuitable(home / "code" / "memory") is None  # beside the repository: fine


def test_a_worktree_or_submodule_git_file_counts_as_a_repository(home: Path) -> None:
    checkout = home / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text("gitdir: /elsewhere/.git/worktrees/checkout\n")
    reason = unsuitable(checkout / "memory")
    assert reason is not None and "git repository" in reason


@pytest.mark.parametrize(
    "name,words",
    [
        ("", "Type a name"),
        ("   ", "Type a name"),
        ("..", "Type a name"),
        ("a/b", "cannot contain"),
        ("a\\b", "cannot contain"),
        ("what?", "cannot contain"),
        (".hidden", "start with a dot"),
        ("notes.", "end with a dot"),
        ("CON", "Windows keeps"),
        ("lpt1.txt", "Windows keeps"),
        ("x" * 300, "too long"),
    ],
)
def test_names_that_no_os_takes_are_refused(name: str, words: str) -> None:
    reason = bad_name(name)
    assert reason is not None and words in reason


@pytest.mark.parametrize("name", ["GAM Memory", "Recherche 2024", "メモ", "Ada's notes"])
def test_ordinary_names_are_fine(name: str) -> None:
    assert bad_name(name) is None


def test_a_new_memory_in_a_free_place_is_fine_and_nothing_is_made(home: Path) -> None:
    before = listing(home)
    assert cannot_create(home, "GAM Memory") is None
    (home / "Empty").mkdir()
    (home / "Empty" / ".DS_Store").write_bytes(b"")
    assert cannot_create(home, "Empty") is None  # an empty folder is used as it is
    assert listing(home) == sorted([*before, "Empty", "Empty/.DS_Store"])
    assert not (home / "GAM Memory").exists()


def test_a_new_memory_refuses_what_the_place_already_holds(home: Path) -> None:
    (home / "taxes").mkdir()
    (home / "taxes" / "2024.xlsx").write_bytes(b"PK")
    (home / "notes.txt").write_text("x")
    make_memory(home / "Work")
    assert "already there and holds files" in (cannot_create(home, "taxes") or "")
    assert "already a file" in (cannot_create(home, "notes.txt") or "")
    assert "already a memory" in (cannot_create(home, "Work") or "")


def test_a_new_memory_needs_an_existing_location(home: Path) -> None:
    assert "no folder" in (cannot_create(home / "missing", "Memory") or "")
    (home / "file").write_text("x")
    assert "not a folder" in (cannot_create(home / "file", "Memory") or "")
    assert "full path" in (cannot_create(Path("relative"), "Memory") or "")


def test_a_new_memory_applies_the_place_rules_to_its_folder(home: Path) -> None:
    repository = git_init(home / "project")
    assert "home folder" in (cannot_create(home.parent, home.name) or "")
    assert "git repository" in (cannot_create(repository, "Memory") or "")
    assert "inside the memory" in (cannot_create(make_memory(home / "M"), "Sub") or "")


@posix_only
def test_a_new_memory_in_a_system_folder_is_refused(home: Path, mounts: set[str]) -> None:
    assert "system folder" in (cannot_create(Path("/"), "usr") or "")
    assert "system folder" in (cannot_create(Path("/usr"), "Memory") or "")
    assert "system folder" in (cannot_create(Path("/"), "tmp") or "")


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_a_location_that_cannot_be_written_is_refused(home: Path) -> None:
    locked = home / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert "cannot create folders" in (cannot_create(locked, "Memory") or "")
    finally:
        locked.chmod(0o755)


def test_the_suggested_name_is_the_first_free_one(home: Path) -> None:
    assert free_name(home) == DEFAULT_NAME
    make_memory(home / DEFAULT_NAME)
    (home / f"{DEFAULT_NAME} 2").mkdir()
    (home / f"{DEFAULT_NAME} 2" / "x.md").write_text("x")
    (home / f"{DEFAULT_NAME} 3").mkdir()  # empty: free
    assert free_name(home) == f"{DEFAULT_NAME} 3"


@pytest.mark.parametrize(
    "things,theirs",
    [
        ([], []),
        ([".DS_Store", "Thumbs.db", "desktop.ini"], []),  # what operating systems drop
        ([".gam/cache/index"], []),  # the app's private folder
        (["empty repository"], []),  # `git init` and nothing since
        (["repository with history"], [".git"]),
        ([".git file"], [".git"]),  # a worktree or a submodule
        ([".gam/cache/index", "empty repository", ".notes"], [".notes"]),  # a dotfile: theirs
        (["taxes/2024.xlsx", ".DS_Store"], ["taxes"]),
    ],
)
def test_one_rule_says_whether_a_folder_is_empty(
    home: Path, things: list[str], theirs: list[str]
) -> None:
    """The new-memory dialog (is this folder free?) and opening a folder (may it become a
    memory without asking?) apply the same rule: they used to disagree on .gam and on an
    empty repository."""
    folder = home / "folder"
    folder.mkdir()
    for thing in things:
        if thing == "empty repository":
            git_init(folder)
        elif thing == "repository with history":
            user_repo(folder, {"notes.txt": "mine"})
            (folder / "notes.txt").unlink()  # only the repository is left
        elif thing == ".git file":
            (folder / ".git").write_text("gitdir: /elsewhere/.git/worktrees/folder\n")
        else:
            (folder / thing).parent.mkdir(parents=True, exist_ok=True)
            (folder / thing).write_text("x")
    assert user_content(folder) == theirs
    assert foreign_content(folder) == theirs  # opening it: asked when it holds their things
    assert holds_files(folder) is bool(theirs)  # creating in it: refused when it holds some
    assert (cannot_create(home, "folder") is None) == (not theirs)
    assert (free_name(home, "folder") == "folder") == (not theirs)
