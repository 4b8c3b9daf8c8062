"""Helpers for tests that look at a memory's repository as the user's own git would."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    """Run the system git in `root`; stdout. Raises when git fails."""
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def user_repo(root: Path, files: dict[str, str]) -> Path:
    """A repository of the user's own at `root` (made if missing): `files` written and
    committed once, as Me <me@x>, with its own history to keep."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "mine")
    return root
