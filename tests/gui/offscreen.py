"""What the window's pictures taken in a process of their own share (tests/gui/shots.py,
tests/gui/scaled.py): waiting on the window without a test's qtbot, a memory built from
the sample documents with the scripted server, the window set up for it in a theme; and
for their tests, running one of them in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QDeadlineTimer, QSettings
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.ingest.builder import BuildOptions
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.tokenizer import resources_dir
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.workflow import Workflow
from gam_desktop.gui import theme
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.settings import Preferences
from gam_desktop.selfcheck.scripted_llm import RunningServer

WAIT_MS = 100_000  # a guard against hanging (under the 120 s test timeout), not a speed limit
ROOT = Path(__file__).resolve().parents[2]


def wait_until(condition: Callable[[], object]) -> None:
    deadline = QDeadlineTimer(WAIT_MS)
    while not condition():
        if deadline.hasExpired():
            raise TimeoutError("the window did not get there")
        QApplication.processEvents()


def samples() -> list[Path]:
    """The sample documents the app ships (resources/samples), in name order."""
    return sorted((resources_dir() / "samples").iterdir())


def scripted_workflow(server: RunningServer, folder: Path) -> Workflow:
    """A Workflow on `folder` with the scripted server: short passages, one quick retry."""
    settings = LLMSettings(
        base_url=server.base_url, model="scripted", api_key="k", timeout=10, max_retries=1,
        backoff_base=0.01,
    )  # fmt: skip
    options = BuildOptions(chunk=ChunkConfig(min_tokens=20, max_tokens=200))
    return Workflow(gam_dir=folder, settings=settings, options=options)


def build_memory(server: RunningServer, folder: Path, documents: Sequence[Path]) -> None:
    with scripted_workflow(server, folder) as workflow:
        workflow.add(files=list(documents))


def scripted_prefs(server: RunningServer) -> Preferences:
    return Preferences(
        provider="Custom", base_url=server.base_url, builder_model="scripted",
        chat_model="scripted", min_tokens=20, max_tokens=200, workers=2, timeout=10,
    )  # fmt: skip


def themed_window(server: RunningServer, settings_file: Path, dark: bool) -> MainWindow:
    """A window for the scripted server, in the dark theme or the light one as View ▸
    Theme sets it (in `settings_file`), at the size it chooses; not shown yet."""
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    store.setValue(theme.SETTING, theme.DARK_CHOICE if dark else theme.LIGHT_CHOICE)
    return MainWindow(scripted_prefs(server), store)


def run_module(
    module: str, args: Sequence[str], home: Path, cwd: Path = ROOT, timeout: int = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m module args` offscreen in a process of its own (Qt reads the platform and
    the scale once), with `home` for HOME and the XDG folders: the person's own is never
    touched. `env` adds to (or replaces) the environment, QT_QPA_PLATFORM included."""
    environment = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
