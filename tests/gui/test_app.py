"""The real start-up path of `gam-desktop`, in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.documents import topic_document


@pytest.mark.linux_only(
    "reads the settings file Qt writes under HOME on Linux; elsewhere QSettings ignores HOME"
)
def test_the_app_starts_opens_a_memory_and_logs(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 2}))
    home = tmp_path / "home"
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "QT_QPA_PLATFORM": "offscreen",
        "GAM_EXIT_WHEN_SHOWN": "1",
        "OPENAI_API_KEY": "sk-never-logged-1234567890",
    }
    out = subprocess.run(
        [sys.executable, "-m", "gam_desktop", str(memory_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "window shown" in out.stdout
    logs = list(home.rglob("gam-desktop.log"))
    assert len(logs) == 1 and "GAM Desktop 0.1.0 starting" in logs[0].read_text()
    assert logs[0].parent.parent.name == "GAM Desktop"  # the app's own folder, not a shared one
    everything = "".join(p.read_text(errors="ignore") for p in home.rglob("*") if p.is_file())
    assert "sk-never-logged" not in everything  # not in logs, not in settings
    settings = next(home.rglob("GAM Desktop.conf")).read_text()
    assert str(memory_dir) in settings  # the folder is remembered for next time


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gam_desktop", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "0.1.0"


def test_a_windowed_build_without_stdout_runs_its_self_test(tmp_path: Path) -> None:
    """A windowed PyInstaller exe on Windows has sys.stdout and sys.stderr set to None:
    nothing may write to them unguarded."""
    code = (
        "import sys; sys.stdout = None; sys.stderr = None\n"
        "from gam_desktop.gui.app import main\n"
        "sys.exit(main(['--self-test']))\n"
    )
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
