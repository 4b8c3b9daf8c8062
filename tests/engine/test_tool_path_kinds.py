"""What the agent's tools say a path is (tester's findings 02 and 11): a named pipe in the
memory was "a directory, not a file", and the agent went looking for what was not there.
It is named for what it is; nothing waits on it."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from gam_desktop.engine.retrieval.sandbox import Sandbox, ToolError
from gam_desktop.engine.retrieval.tools import MemoryTools

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pipes and sockets are POSIX")


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "topic").mkdir(parents=True)
    (root / "topic" / "note.md").write_text("# Note\n\nOtters hold hands.\n")
    os.mkfifo(root / "pipe.md")
    return root


def test_cat_of_a_named_pipe_says_it_is_one(memory: Path) -> None:
    result = MemoryTools(memory).run("cat", {"file": "pipe.md"})
    assert result.error and result.text == "error: 'pipe.md' is a named pipe (FIFO), not a file"


def test_each_kind_is_named_for_what_it_is(memory: Path) -> None:
    sandbox = Sandbox(memory)
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(memory / "talk.sock"))
        cases = {
            ("pipe.md", True): "'pipe.md' is a named pipe (FIFO), not a directory",
            ("topic", False): "'topic' is a directory, not a file",
            ("topic/note.md", True): "'topic/note.md' is a file, not a directory",
            ("talk.sock", False): "'talk.sock' is a socket, not a file",
        }
        for (path, want_dir), message in cases.items():
            with pytest.raises(ToolError) as refused:
                sandbox.resolve(path, want_dir=want_dir)
            assert str(refused.value) == message
    finally:
        listener.close()
