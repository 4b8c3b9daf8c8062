"""All-or-nothing writes: a failure part way leaves the folder as it was."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from gam_desktop.engine import changeset
from gam_desktop.engine.changeset import ChangeSet, StoreError


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
