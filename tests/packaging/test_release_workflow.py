"""The release workflow, read as the runners would run it (we cannot run Windows or macOS
here): each rule below is a way a step broke or would break on its runner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def build() -> dict:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    return workflow["jobs"]["build"]


def runs_on(step: dict, system: str) -> bool:
    condition = str(step.get("if", ""))
    return "runner.os" not in condition or f"runner.os == '{system}'" in condition


def test_windows_paths_handed_to_native_tools_are_windows_paths(build: dict) -> None:
    """Git Bash's $PWD is /d/a/...; Python and PyInstaller read it as D:\\d\\a\\..."""
    for step in build["steps"]:
        if not runs_on(step, "Windows") or step.get("shell") != "bash":
            continue
        for line in str(step.get("run", "")).splitlines():
            if "GITHUB_ENV" in line and "$PWD" in line:
                assert "cygpath -w" in line, line


def test_slash_switches_to_windows_programs_are_not_rewritten_by_msys(build: dict) -> None:
    """MSYS rewrites a Git Bash argument such as /DAppVersion=1.0 as a path."""
    for step in build["steps"]:
        run = str(step.get("run", ""))
        if runs_on(step, "Windows") and re.search(r"\s\"?/[A-Z][A-Za-z]*=", run):
            assert step.get("shell") in ("pwsh", "powershell", "cmd") or (
                "MSYS_NO_PATHCONV=1" in run
            ), step["name"]


def test_both_mac_architectures_are_built_and_artifacts_do_not_collide(build: dict) -> None:
    systems = build["strategy"]["matrix"]["os"]
    assert "macos-latest" in systems  # arm64
    assert any(s in systems for s in ("macos-15-intel", "macos-15-large", "macos-14-large"))
    upload = next(s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/upload"))
    assert "runner.arch" in upload["with"]["name"]  # two macOS jobs, two artifact names
    image = next(s for s in build["steps"] if s.get("name") == "macOS disk image")
    assert "uname -m" in image["run"] and "macos-${ARCH}.dmg" in image["run"]


def test_mac_signing_is_inside_out_with_the_hardened_runtime(build: dict) -> None:
    """codesign --deep is deprecated for signing; PyInstaller signs each binary itself."""
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "--deep" not in text
    spec = (ROOT / "packaging" / "gam-desktop.spec").read_text()
    assert 'codesign_identity=os.environ.get("GAM_CODESIGN_IDENTITY")' in spec
    entitlements = ROOT / "packaging" / "macos" / "entitlements.plist"
    assert entitlements.is_file() and "entitlements_file=" in spec
    names = [s.get("name") for s in build["steps"]]
    assert names.index("Signing keychain (macOS)") < names.index("Build the bundle")
