"""Parallel calls against servers that work on 1, 2 or 8 requests at once (issue 36): fixed
`workers` 1/2/4/8 and automatic, the same add of nine documents (~29 chunks) each time.
Prints a table; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_concurrency.py [--latency-ms 2000] [--slots 1 2 8]

The scripted server with slots works as llama-server with `-np N`: N requests at a time,
each taking the latency, the rest waiting in a FIFO queue; it counts the calls it received,
completed and abandoned (the client hung up before the reply). The client's silence limit
is 8 s (`--timeout 8`, as in the issue), shorter than the wait in a one-slot queue of 8.

Targets: memorize calls sent / summaries kept <= 1.05, none abandoned, and the automatic
wall time <= 1.15x the best fixed `workers` for that server. "memorize s" is the time from
the first chunk's call to the last one's reply: what parallel calls change; the rest of the
wall time is reading, planning, writing and committing (git and the disk, which a shared
machine makes vary by tens of seconds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.llm import LLMSettings, capabilities, concurrency
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.progress import ProgressEvent
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer

TOPICS = ("harbour", "orchard", "glacier", "violin", "comet", "bakery", "canal", "falcon", "quarry")


def document(topic: str, sections: int = 3) -> str:
    """`sections` chapters about `topic`, each about one chunk at the default sizes."""
    out = [f"# The {topic} handbook"]
    for n in range(sections):
        out.append(f"## {topic.title()} chapter {n}")
        for k in range(9):
            out.append(
                f"Record {n}.{k} of the {topic}: measurement {n * 31 + k * 7} was taken on "
                f"day {k + 3} and logged by team {n + k % 5}. " * 4
            )
    return "\n\n".join(out)


@dataclass
class Run:
    slots: int
    workers: str
    wall: float
    summarizing: float  # seconds from the first chunk's call to the last one's reply
    memorize: int  # memorize calls the server received
    calls: int  # every call it received
    kept: int  # summaries written by the model (not the extractive fallback)
    chunks: int
    abandoned: int
    limit: int | None  # the automatic limit at the end


def run(server: RunningServer, folder: Path, files: list[Path], workers: int) -> Run:
    capabilities.forget_all()  # each run learns from nothing
    settings = LLMSettings(
        base_url=server.base_url, model="scripted", api_key="bench", timeout=8, workers=workers
    )
    state = server.state
    before = (len(state.tasks()), state.tasks().count("memorize"), state.slots.abandoned)
    seen: list[float] = []  # when the summarizing stage reported

    def progress(event: ProgressEvent) -> None:
        if event.stage == "memorize":
            seen.append(time.perf_counter())

    started = time.perf_counter()
    report = Workflow(gam_dir=folder, settings=settings, progress=progress).add(files=files)
    wall = time.perf_counter() - started
    state.slots.wait_until(lambda s: s.received == s.completed + s.abandoned, 30)
    return Run(
        state.slots.count,
        str(workers or "auto"),
        wall,
        seen[-1] - seen[0] if seen else 0.0,
        state.tasks().count("memorize") - before[1],
        len(state.tasks()) - before[0],
        report.chunks - report.fallbacks,
        report.chunks,
        state.slots.abandoned - before[2],
        concurrency.current(server.base_url, "scripted") if workers == 0 else None,
    )


def table(runs: list[Run]) -> None:
    print(
        f"{'slots':>5} {'workers':>7} {'wall s':>7} {'vs best':>7} {'memorize s':>10} "
        f"{'vs best':>7} {'memorize':>8} {'all calls':>9} {'kept':>5} {'sent/kept':>9} "
        f"{'abandoned':>9} {'limit':>5}"
    )
    for slots in sorted({r.slots for r in runs}):
        mine = [r for r in runs if r.slots == slots]
        best = min(r.wall for r in mine if r.workers != "auto")
        fastest = min(r.summarizing for r in mine if r.workers != "auto") or 1.0
        for r in mine:
            ratio = r.memorize / r.kept if r.kept else float("inf")
            print(
                f"{r.slots:>5} {r.workers:>7} {r.wall:>7.1f} {r.wall / best:>7.2f} "
                f"{r.summarizing:>10.1f} {r.summarizing / fastest:>7.2f} {r.memorize:>8} "
                f"{r.calls:>9} {r.kept:>5} {ratio:>9.2f} {r.abandoned:>9} "
                f"{'' if r.limit is None else r.limit:>5}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=2000)
    parser.add_argument("--slots", type=int, nargs="*", default=[1, 2, 8])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4, 8, 0])
    args = parser.parse_args()
    count_tokens("warm up")  # the server's first usage count loads the tokenizer
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for n, topic in enumerate(TOPICS):  # 3 chapters each, 4 in two: 29 chunks
            files.append(root / f"{topic}.md")
            files[-1].write_text(document(topic, 4 if n < 2 else 3), encoding="utf-8")
        for slots in args.slots:
            with RunningServer(latency_ms=args.latency_ms, slots=slots) as server:
                for workers in args.workers:
                    folder = root / f"memory-{slots}-{workers}"
                    runs.append(run(server, folder, files, workers))
                    print(runs[-1], flush=True)
    print()
    print(f"latency {args.latency_ms / 1000:g} s per call, silence limit 8 s, {len(TOPICS)} docs")
    table(runs)


if __name__ == "__main__":
    main()
