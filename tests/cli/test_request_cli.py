"""`gam-request` as a person runs it: a real subprocess against the scripted server, over
the hand-written memory of tests/memories.py."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.models import ChatResult
from tests.clirun import run_cli
from tests.memories import write_memory


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    return write_memory(tmp_path / "memory")


def run_request(args: list[str], base_url: str) -> subprocess.CompletedProcess:
    # These tests are about the exploration loop and its trajectory: always explore.
    return run_cli([*args, "--explore"], base_url, entry="request_main")


def test_gam_request_prints_answer_sources_confidence(memory: Path, llm_server) -> None:
    out = run_request(
        ["--gam-dir", str(memory), "--query", "What is BERT?", "--trajectory"], llm_server.base_url
    )
    assert out.returncode == 0, out.stderr
    assert "2018" in out.stdout and "Sources: nlp/bert_encoder.md" in out.stdout
    assert "Confidence: 0.80" in out.stdout and "searched for “BERT”" in out.stdout
    assert "… read README.md" in out.stderr  # live steps


def test_gam_request_json(memory: Path, llm_server) -> None:
    out = run_request(
        ["--gam-dir", str(memory), "-Q", "How do React hooks work?", "--json"], llm_server.base_url
    )
    result = ChatResult.model_validate(json.loads(out.stdout))
    assert result.sources == ["web/react_hooks.md"] and result.files_read


@pytest.mark.parametrize("case", ["not_a_memory", "unreachable"])
def test_gam_request_errors_are_one_line(
    case: str, memory: Path, tmp_path: Path, llm_server
) -> None:
    folder = tmp_path if case == "not_a_memory" else memory
    url = llm_server.base_url if case == "not_a_memory" else "http://127.0.0.1:9/v1"
    out = run_request(["--gam-dir", str(folder), "-Q", "What?", "-q"], url)
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert ("not a GAM memory" if case == "not_a_memory" else "cannot reach") in out.stderr


def test_an_answer_cites_only_passages_it_read(memory: Path, llm_server) -> None:
    args = ["--gam-dir", str(memory), "-Q", "How much of its input does BERT mask?", "--json"]
    out = run_cli(args, llm_server.base_url, entry="request_main")
    assert out.returncode == 0, out.stderr
    result = ChatResult.model_validate(json.loads(out.stdout))
    assert result.sources == ["nlp/bert_encoder.md"]
    assert set(result.sources) <= set(result.files_read)
    assert "15 percent" in result.answer
    assert re.search(rf"read {len(result.files_read)} passages?: ", result.trajectory)
