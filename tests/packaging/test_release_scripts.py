"""What the release runs besides PyInstaller, run here as the runners would run it: the
version check every build makes before anything is built, the self-test's keychain step as
the packaged app on Windows and macOS judges it, and the shell scripts' syntax."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gam_desktop import keystore
from gam_desktop.gui import selftest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "packaging").rglob("*.sh"))


# -- packaging/release_version.sh ---------------------------------------------------------


def release_version(tmp_path: Path, printed: str, **github: str) -> subprocess.CompletedProcess:
    """The script with a stand-in for Python that prints `printed` as the versions (the
    package's, then gam_desktop.__version__)."""
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nprintf '{printed}'\n")
    python.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "PYTHON": str(python), **github}
    return subprocess.run(
        ["bash", str(ROOT / "packaging" / "release_version.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


POSIX_SHELL = pytest.mark.posix_only("runs sh scripts")


@POSIX_SHELL
def test_the_version_comes_without_windows_line_end(tmp_path: Path) -> None:
    out = release_version(tmp_path, "0.1.0 0.1.0\\r\\n")  # Python on Windows ends lines so
    assert out.returncode == 0, out.stderr
    assert out.stdout == "0.1.0\n"


@POSIX_SHELL
def test_a_tag_must_name_the_version_built(tmp_path: Path) -> None:
    tag = {"GITHUB_REF_TYPE": "tag"}
    assert (
        release_version(tmp_path, "0.1.0 0.1.0\\n", **tag, GITHUB_REF_NAME="v0.1.0").returncode == 0
    )
    wrong = release_version(tmp_path, "0.1.0 0.1.0\\n", **tag, GITHUB_REF_NAME="v0.2.0")
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert "v0.2.0 does not name version 0.1.0" in wrong.stderr
    # a build started by hand (workflow_dispatch) on a branch has no tag to match
    branch = {"GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "main"}
    assert release_version(tmp_path, "0.1.0 0.1.0\\n", **branch).stdout == "0.1.0\n"


@POSIX_SHELL
@pytest.mark.parametrize("printed", ["", "0.1.0/x 0.1.0/x", "$(boom) $(boom)"])
def test_a_version_that_cannot_name_a_file_stops_the_build(tmp_path: Path, printed) -> None:
    out = release_version(tmp_path, printed)
    assert out.returncode == 1 and "unusable version" in out.stderr


@POSIX_SHELL
def test_the_app_must_say_the_version_it_is_released_as(tmp_path: Path) -> None:
    """gam_desktop.__version__ (About, --version) is written apart from pyproject.toml's."""
    out = release_version(tmp_path, "0.2.0 0.1.0\\n")
    assert out.returncode == 1 and "pyproject.toml says 0.2.0" in out.stderr
    assert "'0.1.0': set both" in out.stderr


def test_the_release_scripts_parse() -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    for script in SCRIPTS:
        out = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, (script, out.stderr)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_finds_nothing_in_the_release_scripts() -> None:
    cmd = ["shellcheck", *map(str, SCRIPTS)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout


# -- the self-test's keychain step, as the packaged app judges it -------------------------


class WinError(OSError):
    """pywin32-ctypes' error as keyring's Windows backend raises it from CredWrite."""

    def __init__(self, winerror: int, function: str, message: str) -> None:
        super().__init__(winerror, function, message)
        self.winerror = winerror


@pytest.fixture
def packaged_app_on(monkeypatch):
    """The self-test as the frozen app on `system` (sys.frozen, sys.platform) would run it."""

    def on(system: str) -> None:
        monkeypatch.setattr(sys, "frozen", True, raising=False)
        monkeypatch.setattr(sys, "platform", system)

    return on


@pytest.fixture
def keychain(monkeypatch) -> dict[str, str]:
    """keystore on an in-memory keychain (the tests never touch the person's keychain)."""
    entries: dict[str, str] = {}
    monkeypatch.setattr(keystore, "available", lambda: True)
    monkeypatch.setattr(keystore, "backend_name", lambda: "keyring.backends.Windows.WinVault")
    monkeypatch.setattr(keystore, "set_key", entries.__setitem__)
    monkeypatch.setattr(keystore, "get_key", entries.get)
    monkeypatch.setattr(keystore, "delete_key", lambda endpoint: entries.pop(endpoint, None))
    return entries


def test_a_working_keychain_is_set_read_and_emptied_again(keychain, packaged_app_on) -> None:
    packaged_app_on("win32")
    problems: list[str] = []
    said = selftest.keychain_check(problems)
    assert problems == [] and said.startswith("set, read and deleted an entry")
    assert keychain == {}  # the throwaway entry is gone


@pytest.mark.parametrize("system", ["win32", "darwin"])
def test_a_packaged_app_without_its_keychain_fails_its_self_test(
    monkeypatch, packaged_app_on, system
) -> None:
    """keyring picks its backend at run time: one missing from the bundle leaves only the
    `fail` backend, a packaging mistake the release must not ship."""
    packaged_app_on(system)
    monkeypatch.setattr(keystore, "available", lambda: False)
    monkeypatch.setattr(keystore, "backend_name", lambda: "keyring.backends.fail.Keyring")
    problems: list[str] = []
    assert selftest.keychain_check(problems) == "FAILED"
    assert problems == ["keychain: no keychain (keyring.backends.fail.Keyring)"]


def test_a_keychain_that_refuses_fails_the_packaged_app(
    keychain, monkeypatch, packaged_app_on
) -> None:
    packaged_app_on("darwin")

    def refuse(_endpoint: str, _key: str) -> None:
        raise keystore.KeychainUnavailable("The keychain refused the key: (-25293, 'auth')")

    monkeypatch.setattr(keystore, "set_key", refuse)
    problems: list[str] = []
    assert selftest.keychain_check(problems) == "FAILED"
    assert "-25293" in problems[0]


def test_a_windows_session_without_a_credential_store_is_said_not_failed(
    keychain, monkeypatch, packaged_app_on
) -> None:
    """A CI runner's service session may have no credential store (CredWrite: error 1312);
    the backend was found and called, which is what packaging can break."""
    packaged_app_on("win32")

    def no_session(_endpoint: str, _key: str) -> None:
        try:
            raise WinError(1312, "CredWrite", "A specified logon session does not exist.")
        except WinError as exc:
            raise keystore.KeychainUnavailable("The keychain refused the key") from exc

    monkeypatch.setattr(keystore, "set_key", no_session)
    problems: list[str] = []
    said = selftest.keychain_check(problems)
    assert problems == []
    assert said.startswith("skipped (this session has no credential store")
    # any other refusal from Windows still fails it
    monkeypatch.setattr(
        keystore, "set_key", lambda *_: (_ for _ in ()).throw(WinError(5, "CredWrite", "denied"))
    )
    assert selftest.keychain_check(problems) == "FAILED" and "denied" in problems[0]


def test_from_source_a_missing_keychain_is_skipped(monkeypatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    monkeypatch.setattr(keystore, "available", lambda: False)
    monkeypatch.setattr(keystore, "backend_name", lambda: "keyring.backends.fail.Keyring")
    problems: list[str] = []
    assert selftest.keychain_check(problems).startswith("skipped (no keychain")
    assert problems == []


def test_a_keychain_that_never_answers_fails_in_time(monkeypatch, packaged_app_on) -> None:
    """A locked keychain may wait on a password prompt nobody answers: the step gives up."""
    packaged_app_on("darwin")
    monkeypatch.setattr(selftest, "KEYCHAIN_SECONDS", 0.01)
    answer = threading.Event()

    def waits() -> selftest.KeychainOutcome:
        answer.wait(30)
        return selftest.KeychainOutcome("late")

    problems: list[str] = []
    try:
        assert selftest.keychain_check(problems, round_trip=waits) == "FAILED"
    finally:
        answer.set()
    assert problems == ["keychain: no answer in 0.01 s"]
