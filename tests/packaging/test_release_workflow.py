"""The release workflow, read as the runners would run it (we cannot run Windows or macOS
here): each rule below is a way a step broke or would break on its runner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


@pytest.fixture(scope="module")
def release() -> dict:
    return load("release.yml")


@pytest.fixture(scope="module")
def build(release: dict) -> dict:
    return release["jobs"]["build"]


def runs_on(step: dict, system: str) -> bool:
    condition = str(step.get("if", ""))
    return "runner.os" not in condition or f"runner.os == '{system}'" in condition


def shell(job: dict, step: dict) -> str | None:
    """The shell a step runs under: its own, else its job's default (else the runner's)."""
    return step.get("shell") or job.get("defaults", {}).get("run", {}).get("shell")


def test_windows_paths_handed_to_native_tools_are_windows_paths(build: dict) -> None:
    """Git Bash's $PWD is /d/a/...; Python and PyInstaller read it as D:\\d\\a\\..."""
    for step in build["steps"]:
        if not runs_on(step, "Windows") or shell(build, step) != "bash":
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


# -- issue 38: a release that reaches users on every OS -----------------------------------


def commands(run: str) -> list[str]:
    """The commands of a `run:` (continued lines joined, comments and blank lines left out)."""
    joined = run.replace("\\\n", " ")
    lines = [line.strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def windows_jobs() -> list[tuple[str, dict]]:
    jobs = [("release.yml", job) for job in load("release.yml")["jobs"].values()]
    jobs += [("ci.yml", job) for job in load("ci.yml")["jobs"].values()]
    return [(name, job) for name, job in jobs if "windows" in str(job.get("strategy", ""))]


def test_every_job_has_a_time_limit() -> None:
    for name in ("release.yml", "ci.yml"):
        for job_name, job in load(name)["jobs"].items():
            assert int(job["timeout-minutes"]) <= 120, (name, job_name)


def test_windows_steps_report_every_command_s_failure() -> None:
    """A multi-line pwsh `run:` reports only its last command's exit status (ruff and
    lint-imports failures passed on Windows); bash (-e -o pipefail) stops at the first."""
    assert windows_jobs()
    for name, job in windows_jobs():
        for step in job["steps"]:
            if "run" not in step or not runs_on(step, "Windows"):
                continue
            if shell(job, step) != "bash":
                assert len(commands(step["run"])) == 1, (name, step.get("name"))


def test_each_self_test_has_a_time_limit_and_its_output_is_uploaded(release: dict) -> None:
    for job_name in ("build", "linux"):
        job = release["jobs"][job_name]
        tests = [s for s in job["steps"] if "--self-test" in str(s.get("run", ""))]
        assert tests, job_name
        for step in tests:
            assert int(step["timeout-minutes"]) <= 20, step["name"]
            assert "--self-test-log build-logs/" in step["run"].replace('"', ""), step["name"]
        logs = [s for s in job["steps"] if "build-logs/" in str(s.get("with", {}).get("path"))]
        assert logs and logs[0]["if"] == "always()", job_name
    spec = (ROOT / "packaging" / "gam-desktop.spec").read_text()
    assert "disable_windowed_traceback=True" in spec


def test_notarization_needs_the_signing_certificate(build: dict) -> None:
    step = next(s for s in build["steps"] if s.get("name") == "Notarize the disk image")
    assert "env.HAS_MACOS_CERT == 'true'" in step["if"] and "env.HAS_NOTARY == 'true'" in step["if"]
    assert "timeout-minutes" in step


def test_the_signing_keychain_stays_unlocked_for_the_build(build: dict) -> None:
    step = next(s for s in build["steps"] if s.get("name") == "Signing keychain (macOS)")
    assert re.search(r"security set-keychain-settings -lut \d+ build\.keychain", step["run"])


def test_macos_builds_a_relocatable_git_into_the_app(build: dict) -> None:
    names = [s.get("name") for s in build["steps"]]
    git = next(s for s in build["steps"] if "RUNTIME_PREFIX=YesPlease" in str(s.get("run")))
    assert runs_on(git, "macOS") and not runs_on(git, "Windows")
    assert "GAM_BUNDLE_GIT=" in git["run"] and "PATH=/usr/bin:/bin" in git["run"]
    assert names.index(git["name"]) < names.index("Build the bundle")
    test = next(s for s in build["steps"] if str(s.get("name")).startswith("Self-test (macOS"))
    assert "env -i" in test["run"] and "PATH=/usr/bin:/bin" in test["run"]  # as from Finder


def test_linux_is_built_on_its_oldest_base_and_the_readme_says_its_floor(release: dict) -> None:
    linux = release["jobs"]["linux"]
    assert linux["container"] == "almalinux:9"  # glibc 2.34
    floor = linux["env"]["GLIBC_FLOOR"]
    assert floor == "2.34"
    check = next(s for s in linux["steps"] if "GLIBC_FLOOR" in str(s.get("run")))
    assert "objdump -T" in check["run"]
    readme = (ROOT / "README.md").read_text()
    assert f"glibc {floor}" in readme
    assert set(release["jobs"]["release"]["needs"]) == {"build", "linux"}


def test_the_readme_names_minimum_systems_and_first_start_steps() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Installing the app") :].split("\n## ", 1)[0]
    assert "Windows 10" in table and "macOS 14" in table and "glibc 2.34" in table
    assert "SmartScreen" in table and "More info" in table and "Run anyway" in table
    assert "Gatekeeper" in table and "Open Anyway" in table
