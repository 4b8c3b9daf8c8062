"""Helpers shared by the engine's tests: a folder as a person sees it, an edit made at a
chosen moment of an operation, and waiting for something another thread does."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gam_desktop.engine.progress import ProgressEvent


def tree(root: Path) -> dict[str, bytes]:
    """Everything a person sees in the folder (not .git, not the rebuildable cache)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file()
        and ".git" not in p.relative_to(root).parts
        and not p.relative_to(root).as_posix().startswith((".gam/cache", ".gam/lock"))
    }


def edit_during(stage: str, edit):
    """A progress callback that runs `edit` once, when the operation reaches `stage`."""
    done: list[bool] = []

    def progress(event: ProgressEvent) -> None:
        if event.stage == stage and not done:
            done.append(True)
            edit()

    return progress


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether `condition` holds within `seconds` (polled every 50 ms)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
