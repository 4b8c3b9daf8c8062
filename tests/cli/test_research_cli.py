"""`gam-research` as a person runs it: a real subprocess against the scripted server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.clirun import run_cli
from tests.engine.test_answers import built_policies

COMPARE = "Compare the escalation rules of Acme Corp and Borealis Systems"


@pytest.fixture
def memory(make_workflow, tmp_path: Path) -> Path:
    return built_policies(make_workflow, tmp_path).folder.root


def research(args: list[str], base_url: str) -> subprocess.CompletedProcess:
    return run_cli(args, base_url, entry="research_main")


def test_prints_the_report_with_live_steps(memory: Path, llm_server) -> None:
    out = research(["--gam-dir", str(memory), COMPARE], llm_server.base_url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"# {COMPARE}") and "30 minutes" in out.stdout
    assert "## Sources" in out.stdout
    assert "plan: 2 sub-questions" in out.stderr and "✓ ✓" in out.stderr  # ticked live
    assert not (memory / "research").exists()  # not saved unless asked


def test_json_gives_the_report_and_memory_relative_sources(memory: Path, llm_server) -> None:
    out = research(
        ["--gam-dir", str(memory), "--json", "--max-iterations", "1", COMPARE],
        llm_server.base_url,
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["report"].startswith(f"# {COMPARE}") and payload["sources"]
    assert all(not Path(s).is_absolute() and (memory / s).is_file() for s in payload["sources"])
    assert payload["saved"] is None and payload["llm_calls"] >= 3


def test_save_commits_the_report(memory: Path, llm_server) -> None:
    out = research(["--gam-dir", str(memory), "--save", "--json", COMPARE], llm_server.base_url)
    assert out.returncode == 0, out.stderr
    saved = json.loads(out.stdout)["saved"]
    assert saved.startswith("research/") and (memory / saved).is_file()
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s%n%b"], cwd=memory, capture_output=True, text=True
    ).stdout
    assert log.startswith(f"Research: {COMPARE}") and "Gam-Operation: research" in log


def test_not_a_memory_is_one_line(tmp_path: Path, llm_server) -> None:
    # someone's folder of other files (an empty one may become a memory: issue 39)
    (tmp_path / "taxes-2024.txt").write_text("not a memory")
    out = research(["--gam-dir", str(tmp_path), "why?"], llm_server.base_url)
    assert out.returncode == 1 and "not a GAM memory" in out.stderr
    assert "Traceback" not in out.stderr
