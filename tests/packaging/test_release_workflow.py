"""The release workflow, read as the runners would run it (we cannot run Windows or macOS
here): each rule below is a way a step broke or would break on its runner."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
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
    assert "macos-15" in systems  # arm64
    assert any(s in systems for s in ("macos-15-intel", "macos-15-large", "macos-14-large"))
    upload = next(s for s in build["steps"] if str(s.get("uses", "")).startswith("actions/upload"))
    assert "runner.arch" in upload["with"]["name"]  # two macOS jobs, two artifact names
    image = next(s for s in build["steps"] if s.get("name") == "macOS disk image")
    assert 'dmg="dist/GAM-Desktop-${VERSION}-macos-$(uname -m).dmg"' in image["run"]


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


# -- the first public release, read as a release engineer would (issue 38, fresh reading) --

# The first release of each action that runs on Node 24 (GitHub removed Node 20 from its
# runners in September 2026: older majors only run by being forced onto Node 24).
NODE24_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
}
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40})$")
# What each runner image reports as runner.os and runner.arch (the artifacts' names).
RUNNERS = {
    "windows-2025": ("Windows", "X64"),
    "windows-2022": ("Windows", "X64"),
    "macos-15": ("macOS", "ARM64"),
    "macos-14": ("macOS", "ARM64"),
    "macos-15-intel": ("macOS", "X64"),
    "ubuntu-24.04": ("Linux", "X64"),
    "ubuntu-22.04": ("Linux", "X64"),
}


def all_steps(workflow: dict):
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, job, step


def test_actions_are_pinned_by_commit_to_releases_that_run_on_node_24() -> None:
    text = {name: (WORKFLOWS / name).read_text() for name in ("release.yml", "ci.yml")}
    for name, workflow in (("release.yml", load("release.yml")), ("ci.yml", load("ci.yml"))):
        for _job, _, step in all_steps(workflow):
            if "uses" not in step:
                continue
            found = PINNED.match(step["uses"])
            assert found, (name, step["uses"])  # a tag can be moved; a commit cannot
            line = next(li for li in text[name].splitlines() if step["uses"] in li)
            comment = re.search(r"# v(\d+)\.\d+\.\d+\s*$", line)
            assert comment, (name, line)  # which release the commit is
            assert int(comment.group(1)) >= NODE24_MAJORS[found["action"]], (name, line)


def test_release_runner_images_are_named_not_latest(release: dict) -> None:
    for job_name, job in release["jobs"].items():
        images = job.get("strategy", {}).get("matrix", {}).get("os", [job["runs-on"]])
        for image in images:
            assert "latest" not in image and image in RUNNERS, (job_name, image)


def installer_uploads(release: dict) -> dict[str, list[str]]:
    """Each job's names of the installer artifacts it uploads, for every runner it runs on."""
    pattern = release["jobs"]["release"]["steps"][0]["with"]["pattern"]
    found: dict[str, list[str]] = {}
    for job_name, job in release["jobs"].items():
        images = job.get("strategy", {}).get("matrix", {}).get("os", [job["runs-on"]])
        for step in job["steps"]:
            if not str(step.get("uses", "")).startswith("actions/upload-artifact"):
                continue
            for image in images:
                system, arch = RUNNERS[image]
                name = str(step["with"]["name"])
                name = name.replace("${{ runner.os }}", system).replace("${{ runner.arch }}", arch)
                assert "${{" not in name, name
                if fnmatch.fnmatchcase(name, pattern):
                    assert step.get("if") is None, step  # an installer is always uploaded
                    assert step["with"]["if-no-files-found"] == "error", name
                    found.setdefault(job_name, []).append(name)
                else:
                    assert step.get("if") == "always()", name  # a log: whatever happened
    return found


def test_every_installer_artifact_reaches_the_release_and_no_log_does(release: dict) -> None:
    uploads = installer_uploads(release)
    names = [name for job_names in uploads.values() for name in job_names]
    systems = ("Windows-X64", "macOS-ARM64", "macOS-X64", "Linux-X64")
    assert sorted(names) == sorted(f"gam-desktop-{system}" for system in systems)
    assert len(set(names)) == len(names)  # one name per artifact: none overwrites another
    publish = release["jobs"]["release"]
    assert set(publish["needs"]) == set(uploads)  # it waits for every build
    download = publish["steps"][0]
    assert download["uses"].startswith("actions/download-artifact")
    assert download["with"].get("merge-multiple") in (None, False)  # artifacts/<name>/<file>
    assert "artifacts/*/*" in publish["steps"][-1]["run"]


def test_only_a_version_tag_publishes_and_only_the_release_job_may_write(release: dict) -> None:
    triggers = release.get("on") or release[True]  # PyYAML reads the key `on` as True
    assert triggers["push"] == {"tags": ["v*"]}
    assert release["permissions"] == {"contents": "read"}
    for job_name, job in release["jobs"].items():
        if job_name == "release":
            assert job["permissions"] == {"contents": "write"}
            assert job["if"] == "startsWith(github.ref, 'refs/tags/v')"
        else:
            assert "permissions" not in job, job_name


def test_every_build_checks_that_the_tag_names_its_version(release: dict) -> None:
    """The version is pyproject.toml's (no git history is read: a shallow checkout is
    enough); a tag that names another version fails the build before anything is made."""
    for job_name in ("build", "linux"):
        steps = release["jobs"][job_name]["steps"]
        runs = [str(s.get("run", "")) for s in steps]
        check = next(i for i, r in enumerate(runs) if "packaging/release_version.sh" in r)
        build = next(i for i, r in enumerate(runs) if "PyInstaller" in r or "build_linux" in r)
        assert check < build, job_name
        for step in steps:
            assert "fetch-depth" not in step.get("with", {}), job_name
    assert "release_version.sh" in (ROOT / "packaging" / "build_linux.sh").read_text()
    assert "setuptools_scm" not in (ROOT / "pyproject.toml").read_text()


def test_values_for_github_env_are_computed_before_they_are_written() -> None:
    """`echo "X=$(cmd)" >> $GITHUB_ENV` reports echo's status: cmd's failure is lost, and X
    is empty for every step after."""
    for name in ("release.yml", "ci.yml"):
        for _job, _, step in all_steps(load(name)):
            for line in commands(str(step.get("run", ""))):
                if "GITHUB_ENV" in line or "GITHUB_OUTPUT" in line:
                    assert "$(" not in line and "`" not in line, (name, line)


def test_pwsh_steps_stop_at_the_first_failure() -> None:
    """Windows jobs run bash; a step that still asks for PowerShell and has several
    commands must stop at the first failure itself."""
    for name in ("release.yml", "ci.yml"):
        for _job, job, step in all_steps(load(name)):
            if shell(job, step) in ("pwsh", "powershell") and len(commands(step["run"])) > 1:
                assert "$ErrorActionPreference = 'Stop'" in step["run"], (name, step)
                assert "$LASTEXITCODE" in step["run"], (name, step)
    for _name, job in windows_jobs():
        assert job["defaults"]["run"]["shell"] == "bash"


def test_no_failure_in_a_release_is_ignored(release: dict) -> None:
    """A step allowed to fail would publish what it failed to check or make."""
    for job_name, job, step in all_steps(release):
        assert "continue-on-error" not in job, job_name
        assert "continue-on-error" not in step, (job_name, step.get("name"))


HANGS = ("--self-test", "choco install", "notarytool", "hdiutil create", "make -C", "sign.sh")


def test_steps_that_may_hang_have_their_own_time_limit(release: dict) -> None:
    for job_name, _job, step in all_steps(release):
        run = str(step.get("run", ""))
        if any(word in run for word in HANGS):
            assert int(step["timeout-minutes"]) <= 45, (job_name, step.get("name"))


def test_the_macos_self_test_uses_a_keychain_of_its_own(build: dict) -> None:
    names = [s.get("name") for s in build["steps"]]
    own = names.index("A keychain for the self-test (macOS)")
    test = next(i for i, s in enumerate(build["steps"]) if "Self-test (macOS" in str(s.get("name")))
    assert own < test
    keychain = build["steps"][own]["run"]
    assert "unlock-keychain" in keychain and "default-keychain -d user -s selftest" in keychain
    cleanup = next(
        s for s in build["steps"] if "delete-keychain selftest.keychain" in str(s.get("run"))
    )
    assert cleanup["if"].startswith("always()")


def test_the_installers_are_named_as_the_readme_and_the_release_check_say(release: dict) -> None:
    readme = (ROOT / "README.md").read_text()
    check = next(
        s for s in release["jobs"]["release"]["steps"] if "SHA256SUMS" in str(s.get("run"))
    )
    iss = (ROOT / "packaging" / "windows" / "gam-desktop.iss").read_text()
    linux = (ROOT / "packaging" / "build_linux.sh").read_text()
    image = next(
        s for s in release["jobs"]["build"]["steps"] if s.get("name") == "macOS disk image"
    )
    made = {
        "GAM-Desktop-$version-windows-x64-setup.exe": "OutputBaseFilename=GAM-Desktop-{#AppVersion}"
        "-windows-x64-setup" in iss,
        "GAM-Desktop-$version-macos-arm64.dmg": "GAM-Desktop-${VERSION}-macos-$(uname -m)"
        in image["run"],
        "GAM-Desktop-$version-macos-x86_64.dmg": "GAM-Desktop-${VERSION}-macos-$(uname -m)"
        in image["run"],
        "gam-desktop-$version-linux-x86_64.tar.gz": 'NAME="gam-desktop-$VERSION-linux-$(uname -m)"'
        in linux,
    }
    for name, is_made in made.items():
        assert is_made, name
        assert name in check["run"], name
        said = name.replace("$version", "<version>")
        assert said in readme or said.replace("GAM-Desktop-<version>", "…") in readme, name


def test_the_macos_bundle_is_checked_against_the_readme_s_floor(build: dict) -> None:
    floor = build["env"]["MACOS_FLOOR"]
    step = next(s for s in build["steps"] if "LSMinimumSystemVersion" in str(s.get("run")))
    assert "$MACOS_FLOOR" in step["run"]
    readme = (ROOT / "README.md").read_text()
    assert f"macOS {floor.removesuffix('.0')} (Sonoma) or newer" in readme


def test_the_macos_git_links_only_the_system_s_libraries(build: dict) -> None:
    git = next(s for s in build["steps"] if "RUNTIME_PREFIX=YesPlease" in str(s.get("run")))
    run = git["run"]
    assert "otool -L" in run and "grep -v -e '^/usr/lib/' -e '^/System/Library/'" in run
    # `make strip install` in one parallel make may run both goals at once
    assert not re.search(r"make [^\n]*-j[^\n]* strip install", run)
    assert "export MACOSX_DEPLOYMENT_TARGET=" in run


def test_a_signing_certificate_without_its_identity_signs_nothing(build: dict) -> None:
    flag = build["env"]["HAS_MACOS_CERT"]
    assert "MACOS_CERTIFICATE" in flag and "MACOS_SIGNING_IDENTITY" in flag
    signing = [s for s in build["steps"] if "sign.sh" in str(s.get("run"))]
    assert [s["if"] for s in signing] == [
        "runner.os == 'Windows' && env.HAS_WINDOWS_CERT == 'true'"
    ] * 2
    names = [s.get("name") for s in build["steps"]]
    # the app is signed before the installer packs it, the installer after it is made
    assert names.index("Sign the app (Windows)") < names.index("Windows installer (Inno Setup)")
    assert names.index("Windows installer (Inno Setup)") < names.index("Sign the Windows installer")


def actionlint() -> str | None:
    beside = Path(sys.executable).parent / "actionlint"
    return str(beside) if beside.is_file() else shutil.which("actionlint")


@pytest.mark.skipif(actionlint() is None, reason="actionlint is not installed")
def test_actionlint_finds_nothing() -> None:
    command = [str(actionlint()), "-color=false"]
    if shutil.which("shellcheck"):
        command.append(f"-shellcheck={shutil.which('shellcheck')}")
    else:
        command.append("-shellcheck=")
    files = [str(WORKFLOWS / name) for name in ("release.yml", "ci.yml")]
    out = subprocess.run([*command, *files], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
