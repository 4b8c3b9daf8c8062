from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gam_desktop.engine.llm import tokenizer


def test_counts_tokens_offline_in_a_fresh_process() -> None:
    # Any network access raises: the vocabularies must come from resources/tokenizers.
    code = """
import socket
def refuse(*a, **k): raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from gam_desktop.engine.llm.tokenizer import count_tokens, get_encoding
print(count_tokens("hello world"), len(get_encoding("o200k_base").encode("hello world")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "2"]


def test_damaged_tokenizer_file_fails_clearly(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "tokenizers"
    shutil.copytree(tokenizer.tokenizer_dir(), copy)
    victim = next(p for p in copy.iterdir() if p.name != "SHA256SUMS")
    victim.write_bytes(victim.read_bytes()[:-10])
    monkeypatch.setattr(tokenizer, "tokenizer_dir", lambda: copy)
    with pytest.raises(tokenizer.TokenizerError, match="damaged"):
        tokenizer._verify(copy)


def test_special_token_text_is_counted_as_text() -> None:
    assert tokenizer.count_tokens("a <|endoftext|> b") > 3


def test_a_windows_checkout_keeps_the_tokenizer_byte_exact(tmp_path: Path) -> None:
    """core.autocrlf=true (the Windows runners' default) must not rewrite the vocabularies
    (their SHA-256 is checked) nor the shell scripts bash runs."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("needs the source repository (this is not a git checkout)")
    clone = tmp_path / "clone"
    out = subprocess.run(
        ["git", "clone", "-q", "-c", "core.autocrlf=true", str(root), str(clone)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    tokenizer._verify(clone / "resources" / "tokenizers")  # raises when a file was rewritten
    for script in (".ci/run", "packaging/linux/install.sh", "packaging/build_linux.sh"):
        assert b"\r\n" not in (clone / script).read_bytes(), script
