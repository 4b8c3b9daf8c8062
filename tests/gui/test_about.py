"""Help ▸ About (issue 38): the version, the git in use (and where it comes from) and where
the logs are: what a person is asked for first when reporting a problem."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from gam_desktop import __version__
from gam_desktop.gui import about
from gam_desktop.gui.app import log_folder


def fake_git(path: Path, version: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'git version {version}'\n")
    path.chmod(0o755)
    return str(path)


def test_about_names_the_version_the_git_and_the_logs(window, recorder, qtbot, tmp_path) -> None:
    window.menus.about.trigger()
    title, text = recorder.told[-1]
    assert title == "About GAM Desktop" and f"GAM Desktop {__version__}" in text
    git = next(line for line in text.splitlines() if line.startswith("Git: "))
    assert git.startswith("Git: git 2.") and git.endswith(about.find_git(None))
    assert f"Logs: {log_folder()}" in text
    box = QMessageBox(QMessageBox.Icon.Information, title, text)  # what the person sees
    qtbot.addWidget(box)
    box.show()
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path)  # kept for a person to see
    assert box.grab().save(str(folder / "about.png"))


@pytest.mark.posix_only("shell scripts stand in for git")
def test_where_the_git_comes_from(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(Path(fake_git(tmp_path / "path" / "git", "2.39.5")).parent))
    assert about.git_in_use(None) == f"git 2.39.5, found on PATH: {tmp_path}/path/git"
    bundle = tmp_path / "bundle"
    bundled = fake_git(bundle / "git" / "bin" / "git", "2.47.1")
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert about.git_in_use(None) == f"git 2.47.1, bundled with the app: {bundled}"
    chosen = fake_git(tmp_path / "chosen" / "git", "2.50.0")
    assert about.git_in_use(chosen) == f"git 2.50.0, set in Settings: {chosen}"
    monkeypatch.setattr(about, "find_git", lambda _setting: None)
    assert about.git_in_use(None).startswith("none found: history is off")
