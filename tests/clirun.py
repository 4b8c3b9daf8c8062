"""Running the command line (gam-add, gam-request, gam-history, gam-rollback) as a person
does: each entry point of gam_desktop.cli in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fault_runner import dying_at


def cli_command(entry: str, *args: str) -> list[str]:
    """The command line that runs `entry` of gam_desktop.cli (add_main, request_main,
    history_main, rollback_main) with `args`, in this interpreter."""
    code = f"import sys; from gam_desktop.cli import {entry}; sys.exit({entry}())"
    return [sys.executable, "-c", code, *args]


def run_cli(
    args: list[str],
    base_url: str,
    read_only: Path | None = None,
    timeout: float = 240,  # a hang guard: under load a process starts in a minute or more
    *,
    entry: str = "add_main",
    env: dict[str, str] | None = None,
    umask: str | None = None,
    exit_at: str | None = None,
) -> subprocess.CompletedProcess:
    """Run a CLI entry point (gam-add by default) in a subprocess; with `read_only`, that
    folder is mounted read-only for this process alone (a private mount namespace),
    because root ignores permission bits; with `umask`, under that umask; with `exit_at`
    ("write:1"), dying at that fault point (tests/fault_runner.py)."""
    environment = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "test-key",
        **(env or {}),
    }
    command = cli_command(entry, *args)
    if exit_at is not None:
        command = dying_at(exit_at, command)
    if read_only is not None:
        script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", script, "sh", str(read_only), *command]
    if umask is not None:
        command = ["sh", "-c", f'umask {umask} && exec "$@"', "sh", *command]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=timeout)
