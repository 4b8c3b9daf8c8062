"""gam-serve benchmarks (issue 16): the read path's added latency at 10,000 memories
(p50/p95, the upstream excluded), and the requests per second gam-serve sustains for 60 s
with a zero-latency upstream at 8 concurrent clients, with no error and no lost turn (every
turn on disk and in git once it has stopped). Prints figures.

    .venv/bin/python tests/benchmarks/bench_serve.py [--memories 10000] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx2

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.workflow import Workflow
from gam_desktop.serve import retrieval
from gam_desktop.serve.retrieval import ReadOptions
from tests.benchmarks.bench_retrieval import WORDS, generate

TOKEN = "bench-token-0123456789"
SERVE = "import sys; from gam_desktop.serve.cli import serve_main; sys.exit(serve_main())"
ROOT = Path(__file__).resolve().parents[2]


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def read_path_latency(root: Path, runs: int) -> None:
    """retrieval.passages + inject per request, on a warm index (as the server has it)."""
    tools = MemoryTools(root)
    tools.corpus.refresh()
    tools.index.ensure_built()
    rng = random.Random(3)
    samples = []
    for _ in range(runs):
        words = rng.sample(WORDS, 3)
        messages = [{"role": "user", "content": f"What do I know about the {' and '.join(words)}?"}]
        started = time.perf_counter()
        found = retrieval.passages(tools, retrieval.query_of(messages), ReadOptions())
        retrieval.inject(messages, found)
        samples.append((time.perf_counter() - started) * 1000)
    p50, p95 = percentiles(samples)
    print(
        f"read path (BM25 + recency + MMR + injection), {runs} requests: "
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_up(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx2.get(url, timeout=2)
            return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


class Load:
    """Clients asking distinct questions as fast as answers come, counting what happens."""

    def __init__(self, url: str, clients: int, seconds: float) -> None:
        self.url, self.clients, self.seconds = url, clients, seconds
        self.sent: list[str] = []
        self.errors: list[str] = []
        self.latencies: list[float] = []
        self.lock = threading.Lock()

    def run(self) -> float:
        stop = time.monotonic() + self.seconds
        threads = [
            threading.Thread(target=self._client, args=(n, stop)) for n in range(self.clients)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started

    def _client(self, n: int, stop: float) -> None:
        rng = random.Random(n)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx2.Client(base_url=self.url, headers=headers, timeout=60) as http:
            count = 0
            while time.monotonic() < stop:
                question = f"Client {n} question {count}: what about the {rng.choice(WORDS)}?"
                body = {"model": "gam", "messages": [{"role": "user", "content": question}]}
                started = time.perf_counter()
                try:
                    response = http.post("/v1/chat/completions", json=body)
                except httpx2.TransportError as exc:  # counted, and the client goes on
                    with self.lock:
                        self.errors.append(f"{type(exc).__name__}: {exc}")
                    count += 1
                    continue
                elapsed = (time.perf_counter() - started) * 1000
                with self.lock:
                    if response.status_code == 200:
                        self.sent.append(question)
                        self.latencies.append(elapsed)
                    else:
                        self.errors.append(f"{response.status_code}: {response.text[:200]}")
                count += 1


def throughput(root: Path, seconds: float, clients: int) -> None:
    upstream_port, serve_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    upstream = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "--port", str(upstream_port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{upstream_port}/v1"
    serve_env = {
        **env,
        "OPENAI_BASE_URL": base,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "bench",
        "GAM_SERVE_TOKEN": TOKEN,
    }
    command = [sys.executable, "-c", SERVE, "--gam-dir", str(root), "--port", str(serve_port)]
    try:
        wait_up(f"{base}/models", upstream)
        server = subprocess.Popen(
            command, cwd=ROOT, env=serve_env, stderr=subprocess.PIPE, text=True
        )
        url = f"http://127.0.0.1:{serve_port}"
        wait_up(f"{url}/health", server)
        load = Load(url, clients, seconds)
        elapsed = load.run()
        pending = httpx2.get(f"{url}/health").json()["pending_turns"]
        served = len(load.sent)
        p50, p95 = percentiles(load.latencies) if load.latencies else (0.0, 0.0)
        print(
            f"\n{clients} clients for {elapsed:.0f} s, zero-latency upstream: {served} requests, "
            f"{served / elapsed:.1f} requests/s, {len(load.errors)} errors; "
            f"latency p50 {p50:.0f} ms, p95 {p95:.0f} ms"
        )
        for error in load.errors[:3]:
            print(f"  error: {error}")
        started = time.perf_counter()
        print(f"turns still queued when the load stopped: {pending}; stopping (drains the queue)…")
        server.send_signal(signal.SIGINT)
        _, said = server.communicate(timeout=3600)
        print(f"drained and stopped in {time.perf_counter() - started:.1f} s")
        if load.errors and said.strip():
            print("gam-serve's stderr, the end:\n" + said.strip()[-3000:])
    finally:
        upstream.terminate()
        upstream.wait(30)
    check_no_lost_turn(root, load.sent)


def check_no_lost_turn(root: Path, sent: list[str]) -> None:
    saved: list[str] = []
    for info in list_conversations(root):
        saved += [turn.question for turn in parse((root / info.path).read_text()).turns]
    log = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    chats = sum(line.startswith("Chat: ") for line in log)
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lost = set(sent) - set(saved)
    print(
        f"turns answered {len(sent)}, on disk {len(set(sent) & set(saved))}, "
        f"'Chat:' commits {chats} "
        f"(turns queued meanwhile are committed together), lost {len(lost)}, "
        f"uncommitted files {len(dirty.splitlines()) if dirty else 0}"
    )
    if lost or not chats or dirty:
        raise SystemExit("FAILED: a turn was lost or left uncommitted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--load-memories",
        type=int,
        default=10_000,
        help="the memory the load runs on (every answered turn is then written: the "
        "turns queued during a commit are committed together)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        paths = generate(root, args.memories, args.folders)
        print(f"generated {len(paths)} memories in {args.folders} folders")
        read_path_latency(root, args.runs)
        write_cost(root)
        loaded = root
        if args.load_memories != args.memories:
            loaded = Path(tmp) / "loaded"
            loaded.mkdir()
            generate(loaded, args.load_memories, max(1, args.load_memories // 50))
            write_cost(loaded)
        print(f"\nload test on a memory of {args.load_memories} memories")
        throughput(loaded, args.seconds, args.clients)


def write_cost(root: Path) -> None:
    """What one saved turn costs the writer (the engine's operation: lock, journal,
    commit), the first one making the repository."""
    workflow = Workflow(gam_dir=root, settings=LLMSettings())
    started = time.perf_counter()
    workflow.save_turn("Setup?", "Set up.")
    first = time.perf_counter() - started
    samples = []
    for n in range(3):
        started = time.perf_counter()
        workflow.save_turn(f"Setup {n}?", "Set up.")
        samples.append(time.perf_counter() - started)
    print(
        f"writer: first commit (makes the repository) {first:.1f} s, then "
        f"{statistics.median(samples):.2f} s per saved turn"
    )


if __name__ == "__main__":
    main()
