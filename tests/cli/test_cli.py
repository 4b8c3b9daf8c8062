"""`gam-add` as a person runs it: a real subprocess against the scripted server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.clirun import run_cli
from tests.documents import topic_document


def test_gam_add_builds_and_reports(llm_server, tmp_path: Path) -> None:
    doc = tmp_path / "Notes über Rust & Python.md"
    doc.write_text(topic_document({"python": 3, "rust": 3}), encoding="utf-8")
    memory = tmp_path / "memory"
    out = run_cli(
        [
            "--gam-dir",
            str(memory),
            "--files",
            str(doc),
            "--min-tokens",
            "20",
            "--max-tokens",
            "200",
        ],
        llm_server.base_url,
    )
    assert out.returncode == 0, out.stderr
    assert "Built 1 document (6 notes)" in out.stdout and "LLM calls" in out.stdout
    meta = json.loads((memory / ".gam_meta.json").read_text())
    assert meta["total_chunks"] == 6 and meta["source_files"] == [doc.name]
    assert "Summarizing 6 chunks" in out.stderr  # the progress names the stages, a line each


def test_gam_add_text_and_quiet(llm_server, tmp_path: Path) -> None:
    out = run_cli(
        ["--gam-dir", str(tmp_path / "m"), "--text", "Git branches are cheap.", "-q"],
        llm_server.base_url,
    )
    assert out.returncode == 0 and out.stderr == ""
    assert "(1 note)" in out.stdout


def test_gam_add_without_input_is_a_usage_error(llm_server, tmp_path: Path) -> None:
    out = run_cli(["--gam-dir", str(tmp_path / "m")], llm_server.base_url)
    assert out.returncode == 2 and "nothing to add" in out.stderr


def test_gam_add_unreachable_llm_is_one_line(tmp_path: Path) -> None:
    out = run_cli(
        ["--gam-dir", str(tmp_path / "m"), "--text", "hello", "-q"], "http://127.0.0.1:9/v1"
    )
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "cannot reach the LLM server" in out.stderr
    assert not (tmp_path / "m" / ".gam_meta.json").exists()


def test_gam_add_encrypted_pdf_names_the_file(llm_server, tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt(user_password="pw", algorithm="AES-256")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    good = tmp_path / "good.txt"
    good.write_text("Docker images are built in layers.")
    out = run_cli(
        ["--gam-dir", str(tmp_path / "m"), "--files", str(locked), str(good), "-q"],
        llm_server.base_url,
    )
    assert out.returncode == 1
    assert "locked.pdf" in out.stderr and "encrypted" in out.stderr
    assert "(1 note)" in out.stdout  # the readable file was still added


@pytest.mark.linux_only(
    "a read-only bind mount in a private mount namespace, or POSIX permission bits"
)
def test_gam_add_read_only_memory_folder(llm_server, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    first = run_cli(
        ["--gam-dir", str(memory), "--text", "Rust has a borrow checker.", "-q"],
        llm_server.base_url,
    )
    assert first.returncode == 0, first.stderr
    before = {
        p.relative_to(memory).as_posix(): p.read_bytes() if p.is_file() else b""
        for p in memory.rglob("*")
    }
    llm_server.state.requests.clear()
    as_root = os.geteuid() == 0
    if not as_root:
        for path in [memory, *memory.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        out = run_cli(
            ["--gam-dir", str(memory), "--text", "Git merges histories.", "-q"],
            llm_server.base_url,
            read_only=memory if as_root else None,
        )
    finally:
        for path in [memory, *memory.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert out.returncode == 1
    assert "cannot be written" in out.stderr and out.stderr.count("\n") == 1
    assert llm_server.state.requests == []  # no tokens spent on a doomed operation
    after = {
        p.relative_to(memory).as_posix(): p.read_bytes() if p.is_file() else b""
        for p in memory.rglob("*")
    }
    assert after == before


@pytest.mark.parametrize("flag", ["--help"])
def test_gam_add_help(flag: str, llm_server) -> None:
    out = run_cli([flag], llm_server.base_url)
    assert out.returncode == 0 and "--gam-dir" in out.stdout and "--max-tokens" in out.stdout
