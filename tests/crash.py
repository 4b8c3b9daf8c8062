"""Dying in the middle of an operation, as a crash or a power cut would leave a memory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.clirun import cli_command
from tests.fault_runner import dying_at


def crash_mid_add(
    memory: Path, base_url: str, text: str, after_writes: int = 2, *extra: str
) -> subprocess.CompletedProcess:
    """gam-add in a subprocess that exits (137) after `after_writes` file writes of its change
    set (the `write` fault point of engine/store/faults.py, tests/fault_runner.py)."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "scripted"}
    command = cli_command("add_main", "--gam-dir", str(memory), "--text", text, "-q", *extra)
    return subprocess.run(
        dying_at(f"write:{after_writes}", command),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
