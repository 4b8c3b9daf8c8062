"""Parallel calls against servers that work on 1, 2 or 8 requests at once (issue 36): fixed
`workers` 1/2/4/8 and automatic, the same add of nine documents (~29 chunks) each time.
Prints a table; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_concurrency.py [--latency-ms 2000] [--slots 1 2 8]
    .venv/bin/python tests/benchmarks/bench_concurrency.py --shared [--other-s 10]

`--shared`: one slot shared with another client, as a local server also serving an
evaluation is: during the add, a second thread sends its own calls to the same one-slot
server, one after another, each holding the slot for the latency plus `--other-s` seconds
(its longer prompts), through no limiter of ours. Our first tokens then come late by however
much of the other client's call is ahead of ours, which our limiter cannot see. It prints
our calls sent (counted by the client), the memorize calls among them, the summaries kept,
the calls abandoned (given up for silence and asked again; "at server": the hang-ups the
server saw, a cross-check) and the other client's calls answered meanwhile.

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
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.llm import LLMClient, LLMSettings, capabilities, concurrency
from gam_desktop.engine.llm.protocol import STAGE_HEADER
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.progress import ProgressEvent
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer, task_of

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


def run(
    server: RunningServer, folder: Path, files: list[Path], workers: int, settle: bool = True
) -> Run:
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
    if settle:  # (not while another client keeps a call in flight)
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


class OtherClient:
    """Another program at the same server: one call after another, each holding the slot
    for the server's latency plus `extra` seconds (the scripted server's "slow" fault on its
    task, "chat", which the add never asks), sent without our client or limiter."""

    def __init__(self, server: RunningServer, extra: float) -> None:
        self.server, self.sent, self.calls = server, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="other-client", daemon=True)
        server.state.faults.append(Fault("slow", times=10**9, task="chat", seconds=extra))

    def __enter__(self) -> OtherClient:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=600)
        self.server.state.faults.clear()

    def _run(self) -> None:
        body = {"model": "other", "messages": [{"role": "user", "content": "Evaluate this."}]}
        while not self._stop.is_set():
            self.sent += 1
            request = urllib.request.Request(
                f"{self.server.base_url}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=600) as response:
                response.read()
            self.calls += 1


class Sent:
    """Our requests, counted as the client sends them (the scripted server records a
    request only once it has a slot: one abandoned in the queue is never recorded), by
    task, and those that ended silent (abandoned: no first token, or no next one)."""

    def __init__(self) -> None:
        self.tasks: Counter[str] = Counter()
        self.silent: Counter[str] = Counter()
        self._send = LLMClient._send

    def __enter__(self) -> Sent:
        counts, send = self, self._send

        def counted(client: LLMClient, kwargs: dict[str, Any], *args: Any) -> Any:
            task = task_of(kwargs["messages"], kwargs["extra_headers"][STAGE_HEADER])
            counts.tasks[task] += 1
            try:
                return send(client, kwargs, *args)
            except Exception as exc:
                if type(exc).__name__ in ("Silent", "NoFirstToken"):
                    counts.silent[task] += 1
                raise

        LLMClient._send = counted  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_exc: object) -> None:
        LLMClient._send = self._send  # type: ignore[method-assign]


def shared(
    root: Path, files: list[Path], latency_ms: float, other_s: float, workers: list[int]
) -> None:
    """The add with one slot shared with another client: our calls sent, kept, abandoned."""
    print(
        f"one slot shared with another client: latency {latency_ms / 1000:g} s per call, the "
        f"other client's calls {latency_ms / 1000 + other_s:g} s each, silence limit 8 s"
    )
    print(
        f"{'workers':>7} {'wall s':>7} {'calls sent':>10} {'memorize':>8} {'kept':>5} "
        f"{'sent/kept':>9} {'abandoned':>9} {'at server':>9} {'other calls':>11}"
    )
    for n in workers:
        with RunningServer(latency_ms=latency_ms, slots=1) as server:
            with OtherClient(server, other_s) as other:
                server.state.slots.wait_until(lambda s: s.received >= 1)  # it is in the slot
                with Sent() as sent:
                    r = run(server, root / f"memory-shared-{n}", files, n, settle=False)
            memorize = sent.tasks["memorize"]
            ratio = memorize / r.kept if r.kept else float("inf")
            print(
                f"{r.workers:>7} {r.wall:>7.1f} {sum(sent.tasks.values()):>10} {memorize:>8} "
                f"{r.kept:>5} {ratio:>9.2f} {sum(sent.silent.values()):>9} {r.abandoned:>9} "
                f"{other.calls:>11}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=2000)
    parser.add_argument("--slots", type=int, nargs="*", default=[1, 2, 8])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4, 8, 0])
    parser.add_argument("--shared", action="store_true", help="one slot shared with a client")
    parser.add_argument("--other-s", type=float, default=10.0, help="its calls' extra seconds")
    args = parser.parse_args()
    count_tokens("warm up")  # the server's first usage count loads the tokenizer
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for n, topic in enumerate(TOPICS):  # 3 chapters each, 4 in two: 29 chunks
            files.append(root / f"{topic}.md")
            files[-1].write_text(document(topic, 4 if n < 2 else 3), encoding="utf-8")
        if args.shared:
            shared(root, files, args.latency_ms, args.other_s, args.workers)
            return
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
