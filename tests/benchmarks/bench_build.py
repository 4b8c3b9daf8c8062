"""Build benchmarks (issue 2): LLM calls and tokens per chunk, wall time against the ideal,
engine overhead. Prints figures; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_build.py [--latency-ms 500] [--workers 8]

Ideal wall time, as the issue defines it: for each stage, calls / workers * latency, summed.
A stage of one call (organize, place) cannot go faster than one latency, so the script
also prints the round ideal: ceil(calls / workers) * latency per stage, the real floor.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport
from gam_desktop.engine.ingest.context import NUMBER
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.workflow import Workflow

TOPICS = [
    "python",
    "rust",
    "javascript",
    "haskell",
    "docker",
    "git",
    "linux",
    "sql",
    "networking",
    "security",
    "compilers",
    "databases",
    "graphics",
    "audio",
    "robotics",
    "statistics",
    "calculus",
    "physics",
    "chemistry",
    "biology",
]


def varied_document(words: int, seed: int = 0) -> str:
    """Sections on rotating topics, each a few paragraphs of distinct sentences."""
    out, count, i = [], 0, 0
    while count < words:
        topic = TOPICS[(seed + i // 4) % len(TOPICS)]
        if i % 4 == 0:
            out.append(f"# {topic.title()} chapter {i // 4}")
        sentence = (
            f"In {topic} study {i}, fact {i * 7 % 13} links idea {i % 5} to result "
            f"{i * 3 % 11} through measurement {i * 17 % 29} of the {topic} system. "
        )
        paragraph = "".join(sentence.replace("study", f"study {k}") for k in range(6))
        out.append(paragraph)
        count += len(paragraph.split())
        i += 1
    return "\n\n".join(out)


@contextlib.contextmanager
def external_server(latency_ms: float) -> Iterator[str]:
    """The scripted server in its own process, as a real provider would be: in-process it
    would compete with the client threads for the GIL and inflate the engine's figures."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gam_desktop.selfcheck.scripted_llm",
            "--port",
            str(port),
            "--latency-ms",
            str(latency_ms),
        ],
        stdout=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{base_url}/models", timeout=1).close()
                break
            time.sleep(0.1)
        yield base_url
    finally:
        process.terminate()
        process.wait(10)


def settings_for(base_url: str, workers: int) -> LLMSettings:
    return LLMSettings(
        base_url=base_url, model="scripted", api_key="bench", workers=workers, timeout=60
    )


def run(
    server: str, folder: Path, texts: list[str], workers: int, chunk: ChunkConfig
) -> tuple[BuildReport, float]:
    workflow = Workflow(
        gam_dir=folder, settings=settings_for(server, workers), options=BuildOptions(chunk=chunk)
    )
    files = []
    for n, text in enumerate(texts):
        path = folder.parent / f"{folder.name}-doc{n}.md"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    started = time.perf_counter()
    report = workflow.add(files=files)
    return report, time.perf_counter() - started


def describe(
    label: str, report: BuildReport, elapsed: float, input_tokens: int, latency: float, workers: int
) -> None:
    usage = report.usage
    calls_per_chunk = usage.calls / max(report.chunks, 1)
    ratio = usage.prompt_tokens / max(input_tokens, 1)
    print(f"\n== {label}")
    print(f"chunks {report.chunks}, LLM calls {usage.calls} -> {calls_per_chunk:.2f} calls/chunk")
    print(
        f"input tokens {input_tokens}, prompt tokens {usage.prompt_tokens} -> "
        f"{ratio:.2f} prompt tokens per input token; completion {usage.completion_tokens}"
    )
    print("calls by stage: " + ", ".join(f"{k} {v.calls}" for k, v in usage.stages.items()))
    if latency:
        ideal = sum(s.calls / workers * latency for s in usage.stages.values())
        rounds = sum(math.ceil(s.calls / workers) * latency for s in usage.stages.values())
        print(
            f"wall {elapsed:.2f} s; ideal (calls/workers*latency) {ideal:.2f} s -> "
            f"{elapsed / ideal:.2f}x; round ideal {rounds:.2f} s -> {elapsed / rounds:.2f}x"
        )
    else:
        print(f"wall {elapsed:.2f} s -> {report.chunks / elapsed:.1f} chunks/s engine throughput")


def fact_quality(root: Path) -> str:
    """The share of the chunks' numbers that their memories keep (issue 10's memory quality
    figure), in the note a person reads: its tldr and its body (nothing is pasted back from
    the original since issue 35: the original is kept and searched beside the note)."""
    folder = MemoryFolder(root)
    kept, total, memories = 0, 0, 0
    for node in folder.load_view().walk():
        for name, front in folder.read_fronts(node).items():
            original = folder.original_text(front) or ""
            body = parse_memory((root / node.path / name).read_text(encoding="utf-8")).body
            numbers = set(NUMBER.findall(original))
            kept += len(numbers & set(NUMBER.findall(f"{front.get('tldr', '')} {body}")))
            total += len(numbers)
            memories += 1
    share = f"{kept / total:.1%}" if total else "100%"
    return f"memory quality: {share} of the chunks' {total} numbers are in their {memories} notes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=500)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    chunk = ChunkConfig()  # the defaults: 100-1000 tokens
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with external_server(args.latency_ms) as server:
            doc = varied_document(5000)
            report, elapsed = run(server, root / "single", [doc], args.workers, chunk)
            describe(
                "full build, one 5,000-word document",
                report,
                elapsed,
                count_tokens(doc),
                latency,
                args.workers,
            )
            print(fact_quality(root / "single"))

            batch = [varied_document(400, seed=s) for s in range(20)]
            report, elapsed = run(server, root / "single", batch, args.workers, chunk)
            describe(
                "batch of 20 documents added to that memory",
                report,
                elapsed,
                sum(count_tokens(t) for t in batch),
                latency,
                args.workers,
            )

            big = varied_document(60_000)
            report, elapsed = run(server, root / "big", [big], args.workers, chunk)
            describe(
                "full build, one 60,000-word document",
                report,
                elapsed,
                count_tokens(big),
                latency,
                args.workers,
            )

        with external_server(0) as server:
            big = varied_document(100_000, seed=3)
            small = ChunkConfig(min_tokens=50, max_tokens=300)
            report, elapsed = run(server, root / "overhead", [big], args.workers, small)
            describe(
                "engine overhead, zero-latency server, 100,000 words",
                report,
                elapsed,
                count_tokens(big),
                0,
                args.workers,
            )


if __name__ == "__main__":
    main()
