"""Transport-fault benchmark (issue 9, item 5): the same 20 documents built fault-free and
through the fault proxy (500, 429, hang, not-JSON 200, truncated body, dropped connection);
prints calls, injected faults by kind, wall time of each build, and whether the two
memories are identical (time stamps aside). Prints figures; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_faults.py [--latency-ms 200] [--rate 0.3]

A hang costs the client its whole timeout (--timeout, 2 s by default) before the retry.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.workflow import Workflow
from tests.benchmarks.bench_build import external_server, varied_document
from tests.faultproxy import KINDS, FaultProxy, memory_snapshot

CHUNKS = ChunkConfig(min_tokens=50, max_tokens=250)  # a few chunks (calls) per document


def build(
    base_url: str, folder: Path, files: list[Path], args: argparse.Namespace
) -> tuple[BuildReport, float]:
    settings = LLMSettings(
        base_url=base_url,
        model="scripted",
        api_key="bench",
        workers=args.workers,
        timeout=args.timeout,
        max_retries=8,
        backoff_base=0.05,
    )
    workflow = Workflow(gam_dir=folder, settings=settings, options=BuildOptions(chunk=CHUNKS))
    started = time.perf_counter()
    report = workflow.add(files=files)
    return report, time.perf_counter() - started


def describe(label: str, report: BuildReport, elapsed: float) -> None:
    print(f"\n== {label}")
    print(
        f"documents {len(report.documents)}, chunks {report.chunks}, "
        f"LLM calls {report.usage.calls}, fallbacks {report.fallbacks}, wall {elapsed:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for n in range(20):
            files.append(root / f"doc{n:02d}.md")
            files[-1].write_text(varied_document(400, seed=n), encoding="utf-8")
        clean, faulty = root / "clean" / "memory", root / "faulty" / "memory"
        with external_server(args.latency_ms) as server:
            # Warm up (SDK import, tokenizer, first connection) so the first build is not
            # charged for what the second one gets for free.
            build(server, root / "warm-up" / "memory", files[:1], args)
            report, elapsed = build(server, clean, files, args)
            describe("fault-free", report, elapsed)

            proxy = FaultProxy(server, rate=args.rate, seed=args.seed, hang_s=args.timeout + 1)
            with proxy:
                report, elapsed = build(proxy.base_url, faulty, files, args)
            describe(
                f"through the fault proxy, {args.rate:.0%} of requests faulty", report, elapsed
            )
            attempts = proxy.counts["forwarded"] + proxy.faults
            print(
                f"attempts {attempts}, retried faults {proxy.faults} "
                f"({proxy.faults / max(attempts, 1):.0%}): "
                + ", ".join(f"{kind} {proxy.counts[kind]}" for kind in KINDS)
            )
        same = memory_snapshot(faulty) == memory_snapshot(clean)
        print(f"\nmemories identical (time stamps aside): {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
