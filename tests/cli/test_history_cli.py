"""gam-history and gam-rollback as a person runs them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.clirun import cli_command
from tests.crash import crash_mid_add
from tests.documents import topic_document


def run(main: str, args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        cli_command(main, *args), capture_output=True, text=True, timeout=60, env=env
    )


def test_list_show_diff_and_rollback(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    listing = run("history_main", ["--gam-dir", str(memory_dir)])
    lines = listing.stdout.splitlines()
    assert listing.returncode == 0 and len(lines) == 2
    assert (
        lines[0].startswith(add.sha[:10]) and "add" in lines[0] and "Added 1 document" in lines[0]
    )
    shown = run("history_main", ["--gam-dir", str(memory_dir), "show", add.sha[:8]])
    assert "Added 1 document (3 notes)" in shown.stdout
    assert "  added    rust" in shown.stdout and "  modified README.md" in shown.stdout
    diff = run(
        "history_main", ["--gam-dir", str(memory_dir), "show", add.sha, "--diff", "README.md"]
    )
    assert diff.stdout.startswith("diff --git a/README.md b/README.md")
    rolled = run("rollback_main", ["--gam-dir", str(memory_dir), add.sha[:8]])
    assert rolled.returncode == 0 and "Rolled back: Added 1 document" in rolled.stdout
    assert not list(memory_dir.glob("rust*"))


def test_conflicting_rollback_suggests_restore_before(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    note = next(p for p in memory_dir.glob("rust*/*.md") if p.name != "README.md")
    note.write_text(note.read_text() + "\nmine\n")
    out = run("rollback_main", ["--gam-dir", str(memory_dir), add.sha])
    assert out.returncode == 1 and "--restore-before" in out.stderr
    restored = run("rollback_main", ["--gam-dir", str(memory_dir), add.sha, "--restore-before"])
    assert restored.returncode == 0 and not list(memory_dir.glob("rust*"))


def test_errors_are_one_line(tmp_path: Path, make_workflow, memory_dir: Path) -> None:
    out = run("history_main", ["--gam-dir", str(tmp_path)])
    assert out.returncode == 1 and "not a GAM memory" in out.stderr
    make_workflow().add(text="Some text to remember.")
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    no_git = run(
        "history_main", ["--gam-dir", str(memory_dir)], env={**os.environ, "PATH": str(empty_bin)}
    )
    assert no_git.returncode == 1 and "git was not found" in no_git.stderr
    assert no_git.stderr.count("\n") == 1
    unknown = run("rollback_main", ["--gam-dir", str(memory_dir), "deadbeef"])
    assert unknown.returncode == 1
    assert unknown.stderr == "gam-rollback: no operation 'deadbeef' in this memory's history\n"


def test_recover_after_a_crash(make_workflow, memory_dir: Path, llm_server) -> None:
    make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"python": 2}))
    crash_mid_add(memory_dir, llm_server.base_url, topic_document({"rust": 3}))
    warned = run("history_main", ["--gam-dir", str(memory_dir)])
    assert "was interrupted" in warned.stderr and "recover --restore" in warned.stderr
    out = run("history_main", ["--gam-dir", str(memory_dir), "recover", "--restore"])
    assert out.returncode == 0 and out.stdout.startswith("restored the last saved state")
    assert run("history_main", ["--gam-dir", str(memory_dir)]).stderr == ""


def test_rolling_back_a_rollback_is_not_rolled_back_twice(make_workflow, memory_dir: Path) -> None:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    assert run("rollback_main", ["--gam-dir", str(memory_dir), add.sha]).returncode == 0
    rollback = workflow.history.operations(limit=1)[0]
    undone = run("rollback_main", ["--gam-dir", str(memory_dir), rollback.sha])
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.startswith(f"Undid rollback: {add.summary} (undo with")
    assert "Rolled back: Rolled back" not in undone.stdout


def test_recovery_counts_one_memory_in_the_singular(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    from tests.engine.test_words import ONE_WITH_A_PLURAL

    make_workflow().add(text="Git branches are cheap.")  # one memory
    crash_mid_add(memory_dir, llm_server.base_url, topic_document({"rust": 3}), 1)
    out = run("history_main", ["--gam-dir", str(memory_dir), "recover", "--keep"])
    assert out.returncode == 0, out.stderr
    assert "(1 note)" in out.stdout and not ONE_WITH_A_PLURAL.search(out.stdout)
