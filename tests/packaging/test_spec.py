"""The PyInstaller spec, run as PyInstaller runs it but with its build steps recorded instead
of carried out, as each OS's release job would (issue 38): the bundled git goes in as a
Tree of data (MinGit's DLLs were analysed as binaries and collected twice), on macOS its
programs as code; the bundle says its minimum macOS; a windowed exception shows no
traceback dialog to an unattended job."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import ClassVar

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "gam-desktop.spec"
MACHO = b"\xcf\xfa\xed\xfe" + bytes(60)  # a 64-bit Mach-O header's first bytes


class Step:
    """One of PyInstaller's build steps (Analysis, EXE, COLLECT, ...): what it was given."""

    made: ClassVar[dict[str, Step]] = {}

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs
        Step.made[type(self).__name__] = self
        self.pure, self.scripts = [], []
        self.datas = [("resources/style.qss", "/style.qss", "DATA")]  # (the Analysis made 3s)
        self.binaries = [("numpy/_core/_multiarray_umath.so", "/numpy.so", "EXTENSION")]


def tree(root: str, prefix: str | None = None, excludes=None, typecode: str = "DATA") -> list:
    """PyInstaller's Tree: every file below `root`, named under `prefix`."""
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            found.append((os.path.join(prefix, rel) if prefix else rel, path, typecode))
    return found


def run_spec(monkeypatch, platform: str, git: Path | None, minimum=(11, 0, 0)) -> dict:
    """The spec executed for `platform` with GAM_BUNDLE_GIT=`git`; its steps by name."""
    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_data_files = lambda _package: []
    hooks.collect_submodules = lambda _package, filter=None: []
    osx = types.ModuleType("PyInstaller.utils.osx")
    osx.macosx_version_min = lambda path: minimum if path == "/numpy.so" else (12, 0, 0)
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.osx", osx)
    if git is None:
        monkeypatch.delenv("GAM_BUNDLE_GIT", raising=False)
    else:
        monkeypatch.setenv("GAM_BUNDLE_GIT", str(git))
    steps = {name: type(name, (Step,), {}) for name in ("Analysis", "PYZ", "EXE", "COLLECT")}
    steps["BUNDLE"] = type("BUNDLE", (Step,), {})
    Step.made = {}
    namespace = {"SPECPATH": str(SPEC.parent), "Tree": tree, "__file__": str(SPEC), **steps}
    monkeypatch.setattr(sys, "platform", platform)
    try:
        exec(compile(SPEC.read_text(encoding="utf-8"), str(SPEC), "exec"), namespace)
    finally:
        monkeypatch.undo()
    return dict(Step.made)


def _numpy_is_a_macho(monkeypatch) -> None:
    real_open = open

    def opened(path, mode="r", *args, **kwargs):
        if path == "/numpy.so":
            from io import BytesIO

            return BytesIO(MACHO)
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", opened)


def collected(made: dict) -> list[tuple[str, str, str]]:
    return [entry for group in made["COLLECT"].args[1:] for entry in group]


@pytest.fixture
def mingit(tmp_path: Path) -> Path:
    for rel in ("cmd/git.exe", "mingw64/bin/git.exe", "mingw64/bin/libcurl-4.dll"):
        (tmp_path / "mingit" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "mingit" / rel).write_bytes(b"MZ")
    return tmp_path / "mingit"


def test_windows_collects_mingit_as_a_tree_of_data(monkeypatch, mingit: Path) -> None:
    made = run_spec(monkeypatch, "win32", mingit)
    assert not [d for d in made["Analysis"].kwargs["datas"] if "mingit" in str(d[0])]
    git = {name.replace(os.sep, "/"): kind for name, _path, kind in collected(made)}
    assert git["git/cmd/git.exe"] == "DATA" and git["git/mingw64/bin/libcurl-4.dll"] == "DATA"
    assert made["EXE"].kwargs["disable_windowed_traceback"] is True
    assert "BUNDLE" not in made


def test_macos_collects_git_s_programs_as_code_and_names_its_minimum(
    monkeypatch, tmp_path: Path
) -> None:
    git = tmp_path / "git-macos"
    for rel, data in (
        ("bin/git", MACHO),
        ("libexec/git-core/git", MACHO),
        ("share/git-core/templates/description", b"Unnamed repository\n"),
    ):
        (git / rel).parent.mkdir(parents=True, exist_ok=True)
        (git / rel).write_bytes(data)
    _numpy_is_a_macho(monkeypatch)
    made = run_spec(monkeypatch, "darwin", git, minimum=(14, 0, 0))
    kinds = {name.replace(os.sep, "/"): kind for name, _path, kind in collected(made)}
    assert kinds["git/bin/git"] == kinds["git/libexec/git-core/git"] == "BINARY"
    assert kinds["git/share/git-core/templates/description"] == "DATA"
    plist = made["BUNDLE"].kwargs["info_plist"]
    assert plist["LSMinimumSystemVersion"] == "14.0"  # numpy's wheel for macOS 14
    assert made["EXE"].kwargs["disable_windowed_traceback"] is True


def test_without_a_bundled_git_nothing_extra_is_collected(monkeypatch) -> None:
    made = run_spec(monkeypatch, "linux", None)
    assert collected(made) == [
        *made["Analysis"].binaries,
        *made["Analysis"].datas,
    ]
