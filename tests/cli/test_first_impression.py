"""The first thing a newcomer runs (issue 39, item 15): the README's headless demo, with the
scripted endpoint (no network, no key), shows a memory that looks organized (folders named
for what is in them, READMEs that say something) and one question answered with its
sources; and progress written into a log (stderr not a terminal) is a line per stage, not
a bar's hundreds of carriage-return frames."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from gam_desktop.engine.store.markdown import README
from tests.clirun import run_cli

pytestmark = pytest.mark.timeout(600)


def test_the_demo_shows_an_organized_memory_and_an_answer(tmp_path: Path) -> None:
    memory = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "gam_desktop.selfcheck.demo", "--gam-dir", str(memory)],
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert done.returncode == 0, done.stderr
    folders = sorted(p.name for p in memory.iterdir() if p.is_dir() and p.name[0] != ".")
    assert not [f for f in folders if "_part_" in f], folders  # was neural_part_1, _2
    assert {"neural", "transformers", "python"} <= set(folders)
    for folder in [memory, *(memory / f for f in folders)]:
        text = (folder / README).read_text()
        assert "This section covers" not in text and "chunks:" not in text, text
    out = done.stdout
    assert "\nQ: " in out and "\nA: " in out and "2018" in out  # one question answered
    assert "   from transformers/" in out  # with the file it comes from
    log = done.stderr.splitlines()
    assert "\r" not in done.stderr and len(log) >= 5  # a line per stage in a log
    assert all(a != b for a, b in pairwise(log))


def test_gam_add_into_a_log_prints_a_line_per_stage(llm_server, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Launch\n\nThe launch is planned with the marketing team in March.\n")
    done = run_cli(
        ["--gam-dir", str(tmp_path / "memory"), "--files", str(notes)], llm_server.base_url
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("gam-add: ")]
    assert "\r" not in done.stderr and len(lines) >= 3, done.stderr
    assert all(a != b for a, b in pairwise(lines))  # each stage once
