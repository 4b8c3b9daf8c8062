"""Helpers for tests of where a memory may be made: a home folder of the test's own, what a
folder holds, and a repository of the person's own (`home` in tests/conftest.py uses
`fake_home`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tmp_path/home/ada`, made, and what Path.home gives from now on: a test never looks at
    the real home folder."""
    folder = tmp_path / "home" / "ada"
    folder.mkdir(parents=True)
    monkeypatch.setattr(Path, "home", lambda: folder)
    return folder


def listing(folder: Path) -> list[str]:
    """Everything under `folder`, as sorted relative paths (to see that nothing was made)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def git_init(folder: Path) -> Path:
    """An empty git repository at `folder` (made if missing), as `git init` leaves it."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
    return folder
