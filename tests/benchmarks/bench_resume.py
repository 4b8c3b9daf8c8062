"""Resume benchmark (issue 14): a big ingest through the scripted server, killed (-9) at 60%
of its memorize calls and run again, against the same ingest uninterrupted. Prints the calls
made against the calls needed (target: at most 1.02 times) and the wall times; asserts
nothing.

    .venv/bin/python tests/benchmarks/bench_resume.py [--documents 500] [--latency-ms 200]
        [--workers 8] [--kill-at 0.6]

`gam-add` runs in its own process (the kill is a real SIGKILL); the server runs here, so
every request is counted by task. Calls needed are the uninterrupted run's; calls made are
both runs of the interrupted one. A kill inside a step's write leaves an interrupted
operation, recovered here (restore, no LLM) before the second run, as a person would.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.workflow import Workflow
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.clirun import cli_command
from tests.documents import document_files


def environment(base_url: str, home: Path, workers: int) -> dict[str, str]:
    """gam-add's environment: the server, and app folders of the benchmark's own."""
    return {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "bench",
        "GAM_LLM_WORKERS": str(workers),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }


def command(memory: Path, docs: Path) -> list[str]:
    return cli_command("add_main", "--gam-dir", str(memory), "--files", str(docs), "-q")


def add(memory: Path, docs: Path, env: dict[str, str]) -> tuple[float, str]:
    """Run gam-add to the end; its wall time and what it said."""
    started = time.perf_counter()
    done = subprocess.run(command(memory, docs), env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"gam-add failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done.stderr


def killed_add(
    memory: Path, docs: Path, env: dict[str, str], server: RunningServer, after: int
) -> float:
    """Run gam-add and kill it (-9) once the server has answered `after` memorize calls."""
    started = time.perf_counter()
    mark = len(server.state.requests)
    process = subprocess.Popen(
        command(memory, docs), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    while server.state.tasks()[mark:].count("memorize") < after:
        if process.poll() is not None:
            raise SystemExit("gam-add ended before the kill")
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    return time.perf_counter() - started


def calls(server: RunningServer, since: int = 0) -> Counter[str]:
    return Counter(server.state.tasks()[since:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--kill-at", type=float, default=0.6)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gam-bench-resume-"))
    docs = base / "docs"
    document_files(docs, args.documents)
    print(
        f"{args.documents} documents, {args.latency_ms:g} ms per call, {args.workers} workers, "
        f"killed at {args.kill_at:.0%} of the memorize calls; in {base}"
    )
    with RunningServer(latency_ms=args.latency_ms) as server:
        server.httpd.handle_error = lambda *_args: None  # the killed client's broken pipes
        env = environment(server.base_url, base / "home", args.workers)
        whole, _ = add(base / "uninterrupted", docs, env)
        needed = calls(server)
        print(f"\nuninterrupted: {whole:.1f} s, {sum(needed.values())} calls {dict(needed)}")

        mark = len(server.state.requests)
        after = int(args.documents * args.kill_at)
        first = killed_add(base / "interrupted", docs, env, server, after)
        made_first = calls(server, mark)
        memory = base / "interrupted"
        settings = LLMSettings(base_url=server.base_url, model="scripted", api_key="bench")
        workflow = Workflow(gam_dir=memory, settings=settings)
        recovered = ""
        if workflow.interrupted() is not None:  # killed inside a step's write
            recovered = workflow.recover(restore=True)
        mark_second = len(server.state.requests)
        second, said = add(memory, docs, env)
        made_second = calls(server, mark_second)
    made = made_first + made_second
    resumed = [line for line in said.splitlines() if "Resuming" in line]
    print(f"killed after {first:.1f} s: {sum(made_first.values())} calls {dict(made_first)}")
    if recovered:
        print(f"recovered: {recovered}")
    print(f"run again: {second:.1f} s, {sum(made_second.values())} calls {dict(made_second)}")
    print(f"  it said: {resumed[0] if resumed else '(no resume line)'}")
    total_needed, total_made = sum(needed.values()), sum(made.values())
    print("\n== figures")
    print(
        f"calls made / calls needed: {total_made} / {total_needed} = "
        f"{total_made / total_needed:.3f}x (target <= 1.02x)"
    )
    print(
        f"memorize calls made / needed: {made['memorize']} / {needed['memorize']} = "
        f"{made['memorize'] / max(needed['memorize'], 1):.3f}x"
    )
    print(
        f"wall time, killed + resumed vs uninterrupted: {first:.1f} + {second:.1f} = "
        f"{first + second:.1f} s vs {whole:.1f} s ({(first + second) / whole:.2f}x)"
    )


if __name__ == "__main__":
    main()
