"""`gam-add` and the memories written without the LLM (issue 36), as a person runs it: an add
whose memorize calls kept failing says so last, with the command that summarizes them again,
and exits 1; `gam-add --summarize-again` does it (exit 1 while some are left, each named); a
`kill -9` in the middle of its write is recovered like any operation, and the summaries it
paid for are not paid again."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from gam_desktop.selfcheck.scripted_llm import Fault
from tests import invariants
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.engine.helpers import tree
from tests.repos import git

pytestmark = pytest.mark.timeout(600)
CHUNKS = ["--min-tokens", "20", "--max-tokens", "200", "-q"]
TEXT = topic_document({"python": 2, "rust": 2})  # four memories


def failing(llm_server) -> Fault:
    """Every memorize call fails (a reply that is no JSON, twice): each memory is written
    without the LLM, at once (no backoff between retries); `times = 0` mends the server."""
    fault = Fault("garbage", times=10_000, task="memorize", on_reask=True)
    llm_server.state.faults.append(fault)
    return fault


def add(memory: Path, llm_server, *extra: str, **kwargs):
    args = ["--gam-dir", str(memory), "--text", TEXT, *CHUNKS, *extra]
    return run_cli(args, llm_server.base_url, **kwargs)


def again(memory: Path, llm_server, **kwargs):
    args = ["--gam-dir", str(memory), "--summarize-again", "-q"]
    return run_cli(args, llm_server.base_url, **kwargs)


def fallbacks(memory: Path) -> list[Path]:
    return [p for p in memory.rglob("*.md") if "fallback: true" in p.read_text()]


def memorize_calls(llm_server) -> int:
    return llm_server.state.tasks().count("memorize")


def test_an_add_with_fallbacks_fails_naming_the_fix_which_then_works(
    llm_server, tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    fault = failing(llm_server)
    built = add(memory, llm_server)
    hint = f"gam-add --gam-dir {shlex.quote(str(memory))} --summarize-again"
    assert built.returncode == 1, built.stderr  # not every memory is what was asked for
    assert "Built 1 document (4 notes)" in built.stdout
    last = built.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 4 notes in this memory are written without the LLM")
    assert last.endswith(f"summarize them again: {hint}")
    assert len(fallbacks(memory)) == 4

    fault.times = 0  # the LLM works again: adding the document again does not help...
    held = add(memory, llm_server)
    assert held.returncode == 0, held.stderr
    assert held.stdout.startswith("Nothing added: the document is already in this memory")
    assert held.stderr.strip().splitlines()[-1].startswith("warning: 4 notes in this memory")

    done = again(memory, llm_server)  # ...summarizing them again does
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Summarized again: 4 notes\n" and done.stderr == ""
    assert fallbacks(memory) == [] and invariants.problems(memory) == []
    assert git(memory, "log", "-1", "--format=%s").strip() == "Summarized again: 4 notes"

    quiet = add(memory, llm_server)
    assert quiet.returncode == 0 and "without the LLM" not in quiet.stderr
    nothing = again(memory, llm_server)
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout.startswith("Nothing to summarize again")


def test_summarize_again_failing_again_names_what_is_left_and_changes_nothing(
    llm_server, tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    failing(llm_server)
    assert add(memory, llm_server).returncode == 1
    saved, head = tree(memory), git(memory, "rev-parse", "HEAD")
    out = again(memory, llm_server)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("error: 4 notes are still written without the LLM (")
    assert "run the same command again once the LLM works" in out.stderr
    assert tree(memory) == saved and git(memory, "rev-parse", "HEAD") == head


def test_summarize_again_is_not_an_add(llm_server, tmp_path: Path) -> None:
    args = ["--gam-dir", str(tmp_path / "m"), "--summarize-again", "--text", "hello"]
    both = run_cli(args, llm_server.base_url)
    assert both.returncode == 2 and "--summarize-again adds nothing" in both.stderr
    none = run_cli(["--gam-dir", str(tmp_path / "m"), "--summarize-again"], llm_server.base_url)
    assert none.returncode == 1 and "is not a GAM memory" in none.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("mode", ["restore", "keep"])
def test_a_kill_mid_write_is_recovered_and_nothing_is_paid_twice(
    mode: str, llm_server, tmp_path: Path
) -> None:
    memory = tmp_path / "memory"
    fault = failing(llm_server)
    assert add(memory, llm_server).returncode == 1
    fault.times = 0
    saved = tree(memory)
    paid = memorize_calls(llm_server)
    died = again(memory, llm_server, exit_at="write:2")  # two notes written, then kill -9
    assert died.returncode == 137, died.stderr
    assert memorize_calls(llm_server) == paid + 4  # every summary was made (and kept) first

    refused = again(memory, llm_server)
    assert refused.returncode == 1 and "was interrupted; recover first" in refused.stderr
    args = ["--gam-dir", str(memory), "recover", f"--{mode}"]
    recovered = run_cli(args, llm_server.base_url, entry="history_main")
    assert recovered.returncode == 0, recovered.stderr
    assert invariants.problems(memory) == []
    if mode == "restore":  # exactly as before the operation: every fallback is there
        assert tree(memory) == saved
    else:  # the two notes written whole are kept; the others are still fallbacks
        assert len(fallbacks(memory)) == 2

    done = again(memory, llm_server)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Summarized again: {4 if mode == 'restore' else 2} notes\n"
    assert fallbacks(memory) == [] and invariants.problems(memory) == []
    assert memorize_calls(llm_server) == paid + 4  # the kept summaries, not new calls
