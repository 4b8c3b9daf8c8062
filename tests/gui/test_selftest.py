"""`gam-desktop --self-test` in this process, with Windows' rule for open files simulated
(issue 38's blocker): a file this process holds open cannot be deleted. The self-test must
close everything its memory opened, and report, never raise, what its cleanup could not
delete (a windowed build turns an exception into a modal dialog that hangs the release)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from gam_desktop.engine.store import portable
from gam_desktop.gui import selftest
from tests.engine.test_memory_closes import open_under

pytestmark = pytest.mark.linux_only("reads /proc/self/fd")


def refuse_open_files(monkeypatch) -> list[str]:
    """os.unlink as Windows behaves: a file open in this process is not deleted (WinError
    32, "being used by another process"); returns the paths refused."""
    refused: list[str] = []
    original = os.unlink

    def unlink(path, *, dir_fd=None):
        where = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
        full = os.path.join(where, os.fspath(path))
        if full in open_under(Path(full).parent):
            refused.append(full)
            raise PermissionError(errno.EACCES, "being used by another process", full)
        return original(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", unlink)
    return refused


@pytest.fixture
def windows_cleanup(monkeypatch) -> list[str]:
    """The self-test's cleanup runs under Windows' rule (the rest of it as on Linux)."""
    original = portable.remove_tree
    refused: list[str] = []

    def remove_tree(path: Path) -> None:
        with pytest.MonkeyPatch.context() as patch:
            refused.extend(refuse_open_files(patch))
            original(path)

    monkeypatch.setattr(portable, "remove_tree", remove_tree)
    return refused


def test_the_self_test_closes_what_it_opened_and_logs(qapp, tmp_path, windows_cleanup) -> None:
    log = tmp_path / "logs" / "self-test.txt"
    assert selftest.run(log) == 0, log.read_text()
    assert windows_cleanup == []
    said = log.read_text()
    assert "self-test passed" in said
    assert "self-test: git: " in said and "self-test: keychain: " in said


def test_a_cleanup_that_fails_is_reported_not_raised(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "gam-selftest-x"
    folder.mkdir()
    held = folder / "search.sqlite3"
    with held.open("wb"), pytest.MonkeyPatch.context() as patch:  # held, as the index was
        refuse_open_files(patch)
        problems = selftest.clean_up(folder)
    assert len(problems) == 1 and "search.sqlite3" in problems[0]
    assert problems[0].startswith("cleanup: ") and "could not be removed" in problems[0]


def test_any_failure_is_reported_with_exit_status_1(tmp_path, monkeypatch, capsys) -> None:
    def broken(*_args) -> None:
        raise PermissionError(errno.EACCES, "[WinError 32] being used by another process")

    monkeypatch.setattr(selftest, "_run", broken)
    log = tmp_path / "self-test.txt"
    assert selftest.run(log) == 1
    assert "self-test FAILED" in capsys.readouterr().err
    assert "WinError 32" in log.read_text()
