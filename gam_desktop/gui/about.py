"""Help ▸ About: the version, the git the history runs and where the logs are, the three
things a person is asked for first when reporting a problem."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

from PySide6 import __version__ as pyside_version

from gam_desktop import __version__
from gam_desktop.engine.api import bundled_git, find_git

GIT_VERSION_SECONDS = 5  # `git --version` answers at once; a broken one must not hang the menu


def git_in_use(setting: str | None) -> str:
    """The git the history runs (`setting` is the one chosen in Settings, if any): its
    version, its path and where it comes from; or that there is none."""
    found = find_git(setting)
    if found is None:
        return "none found: history is off (install git, or set its path in Settings)"
    if setting and found == setting:
        origin = "set in Settings"
    elif found == bundled_git():
        origin = "bundled with the app"
    else:
        origin = "found on PATH"
    return f"{_version(found)}, {origin}: {found}"


def _version(git: str) -> str:
    try:
        said = subprocess.run(
            [git, "--version"], capture_output=True, text=True, timeout=GIT_VERSION_SECONDS
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        said = ""
    return f"git {said.removeprefix('git version ')}" if said else "git"


def about_text(git_setting: str | None, logs: Path) -> str:
    return (
        f"GAM Desktop {__version__}\n\n"
        "A local-first memory of your documents, organized by an LLM: plain Markdown files "
        "in a folder of yours, every change recorded in git and undoable.\n\n"
        f"Git: {git_in_use(git_setting)}\n"
        f"Logs: {logs}\n"
        f"Python {platform.python_version()}, Qt {pyside_version} (PySide6), "
        f"{platform.system()} {platform.release()}"
    )
