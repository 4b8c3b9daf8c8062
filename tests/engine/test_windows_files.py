"""What Windows and case-insensitive file systems do to the memory's files (issue 38),
simulated on Linux: Windows deletes no read-only file (Git for Windows' objects) and no file
another program holds open (PermissionError, WinError 32), and retries are for Windows only
(`os.name == "nt"`, seen by store.portable alone here: the rest of the process stays
POSIX); a case-insensitive file system (NTFS, APFS) reads `projects/x.md` as
`Projects/x.md`."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from gam_desktop.engine.history import held
from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.journal import Interrupted
from gam_desktop.engine.history.recovery import clear_git_leftovers, restore_last_saved
from gam_desktop.engine.store import portable
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.portable import HELD_PAUSES, FolderNotRemoved

pytestmark = pytest.mark.posix_only("simulates Windows on POSIX")


class _Windows:
    """os, as store.portable sees it on Windows: the same functions, another name."""

    name = "nt"

    def __getattr__(self, attribute: str):
        return getattr(os, attribute)


@pytest.fixture
def windows(monkeypatch) -> list[float]:
    """store.portable believes it runs on Windows; the pauses it would wait are recorded
    instead of waited (the list this returns)."""
    pauses: list[float] = []
    monkeypatch.setattr(portable, "os", _Windows())
    monkeypatch.setattr(portable, "_sleep", pauses.append)
    return pauses


def refuse(monkeypatch, refused) -> None:
    """os.unlink and os.remove fail as Windows' do for each file `refused(path)` says."""
    original = os.unlink

    def unlink(path, *, dir_fd=None):
        where = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        if refused(os.path.join(where, path), os.stat(path, dir_fd=dir_fd, follow_symlinks=False)):
            raise PermissionError(errno.EACCES, "Access is denied", str(path))
        return original(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "remove", unlink)


def read_only(_path: str, status: os.stat_result) -> bool:
    return not status.st_mode & stat.S_IWRITE


FIRST_BUILD = Interrupted(
    operation="build", started="", head=None, pid=0, new_repository=True, writes=["note.md"]
)


@pytest.fixture
def half_built(tmp_path: Path) -> tuple[MemoryFolder, MemoryRepo]:
    """A first build that died after git had written objects (read-only, as git makes
    them) and before its commit."""
    folder = MemoryFolder(tmp_path / "memory")
    folder.root.mkdir()
    repo = MemoryRepo.open(folder.root)
    (folder.root / "note.md").write_text("A memory the build wrote.\n")
    repo.git("add", "-A")
    objects = [p for p in (folder.root / ".git" / "objects").rglob("*") if p.is_file()]
    assert objects and all(not p.stat().st_mode & stat.S_IWRITE for p in objects)
    return folder, repo


@pytest.mark.linux_only("reads a descriptor's path under /proc/self/fd")
def test_undoing_a_first_build_removes_git_s_read_only_objects(
    half_built, monkeypatch, windows
) -> None:
    folder, repo = half_built
    refuse(monkeypatch, read_only)
    restore_last_saved(folder, repo, FIRST_BUILD)
    assert not (folder.root / ".git").exists()  # no stub left to fail every git call
    assert not (folder.root / "note.md").exists()


@pytest.mark.linux_only("reads a descriptor's path under /proc/self/fd")
def test_a_git_object_held_open_fails_loudly_after_retries(
    half_built, monkeypatch, windows
) -> None:
    folder, repo = half_built
    refuse(monkeypatch, lambda path, _status: "/objects/" in path)  # open in another program
    with pytest.raises(FolderNotRemoved) as raised:
        restore_last_saved(folder, repo, FIRST_BUILD)
    assert ".git could not be removed" in str(raised.value)
    assert "/objects/" in str(raised.value) and "open in another program" in str(raised.value)
    assert windows[: len(HELD_PAUSES)] == list(HELD_PAUSES)  # tried again, then said so


def test_no_retries_off_windows(tmp_path: Path, monkeypatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(portable, "_sleep", pauses.append)
    calls: list[int] = []

    def held_file() -> None:
        calls.append(1)
        raise PermissionError(errno.EACCES, "Access is denied")

    with pytest.raises(PermissionError):
        portable.retry_while_held(held_file)
    assert calls == [1] and pauses == []


# -- git's own files, held by another program ---------------------------------------------


def test_another_git_s_index_lock_is_waited_for_on_windows(
    make_workflow, windows, monkeypatch
) -> None:
    workflow = make_workflow()
    workflow.add(text="# BERT\n\nBERT is a bidirectional transformer encoder from 2018.\n")
    lock = workflow.folder.root / ".git" / "index.lock"
    lock.write_text("")  # another git (an editor's integration) works in the repository

    def pause(seconds: float) -> None:
        windows.append(seconds)
        if len(windows) == 2:  # ... and finishes
            lock.unlink()

    monkeypatch.setattr(portable, "_sleep", pause)
    build = workflow.history.operations()[0]
    workflow.rollback(build.sha)
    assert windows == list(HELD_PAUSES[:2])
    assert workflow.history.operations()[0].kind == "rollback"


def test_an_index_lock_that_stays_is_named(make_workflow, windows) -> None:
    workflow = make_workflow()
    workflow.add(text="# BERT\n\nBERT is a bidirectional transformer encoder from 2018.\n")
    (workflow.folder.root / ".git" / "index.lock").write_text("")
    with pytest.raises(held.HeldByAnotherProgram) as raised:
        workflow.rollback(workflow.history.operations()[0].sha)
    said = str(raised.value)
    assert ".git/index.lock is held by another git" in said and "close it" in said
    assert windows == list(HELD_PAUSES)
    assert workflow.history.operations()[0].kind == "build"  # nothing was rolled back


def test_a_stale_lock_held_open_is_named_by_recovery(half_built, monkeypatch, windows) -> None:
    folder, repo = half_built
    lock = folder.root / ".git" / "index.lock"
    lock.write_text("")
    refuse(monkeypatch, lambda path, _status: path.endswith("index.lock"))
    with pytest.raises(held.HeldByAnotherProgram, match=r"index\.lock"):
        clear_git_leftovers(repo)
    assert windows == list(HELD_PAUSES)


# -- a rename that changes only case, on a case-insensitive file system -------------------


class CaseInsensitive:
    """What NTFS and APFS do with names under `root`, on a case-sensitive Linux disk: a path
    names the entry whose name matches it in any case; renaming a name onto itself (the same
    entry in another case) does nothing, as POSIX says for one file under two names."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def real(self, path) -> Path:
        path = Path(os.fspath(path))
        if self.root not in path.parents:
            return path
        current = self.root
        for part in path.relative_to(self.root).parts:
            try:
                names = os.listdir(current)
            except OSError:
                names = []
            exact = part if part in names else None
            folded = next((n for n in names if n.casefold() == part.casefold()), part)
            current = current / (exact or folded)
        return current


@pytest.fixture
def case_insensitive(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    view = CaseInsensitive(root)
    exists, samefile, rename = Path.exists, os.path.samefile, os.rename
    monkeypatch.setattr(Path, "exists", lambda self: exists(view.real(self)))
    monkeypatch.setattr(os.path, "samefile", lambda a, b: samefile(view.real(a), view.real(b)))

    def renamed(source, target) -> None:
        real_source, real_target = view.real(source), view.real(target)
        if real_source != real_target:
            rename(real_source, real_target)

    monkeypatch.setattr(os, "rename", renamed)
    return root


def names_on_disk(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("old", "new"),
    [("Projects/x.md", "projects/x.md"), ("notes/X.md", "notes/x.md")],
    ids=["folder", "file"],
)
def test_a_case_only_rename_works_and_is_undone(case_insensitive: Path, old: str, new: str):
    root = case_insensitive
    (root / old).parent.mkdir()
    (root / old).write_text("kept\n")
    assert (root / new).exists()  # the view: one entry, either case
    applied = ChangeSet(moves=[(old, new)]).apply(root)
    assert names_on_disk(root) == [new.split("/")[0], new]
    assert (root / new).read_text() == "kept\n"
    applied.undo()
    assert names_on_disk(root) == [old.split("/")[0], old]


def test_two_files_may_still_not_collide(case_insensitive: Path) -> None:
    """Another file under the other case is no case-only rename: still refused."""
    root = case_insensitive
    (root / "a.md").write_text("a\n")
    (root / "b.md").write_text("b\n")
    with pytest.raises(OSError, match="nothing was changed"):
        ChangeSet(moves=[("a.md", "B.md")]).apply(root)
    assert names_on_disk(root) == ["a.md", "b.md"]
