"""A really full disk (a tiny tmpfs in a private mount namespace), at the commit and before
the journal: one line, nothing changed, and the next operation works once space is freed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import run_cli
from tests.documents import topic_document

pytestmark = pytest.mark.linux_only("a tiny tmpfs in a private mount namespace (root)")

# Runs as root inside `unshare -m`: mounts a small tmpfs, puts `target` on it (a copy,
# bind-mounted over the original), fills it, runs gam-add, frees the space, runs it again,
# and prints what it saw as JSON. Mounts vanish with the namespace.
DRIVER = r"""
import json, os, subprocess, sys
memory, target, scratch, text = sys.argv[1:5]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", scratch], check=True)
subprocess.run(["cp", "-a", f"{target}/.", scratch], check=True)
subprocess.run(["mount", "--bind", scratch, target], check=True)
# The filler must not look like a file of the user's: in the memory it sits in the
# ignored cache; in .git, git ignores names it does not know.
cache = os.path.join(scratch, ".gam", "cache")
if os.path.isdir(os.path.join(scratch, ".gam")):
    os.makedirs(cache, exist_ok=True)
filler = os.path.join(cache if os.path.isdir(cache) else scratch, "filler")
subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
code = "import sys; from gam_desktop.cli import add_main; sys.exit(add_main())"
add = [sys.executable, "-c", code,
       "--gam-dir", memory, "--text", text, "-q", "--min-tokens", "20", "--max-tokens", "200"]
def snapshot():
    out = {}
    for base, dirs, files in os.walk(memory):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, memory)
            if not rel.startswith((".gam/cache", ".gam/lock")) and name != "filler":
                out[rel] = open(path, "rb").read().hex()
    return out
def git(*args):
    return subprocess.run(["git", "-C", memory, *args], capture_output=True, text=True).stdout
before = snapshot()
full = subprocess.run(add, capture_output=True, text=True)
after_full = snapshot()
status_full = git("status", "--porcelain")
os.unlink(filler)
again = subprocess.run(add, capture_output=True, text=True)
print(json.dumps({
    "full_rc": full.returncode, "full_err": full.stderr, "unchanged": before == after_full,
    "status_full": status_full, "again_rc": again.returncode, "again_err": again.stderr,
    "log": git("log", "--format=%s"), "status_again": git("status", "--porcelain"),
    "fsck": subprocess.run(["git", "-C", memory, "fsck"], capture_output=True).returncode,
}))
"""


def run_full_disk(memory: Path, target: Path, scratch: Path, text: str, base_url: str) -> dict:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.fail("the full-disk tests need root and unshare (CI runs as root)")
    scratch.mkdir()
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "scripted"}
    out = subprocess.run(
        [
            "unshare",
            "-m",
            sys.executable,
            "-c",
            DRIVER,
            str(memory),
            str(target),
            str(scratch),
            text,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def memory(llm_server, tmp_path: Path) -> Path:
    folder = tmp_path / "memory"
    built = run_cli(
        ["--gam-dir", str(folder), "--text", topic_document({"python": 3}), "-q"],
        llm_server.base_url,
    )
    assert built.returncode == 0, built.stderr
    return folder


def test_disk_full_during_the_commit(memory: Path, tmp_path: Path, llm_server) -> None:
    """The files are written (another disk), then `git add` cannot store its objects."""
    seen = run_full_disk(
        memory,
        memory / ".git",
        tmp_path / "scratch",
        topic_document({"rust": 3}),
        llm_server.base_url,
    )
    assert seen["full_rc"] == 1 and seen["full_err"].count("\n") == 1, seen["full_err"]
    assert "could not record the change in the memory's history" in seen["full_err"]
    assert "nothing was changed" in seen["full_err"]
    assert seen["unchanged"], "the add's files were not taken back"  # journal gone too
    assert seen["status_full"] == ""
    assert seen["again_rc"] == 0, seen["again_err"]  # space freed: the same add works
    assert seen["log"].splitlines()[0] == "Added 1 document (3 notes)"
    assert seen["status_again"] == "" and seen["fsck"] == 0


def test_no_space_even_for_the_journal(memory: Path, tmp_path: Path, llm_server) -> None:
    asked = len(llm_server.state.requests)
    seen = run_full_disk(
        memory, memory, tmp_path / "scratch", topic_document({"rust": 3}), llm_server.base_url
    )
    assert seen["full_rc"] == 1 and seen["full_err"].count("\n") == 1, seen["full_err"]
    assert "could not write the operation's journal: No space left on device" in seen["full_err"]
    assert seen["unchanged"] and seen["status_full"] == ""
    assert seen["again_rc"] == 0, seen["again_err"]
    assert seen["status_again"] == "" and seen["fsck"] == 0
    # Only the second add reached the LLM: 3 memories + placement + README calls.
    assert 0 < len(llm_server.state.requests) - asked <= 6
