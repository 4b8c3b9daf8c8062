"""Dying in the middle of an operation, as a crash or a power cut would leave a memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def crash_mid_add(
    memory: Path, base_url: str, text: str, after_writes: int = 2, *extra: str
) -> subprocess.CompletedProcess:
    """gam-add in a subprocess that exits (137) after `after_writes` file writes of its change
    set (the GAM_FAULT_EXIT_AT fault injection in engine/faults.py)."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_MODEL": "scripted",
        "GAM_FAULT_EXIT_AT": f"write:{after_writes}",
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gam_desktop.cli",
            "--gam-dir",
            str(memory),
            "--text",
            text,
            "-q",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
