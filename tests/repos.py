"""Helpers for tests that look at a memory's repository as the user's own git would."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    """Run the system git in `root`; stdout. Raises when git fails."""
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True, timeout=60
    ).stdout
