"""Which git the app runs, on each OS (issue 38), simulated here: the packaged app carries
MinGit on Windows (<bundle>/git/cmd/git.exe) and a relocatable git on macOS
(<bundle>/git/bin/git, built with RUNTIME_PREFIX in the release job), because macOS has
no git without the Command Line Tools; a git set in Settings comes first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gam_desktop.engine.history import gitrepo

pytestmark = pytest.mark.posix_only("executable bits and shell scripts stand in for git")


def fake_git(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 'git version 2.47.1'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def elsewhere_on_path(tmp_path: Path, monkeypatch) -> Path:
    """A git on PATH (the Command Line Tools', Homebrew's, a Git for Windows install)."""
    found = fake_git(tmp_path / "usr-bin" / "git")
    monkeypatch.setenv("PATH", str(found.parent))
    return found


def test_windows_uses_the_bundled_mingit(tmp_path: Path, monkeypatch, elsewhere_on_path) -> None:
    bundle = tmp_path / "_internal"
    mingit = fake_git(bundle / "git" / "cmd" / "git.exe")
    fake_git(bundle / "git" / "mingw64" / "bin" / "git.exe")  # MinGit's own, not the entry
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    monkeypatch.setattr(os, "name", "nt")
    try:
        found, bundled = gitrepo.find_git(), gitrepo.bundled_git()
    finally:
        monkeypatch.setattr(os, "name", "posix")  # before pytest makes paths again
    assert found == bundled == str(mingit)


def test_macos_prefers_the_bundled_git_to_the_command_line_tools(
    tmp_path: Path, monkeypatch, elsewhere_on_path
) -> None:
    bundle = tmp_path / "GAM Desktop.app" / "Contents" / "Frameworks"
    relocatable = fake_git(bundle / "git" / "bin" / "git")
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert gitrepo.find_git() == gitrepo.bundled_git() == str(relocatable)
    chosen = fake_git(tmp_path / "chosen" / "git")
    assert gitrepo.find_git(str(chosen)) == str(chosen)  # the setting comes first
    relocatable.unlink()  # an app without it (built from source): PATH's
    assert gitrepo.bundled_git() is None
    assert gitrepo.find_git() == str(elsewhere_on_path)


def test_from_source_no_git_is_bundled(monkeypatch, elsewhere_on_path) -> None:
    monkeypatch.delattr(sys, "_MEIPASS", raising=False)
    assert gitrepo.bundled_git() is None
    assert gitrepo.find_git() == str(elsewhere_on_path)
