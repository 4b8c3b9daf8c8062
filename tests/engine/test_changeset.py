"""All-or-nothing writes: a failure part way leaves the folder as it was."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from gam_desktop.engine.store import changeset
from gam_desktop.engine.store.changeset import ChangeSet, StoreError


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_apply_writes_moves_and_deletes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a/one.md").write_text("one")
    (tmp_path / "a/two.md").write_text("two")
    ChangeSet(
        writes={"b/new.md": "new"}, moves=[("a/one.md", "c/one.md")], deletes=["a/two.md"]
    ).apply(tmp_path)
    assert snapshot(tmp_path) == {"b/new.md": b"new", "c/one.md": b"one"}
    assert not (tmp_path / "a").exists()  # emptied folders are removed


def test_disk_full_mid_write_restores_everything(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "keep.md").write_text("original")
    (tmp_path / "old").mkdir()
    (tmp_path / "old/moved.md").write_text("moved")
    before = snapshot(tmp_path)
    real_write, calls = changeset.atomic_write, []

    def failing_write(path, data):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(changeset, "atomic_write", failing_write)
    changes = ChangeSet(
        writes={"keep.md": "changed", "x/new.md": "new", "y/new.md": "new2"},
        moves=[("old/moved.md", "z/moved.md")],
    )
    with pytest.raises(StoreError, match=r"No space left on device.*nothing was changed"):
        changes.apply(tmp_path)
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.md", "old"]


def test_atomic_write_leaves_no_temp_file_on_failure(tmp_path: Path, monkeypatch) -> None:
    def broken_replace(*_args):
        raise OSError(errno.EACCES, "denied")

    monkeypatch.setattr(changeset.os, "replace", broken_replace)
    with pytest.raises(OSError):
        changeset.atomic_write(tmp_path / "f.md", "data")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def held_open(monkeypatch):
    """Windows' sharing violations: the first two tries of each replace, unlink, rmdir and
    move fail with PermissionError, as while another program holds the file open."""
    import os
    import shutil

    failures: dict[str, int] = {}

    def flaky(name, real):
        def attempt(*args, **kwargs):
            key = f"{name}:{args[0]}"
            failures[key] = failures.get(key, 0) + 1
            if failures[key] <= 2:
                raise PermissionError(13, "The process cannot access the file", str(args[0]))
            return real(*args, **kwargs)

        return attempt

    monkeypatch.setattr(changeset, "SHARING_RETRIES", (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "replace", flaky("replace", os.replace))
    monkeypatch.setattr(shutil, "move", flaky("move", shutil.move))
    monkeypatch.setattr(Path, "unlink", flaky("unlink", Path.unlink))
    monkeypatch.setattr(Path, "rmdir", flaky("rmdir", Path.rmdir))
    return failures


def test_a_file_held_open_for_a_moment_does_not_undo_the_operation(
    tmp_path: Path, held_open: dict
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a/one.md").write_text("one")
    (tmp_path / "a/two.md").write_text("two")
    (tmp_path / "keep.md").write_text("old")
    ChangeSet(
        writes={"keep.md": "new", "b/new.md": "new"},
        moves=[("a/one.md", "c/one.md")],
        deletes=["a/two.md"],
    ).apply(tmp_path)
    assert snapshot(tmp_path) == {"keep.md": b"new", "b/new.md": b"new", "c/one.md": b"one"}
    assert {k.split(":")[0] for k in held_open} == {"replace", "move", "unlink", "rmdir"}


def test_without_retries_a_held_file_undoes_everything(tmp_path: Path, held_open: dict) -> None:
    """Elsewhere a PermissionError is real: no retry, the operation is undone at once."""
    changeset.SHARING_RETRIES = ()
    (tmp_path / "keep.md").write_text("old")
    with pytest.raises(OSError):
        ChangeSet(writes={"keep.md": "new", "b/new.md": "new"}).apply(tmp_path)
    assert (tmp_path / "keep.md").read_text() == "old"
