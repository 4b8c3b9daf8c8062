"""Retrieval benchmarks (issue 3): tool latency on 10,000 memories in 200 folders, BM25
index build time and size, tree open time, LLM round trips per question. Prints figures.

    .venv/bin/python tests/benchmarks/bench_retrieval.py [--memories 10000] [--folders 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.models import GamMeta
from gam_desktop.engine.retrieval.search import index_size
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import ReadmeEntry, render_memory, render_readme
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer

WORDS = (
    "model network attention gradient tensor kernel cache thread lock queue socket "
    "packet router schema index query planner token parser lexer compiler garbage heap "
    "stack vector matrix graph tree hash bloom filter shard replica leader follower "
    "consensus ledger block chain wallet market price option future bond yield"
).split()


def generate(root: Path, memories: int, folders: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    per_group = max(1, folders // 20)
    paths = []
    for f in range(folders):
        folder = root / f"topic_{f // per_group:02d}" / f"subject_{f:03d}"
        folder.mkdir(parents=True)
        entries = []
        for m in range(memories // folders):
            words = rng.sample(WORDS, 12)
            body = (
                f"Memory {f}-{m} explains how the {words[0]} relates to the {words[1]} "
                f"and the {words[2]}. " + " ".join(rng.choices(WORDS, k=60)) + "."
            )
            name = f"{words[0]}_{words[1]}_{m}"
            (folder / f"{name}.md").write_text(
                render_memory(
                    {"title": name, "index": len(paths), "tldr": body.split(". ")[0] + "."}, body
                )
            )
            entries.append(ReadmeEntry(name, False, body.split(". ")[0] + "."))
            paths.append(f"{folder.relative_to(root).as_posix()}/{name}.md")
        (folder / "README.md").write_text(render_readme(folder.name, "Generated.", entries))
    for group in sorted(p for p in root.iterdir() if p.is_dir()):
        subs = [ReadmeEntry(s.name, True, "Generated subject.") for s in sorted(group.iterdir())]
        (group / "README.md").write_text(render_readme(group.name, "Generated group.", subs))
    (root / "README.md").write_text(render_readme("Benchmark", "Generated memory.", []))
    (root / ".gam_meta.json").write_text(GamMeta(total_chunks=len(paths)).model_dump_json())
    return paths


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        started = time.perf_counter()
        paths = generate(root, args.memories, args.folders)
        print(
            f"generated {len(paths)} memories in {args.folders} folders "
            f"({time.perf_counter() - started:.1f} s)"
        )
        started = time.perf_counter()
        view = MemoryFolder(root).load_view()
        print(
            f"open the folder view (names + READMEs): "
            f"{(time.perf_counter() - started) * 1000:.0f} ms ({view.memory_count()} memories)"
        )

        tools = MemoryTools(root)
        started = time.perf_counter()
        tools.corpus.refresh()
        print(f"corpus first load (read every file): {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        tools.index.ensure_built()
        print(
            f"BM25 index build (cold, tokenize all): {time.perf_counter() - started:.2f} s, "
            f"cache {index_size(root) / 2**20:.1f} MiB"
        )
        fresh = MemoryTools(root)
        fresh.corpus.refresh()
        started = time.perf_counter()
        fresh.index.ensure_built()
        print(
            f"BM25 index build (new process, tokens from cache): "
            f"{time.perf_counter() - started:.2f} s"
        )

        folders = sorted({p.rsplit("/", 1)[0] for p in paths})
        cases = {
            "ls": lambda: tools.ls(rng.choice(folders)),
            "cat": lambda: tools.cat(rng.choice(paths)),
            "grep (whole memory)": lambda: tools.grep(rng.choice(WORDS)),
            "grep (one folder)": lambda: tools.grep(rng.choice(WORDS), rng.choice(folders)),
            "bm25_search": lambda: tools.bm25_search(" ".join(rng.sample(WORDS, 3))),
            "corpus refresh (no change)": tools.corpus.refresh,
        }
        print(f"\ntool latency over {args.runs} calls (ms): p50 / p95")
        for name, fn in cases.items():
            p50, p95 = timed(fn, args.runs)
            print(f"  {name:28s} {p50:7.1f} / {p95:7.1f}")

        questions = [
            "What is the planner?",
            "How does consensus work?",
            "Explain the BLOOM filter",
            "What about gradient and tensor?",
            "How do I bake bread?",
        ]
        with RunningServer() as server:
            settings = LLMSettings(base_url=server.base_url, model="scripted")
            workflow = Workflow(gam_dir=root, settings=settings)
            trips = []
            for question in questions:
                before = len(server.state.requests)
                workflow.request(question)
                trips.append(len(server.state.requests) - before)
        print(
            f"\nLLM round trips per question (scripted agent): {trips} "
            f"(mean {statistics.mean(trips):.1f})"
        )


if __name__ == "__main__":
    main()
