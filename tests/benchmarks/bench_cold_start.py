"""Cold start to a shown window (issue 13; target ≤ 1.5 s at 10,000 memories): the real
`python -m gam_desktop <folder>`, offscreen, timed from the process's start to the line it
prints once its window is shown with the memory open (GAM_EXIT_WHEN_SHOWN), then it quits.
Prints figures; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_cold_start.py [--memories 10000] [--runs 5]

The memory is synthetic (bench_retrieval.generate: 200 folders with READMEs), committed as
one operation, as a built memory is. The first run also reads the files into the page cache;
the median says what a start usually costs.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_retrieval import generate  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def make_memory(root: Path, memories: int) -> None:
    root.mkdir()
    generate(root, memories, 200)
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", "Build"], check=True)


def start(memory: Path, home: Path) -> tuple[float, float]:
    """Seconds to the shown window, and the CPU seconds the app had used by then (what the
    start costs on an idle machine, give or take the disk)."""
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "QT_QPA_PLATFORM": "offscreen",
        "GAM_EXIT_WHEN_SHOWN": "1",
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "gam_desktop", str(memory)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    shown, cpu = None, 0.0
    for line in process.stdout:
        said = re.match(r"window shown \(CPU ([\d.]+) s\)", line)
        if said:
            shown, cpu = time.perf_counter() - started, float(said.group(1))
            process.kill()  # its quitting (it waits for the warm-up) is not measured
            break
    process.wait(120)
    if shown is None:
        raise SystemExit(f"the app exited ({process.returncode}) without showing its window")
    return shown, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        make_memory(memory, args.memories)
        runs = [start(memory, Path(tmp) / "home") for _ in range(args.runs)]
    shown, cpu = [r[0] for r in runs], [r[1] for r in runs]
    print(
        f"cold start to a shown window with {args.memories:,} memories: median "
        f"{statistics.median(shown):.2f} s over {args.runs} runs "
        f"({', '.join(f'{s:.2f}' for s in shown)}); CPU used by then: median "
        f"{statistics.median(cpu):.2f} s (load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
