"""History benchmarks (issue 4) on a memory of 10,000 files. Prints figures.

    .venv/bin/python tests/benchmarks/bench_history.py [--memories 10000] [--operations 1000]

Measures: the commit of one operation (staging included), listing 1,000 operations,
an outside save until its commit and the search index refresh, and the rollback of a
100-file reorganization.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.ingest.builder import BuildOptions
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.benchmarks.bench_retrieval import generate
from tests.documents import topic_document


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--operations", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, RunningServer() as server:
        root = Path(tmp) / "memory"
        root.mkdir()
        generate(root, args.memories, 200)
        settings = LLMSettings(base_url=server.base_url, model="scripted")
        workflow = Workflow(
            gam_dir=root, settings=settings, options=BuildOptions(reorganize_threshold=10**6)
        )
        started = time.perf_counter()
        repo = workflow.versioned.repo
        repo.commit_all("Started keeping history", {"Gam-Operation": "snapshot"})
        print(f"first commit of {args.memories} files: {time.perf_counter() - started:.1f} s")

        samples = []
        for i in range(5):
            for j in range(5):
                (root / f"topic_00/subject_000/new_{i}_{j}.md").write_text(f"Memory {i} {j}.\n")
            started = time.perf_counter()
            repo.commit_all(f"Added 5 memories ({i})", {"Gam-Operation": "add"})
            samples.append(time.perf_counter() - started)
        print(
            f"commit of one operation (5 new files, 10k tracked): median "
            f"{ms(statistics.median(samples))}, max {ms(max(samples))}"
        )

        workflow.request("warm up the search index")
        started = time.perf_counter()
        workflow.add(text=topic_document({"python": 3}))
        print(
            f"a whole add (3 memories, scripted LLM, commit included): "
            f"{ms(time.perf_counter() - started)}"
        )

        log = root / "log.md"
        log.write_text("start\n")
        subprocess.run(["git", "-C", str(root), "add", "log.md"], check=True)
        for i in range(args.operations - workflow.history.count()):
            log.write_text(f"entry {i}\n")
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(root),
                    "-c",
                    "user.name=b",
                    "-c",
                    "user.email=b@b",
                    "commit",
                    "-qam",
                    f"Operation {i}",
                    "--trailer",
                    "Gam-Operation: manual-edit",
                ],
                check=True,
            )
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            operations = workflow.history.operations(limit=1000)
            samples.append(time.perf_counter() - started)
        print(f"listing {len(operations)} operations: median {ms(statistics.median(samples))}")

        done = threading.Event()
        watcher = workflow.watch(lambda edit: done.set())
        time.sleep(0.5)
        target = root / "topic_01" / "quokka_fact.md"
        started = time.perf_counter()
        target.write_text(render_memory({"title": "quokka"}, "Quokkas live on Rottnest."))
        done.wait(30)
        refreshed = time.perf_counter() - started  # committed and the search index rebuilt
        found = workflow.request("Where do quokkas live?").sources
        answered = time.perf_counter() - started
        watcher.stop()
        print(
            f"outside save -> committed and search index refreshed: {ms(refreshed)} "
            f"(0.4 s of it is the quiet period); -> a question answered from it: "
            f"{ms(answered)} (sources {found})"
        )

        folder = root / "topic_01" / "subject_010"
        for i in range(100):
            topic = ["python", "rust", "docker", "git"][i % 4]
            (folder / f"{topic}_extra_{i}.md").write_text(
                render_memory(
                    {"title": f"{topic}_extra_{i}", "tldr": f"{topic.title()} fact {i}."},
                    f"{topic.title()} fact number {i}.",
                )
            )
        repo.commit_all("Added 100 files", {"Gam-Operation": "add"})
        started = time.perf_counter()
        operation = workflow.reorganize("topic_01/subject_010")
        reorganized = time.perf_counter() - started
        sha = workflow.history.operations(limit=1)[0].sha
        started = time.perf_counter()
        workflow.rollback(sha)
        rolled = time.perf_counter() - started
        print(
            f"reorganize {len(operation.moved_files)} files: {ms(reorganized)}; "
            f"its rollback: {ms(rolled)}"
        )


if __name__ == "__main__":
    main()
