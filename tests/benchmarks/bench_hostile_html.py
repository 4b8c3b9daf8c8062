"""Hostile web pages and books (issue 36): how long reading each takes, and its peak
memory, each in a process of its own. Prints figures; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_hostile_html.py [--case NAME ...]

The cases: a page nested 100,000 deep; an old page of 2,000 paragraphs never closed; a
page of two million empty elements (13 MB); an EPUB whose spine names one 1 MB chapter 500
times. Each line: the case, the seconds `load_file` took, the peak memory of its process,
and what came of it (the characters read, or the refusal).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.hostile_pages import deep_page, empty_elements_page, epub, old_page


def nested(folder: Path) -> Path:
    path = folder / "nested.html"
    path.write_text(deep_page(100_000))
    return path


def unclosed(folder: Path) -> Path:
    path = folder / "unclosed.html"
    path.write_text(old_page(2_000))
    return path


def elements(folder: Path) -> Path:
    path = folder / "elements.html"
    path.write_text(empty_elements_page(2_000_000))
    return path


def spine(folder: Path) -> Path:
    chapter = "<html><body>" + "<p>Otters hold hands.</p>" * 40_000 + "</body></html>"
    return epub(folder / "spine.epub", {"c.xhtml": chapter}, spine=["c.xhtml"] * 500)


CASES: dict[str, Callable[[Path], Path]] = {
    "nested 100,000 deep": nested,
    "2,000 unclosed <p>": unclosed,
    "2,000,000 empty elements": elements,
    "EPUB spine: one chapter x500": spine,
}


def one(name: str) -> None:
    """Read one case's document in this process and print its line."""
    from gam_desktop.engine.ingest.documents import DocumentError, load_file

    with tempfile.TemporaryDirectory() as tmp:
        path = CASES[name](Path(tmp))
        size = path.stat().st_size
        started = time.perf_counter()
        try:
            outcome = f"read {len(load_file(path).text):,} characters"
        except DocumentError as exc:
            outcome = f"refused: {exc}"
        seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    print(f"{name:32} {size / 2**20:7.1f} MB {seconds:8.2f} s {peak:8.0f} MB peak  {outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return
    print(f"{'case':32} {'file':>10} {'time':>10} {'memory':>13}")
    for name in args.case or list(CASES):
        subprocess.run([sys.executable, __file__, "--one", name], check=False)


if __name__ == "__main__":
    main()
