"""The CLI on bad input: empty files, folders, invalid values, unwritable folders, a crash
left behind. Each failure is one line and an exit code, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gam_desktop.cli import add_main, history_main, request_main
from gam_desktop.engine.ingest.documents import READABLE
from tests import invariants
from tests.clirun import run_cli
from tests.crash import crash_mid_add
from tests.documents import topic_document


def run_main(main: str, args: list[str], base_url: str) -> subprocess.CompletedProcess:
    return run_cli(args, base_url, entry=main)


def blank_pdf(path: Path) -> Path:
    """A PDF whose page holds no text, as a scanned one reads."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def test_files_without_text_are_named_and_fail(llm_server, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    scanned = blank_pdf(tmp_path / "scanned.pdf")
    good = tmp_path / "good.txt"
    good.write_text("Docker images are built in layers.")
    memory = tmp_path / "m"
    out = run_cli(
        ["--gam-dir", str(memory), "--files", str(empty), str(scanned), str(good), "-q"],
        llm_server.base_url,
    )
    assert out.returncode == 1
    assert "empty.txt: no text found" in out.stderr and "scanned.pdf: no text found" in out.stderr
    assert "(1 note)" in out.stdout  # the file with text was still added
    only_empty = run_cli(
        ["--gam-dir", str(memory), "--files", str(empty), "-q"], llm_server.base_url
    )
    assert only_empty.returncode == 1 and "Added 0" not in only_empty.stdout
    assert only_empty.stderr.splitlines() == [
        "error: empty.txt: no text found (the file is empty); skipped"
    ]


def test_a_folder_adds_its_supported_files(llm_server, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "a.md").write_text("Rust has a borrow checker.")
    (docs / "sub" / "b.txt").write_text("Git merges histories.")
    (docs / "photo.png").write_bytes(b"\x89PNG")
    (docs / ".hidden" / "c.md").write_text("Not to be added.")
    memory = docs / "memory"  # inside the folder: its own files are not added again
    out = run_cli(["--gam-dir", str(memory), "--files", str(docs)], llm_server.base_url)
    assert out.returncode == 0, out.stderr
    assert f"{docs}: 2 supported files" in out.stderr
    meta = json.loads((memory / ".gam_meta.json").read_text())
    assert sorted(meta["source_files"]) == ["a.md", "b.txt"]
    (tmp_path / "nothing").mkdir()
    none = run_cli(["--gam-dir", str(memory), "--files", str(tmp_path / "nothing")], "x")
    assert none.returncode == 1
    assert none.stderr == f"gam-add: {tmp_path / 'nothing'}: a folder with no {READABLE} files\n"


def test_adding_nothing_leaves_no_folder_behind(llm_server, tmp_path: Path) -> None:
    """Needs the engine: Workflow.add returns before `versioned.operation` when no document
    has text, so a typo in --files does not leave a folder that later adds refuse."""
    memory = tmp_path / "m"
    missing = run_cli(["--gam-dir", str(memory), "--files", "gone.txt", "-q"], "x")
    assert missing.returncode == 1
    added = run_cli(["--gam-dir", str(memory), "--text", "Rust.", "-q"], llm_server.base_url)
    assert added.returncode == 0, added.stderr


@pytest.mark.parametrize(
    ("main", "args", "flag"),
    [
        (add_main, ["--workers", "0"], "--workers"),
        (add_main, ["--workers", "65"], "--workers"),
        (add_main, ["--max-tokens", "5"], "--max-tokens"),
        (add_main, ["--min-tokens", "0"], "--min-tokens"),
        (add_main, ["--min-tokens", "500", "--max-tokens", "200"], "--min-tokens"),
        (add_main, ["--timeout", "-1"], "--timeout"),
        (add_main, ["--timeout", "nan"], "--timeout"),
        (add_main, ["--reorganize-threshold", "0"], "--reorganize-threshold"),
        (add_main, ["--workers", "two"], "--workers"),
        (request_main, ["-Q", "What?", "--max-iterations", "0"], "--max-iterations"),
        (request_main, ["-Q", "What?", "--workers", "0"], "--workers"),
        (history_main, ["list", "--limit", "0"], "--limit"),
    ],
)
def test_invalid_values_exit_2_in_one_line(main, args: list[str], flag: str, capsys) -> None:
    text = ["--text", "hello"] if main is add_main else []
    with pytest.raises(SystemExit) as exit_:
        main(["--gam-dir", "unused", *text, *args])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert flag in error and ": error: " in error


def test_invalid_environment_is_one_line_exit_2(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("GAM_LLM_WORKERS", "100")  # LLMSettings allows 1 to 64
    assert add_main(["--gam-dir", str(tmp_path / "m"), "--text", "hello", "-q"]) == 2
    assert capsys.readouterr().err == (
        "gam-add: invalid setting: LLMSettings.workers: Input should be less than or equal to 64\n"
    )
    assert not (tmp_path / "m").exists()


def test_blank_text_is_nothing_to_add(capsys, tmp_path: Path) -> None:
    assert add_main(["--gam-dir", str(tmp_path / "m"), "--text", "  \n "]) == 2
    assert "nothing to add" in capsys.readouterr().err


@pytest.mark.linux_only("a read-only bind mount in a private mount namespace")
def test_memory_folder_that_cannot_be_created(llm_server, tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    under_file = run_cli(
        ["--gam-dir", str(a_file / "mem"), "--text", "Git merges histories.", "-q"],
        llm_server.base_url,
    )
    assert under_file.returncode == 1 and under_file.stderr.count("\n") == 1
    assert "Not a directory" in under_file.stderr and "Traceback" not in under_file.stderr
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    read_only = tmp_path / "ro"
    read_only.mkdir()
    out = run_cli(
        ["--gam-dir", str(read_only / "new-memory"), "--text", "Git merges histories.", "-q"],
        llm_server.base_url,
        read_only=read_only,
    )
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert "Read-only file system" in out.stderr and "new-memory" in out.stderr
    assert llm_server.state.requests == []  # no tokens spent on a doomed operation
    assert not (read_only / "new-memory").exists()


def test_expected_failures_are_one_line(llm_server, tmp_path: Path) -> None:
    not_memory = run_main("history_main", ["--gam-dir", str(tmp_path)], llm_server.base_url)
    assert not_memory.returncode == 1 and not_memory.stderr.count("\n") == 1
    no_memory = run_main("rollback_main", ["--gam-dir", str(tmp_path), "abc"], llm_server.base_url)
    assert no_memory.returncode == 1 and "not a GAM memory" in no_memory.stderr
    question = run_main("request_main", ["--gam-dir", str(tmp_path), "-Q", "What?"], "x")
    assert question.returncode == 1 and question.stderr.count("\n") == 1
    nothing = run_cli(["--gam-dir", str(tmp_path / "m"), "--files"], llm_server.base_url)
    assert nothing.returncode == 2 and "nothing to add" in nothing.stderr
    missing = run_cli(
        ["--gam-dir", str(tmp_path / "m"), "--files", str(tmp_path / "gone.txt"), "-q"],
        llm_server.base_url,
    )
    assert missing.returncode == 1 and missing.stderr == (
        f"error: gone.txt: file not found ({tmp_path / 'gone.txt'})\n"
    )
    memory = tmp_path / "memory"
    added = run_cli(["--gam-dir", str(memory), "--text", "Rust.", "-q"], llm_server.base_url)
    assert added.returncode == 0, added.stderr
    unknown = run_main("rollback_main", ["--gam-dir", str(memory), "0bad"], "x")
    assert unknown.stderr == "gam-rollback: no operation '0bad' in this memory's history\n"
    shown = run_main("history_main", ["--gam-dir", str(memory), "show", "0bad"], "x")
    assert shown.returncode == 1 and shown.stderr.count("\n") == 1


def test_every_command_after_an_interrupted_add(llm_server, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    first = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"python": 2}), "-q"],
        llm_server.base_url,
    )
    assert first.returncode == 0, first.stderr
    crash_mid_add(memory, llm_server.base_url, topic_document({"rust": 3}))
    hint = (
        f"a previous add was interrupted; recover first: gam-history --gam-dir {memory} "
        "recover --restore (or --keep)\n"
    )
    add = run_cli(["--gam-dir", str(memory), "--text", "Git merges.", "-q"], llm_server.base_url)
    again = ", then run the same gam-add again (nothing was added this time)\n"
    assert add.returncode == 1 and add.stderr == f"gam-add: {hint.rstrip()}{again}"
    question = run_main(
        "request_main", ["--gam-dir", str(memory), "-Q", "Python?", "-q"], llm_server.base_url
    )
    assert question.returncode == 0 and question.stderr == f"gam-request: warning: {hint}"
    listing = run_main("history_main", ["--gam-dir", str(memory)], llm_server.base_url)
    assert listing.returncode == 0 and listing.stderr == f"gam-history: warning: {hint}"
    sha = listing.stdout.split()[0]
    # needs the engine to refuse: VersionedFolder.rollback raising InterruptedOperationError
    rollback = run_main("rollback_main", ["--gam-dir", str(memory), sha], llm_server.base_url)
    assert rollback.returncode == 1 and rollback.stderr == f"gam-rollback: {hint}"


@pytest.mark.parametrize("mode", ["--restore", "--keep"])
def test_a_first_build_killed_mid_write_is_recovered_from_the_cli(
    llm_server, tmp_path: Path, mode: str
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    died = crash_mid_add(memory, llm_server.base_url, topic_document({"rust": 3}), 2)
    assert died.returncode == 137 and not (memory / ".gam_meta.json").exists()
    add = run_cli(["--gam-dir", str(memory), "--text", "Git merges.", "-q"], llm_server.base_url)
    assert add.returncode == 1 and "recover first" in add.stderr  # not "not empty"
    recovered = run_main("history_main", ["--gam-dir", str(memory), "recover", mode], "x")
    assert recovered.returncode == 0, recovered.stderr
    if mode == "--restore":
        assert sorted(p.name for p in memory.iterdir()) == [".gam"]  # as before the build
    else:
        assert invariants.problems(memory) == []  # a memory of what was written whole
    again = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
    )
    assert again.returncode == 0, again.stderr
    assert invariants.problems(memory) == []


def test_output_into_a_windows_pipe_is_utf8(llm_server, tmp_path: Path) -> None:
    """Windows pipes take the ANSI code page (cp1252, simulated with PYTHONIOENCODING): an
    answer holding CJK or '→' raised UnicodeEncodeError before."""
    memory = tmp_path / "memory"
    text = "# 東京 → 大阪\n\n" + "東京 → 大阪 の新幹線は 2 時間 30 分かかります。\n\n" * 4
    built = run_cli(["--gam-dir", str(memory), "--text", text, "-q"], llm_server.base_url)
    assert built.returncode == 0, built.stderr
    windows_pipe = {"PYTHONIOENCODING": "cp1252"}
    asked = run_cli(
        ["--gam-dir", str(memory), "-Q", "東京 → 大阪 の新幹線は?"],
        llm_server.base_url,
        entry="request_main",
        env=windows_pipe,
    )
    assert asked.returncode == 0, asked.stderr
    assert "東京" in asked.stdout  # decoded as UTF-8 by the test
    listed = run_cli(["--gam-dir", str(memory)], "", entry="history_main", env=windows_pipe)
    assert listed.returncode == 0, listed.stderr
