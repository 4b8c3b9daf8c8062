"""The engine never imports Qt: checked on the source and in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gam_desktop.engine

ENGINE = Path(gam_desktop.engine.__file__).parent
QT_PACKAGES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "qtpy")


def engine_modules() -> list[str]:
    root = ENGINE.parent.parent
    return [
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for p in ENGINE.rglob("*.py")
    ]


def test_no_engine_source_imports_qt() -> None:
    offenders = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in QT_PACKAGES]
    assert offenders == []


def test_importing_the_whole_engine_loads_no_qt() -> None:
    modules = engine_modules()
    assert len(modules) > 10
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        f"print([m for m in sys.modules if m.split('.')[0] in {QT_PACKAGES!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"
