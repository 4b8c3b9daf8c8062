"""Packaged-app figures (issue 6): bundle and tarball size, cold start of the frozen app to
a shown window (empty and with a 10,000-memory folder), and the --self-test wall time.

    bash packaging/build_linux.sh        # prints its build time
    .venv/bin/python tests/benchmarks/bench_frozen.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_retrieval import generate  # noqa: E402


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    # lstat, not stat: the Qt libraries are symlinked and would count twice
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir()) / 2**20


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - started, out.stdout


def main() -> None:
    bundle = ROOT / "dist" / "gam-desktop"
    binary = bundle / "gam-desktop"
    if not binary.is_file():
        sys.exit("no bundle: run bash packaging/build_linux.sh first")
    tarball = next((ROOT / "dist").glob("gam-desktop-*-linux-*.tar.gz"))
    print(
        f"bundle {size_mb(bundle):.0f} MiB ({sum(1 for _ in bundle.rglob('*'))} files); "
        f"tarball {size_mb(tarball):.0f} MiB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "HOME": tmp,
            "PATH": "/usr/bin:/bin",
            "QT_QPA_PLATFORM": "offscreen",
            "GAM_EXIT_WHEN_SHOWN": "1",
        }
        empty = [timed([str(binary)], env)[0] for _ in range(3)]
        memory = Path(tmp) / "memory"
        memory.mkdir()
        generate(memory, 10_000, 200)
        full = [timed([str(binary), str(memory)], env)[0] for _ in range(3)]
        print(
            "cold start to a shown window: empty "
            + ", ".join(f"{t:.2f}" for t in empty)
            + " s; with 10,000 memories "
            + ", ".join(f"{t:.2f}" for t in full)
            + " s"
        )
        del env["GAM_EXIT_WHEN_SHOWN"]
        seconds, out = timed([str(binary), "--self-test"], env)
        print(f"--self-test wall time {seconds:.2f} s ({out.strip().splitlines()[-1]})")


if __name__ == "__main__":
    main()
