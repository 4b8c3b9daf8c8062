"""The find box's tree filter (issue 13, item 8) at 10,000 memories: the time
`MemoryTree.set_filter` takes for each keystroke of a query typed letter by letter, on
the GUI thread, the titles already read (as the find box hands them over). Prints figures;
asserts nothing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_filter.py \
        [--memories 10000] [--folders 200] [--query "cache lock"] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gam_desktop.engine.retrieval.find import titles
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.gui.app import make_app
from gam_desktop.gui.tree_panel import MemoryTree
from tests.benchmarks.bench_retrieval import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--query", default="cache lock")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = make_app(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        paths = generate(root, args.memories, args.folders)
        print(f"{len(paths)} memories in {args.folders} folders; typing {args.query!r}")
        tree = MemoryTree()
        tree.resize(300, 800)
        tree.show()
        tree.show_folder(MemoryFolder(root))
        every_title = titles(MemoryTools(root))
        tree.set_filter("", every_title)
        app.processEvents()
        prefixes = [args.query[:i] for i in range(1, len(args.query) + 1)]
        samples: dict[str, list[float]] = {prefix: [] for prefix in prefixes}
        items: dict[str, int] = {}
        for _ in range(args.runs):
            for prefix in [*prefixes, ""]:
                started = time.perf_counter()
                tree.set_filter(prefix)
                app.processEvents()  # what the person waits for: the tree drawn again
                elapsed = (time.perf_counter() - started) * 1000
                if prefix:
                    samples[prefix].append(elapsed)
                    items[prefix] = _items(tree)
        print(f"\nset_filter per keystroke, median of {args.runs} runs (ms), items in the tree")
        for prefix in prefixes:
            print(
                f"  {prefix!r:14s} {statistics.median(samples[prefix]):8.1f} ms"
                f"  {items[prefix]:6d} items"
            )
        every = [ms for runs in samples.values() for ms in runs]
        print(
            f"\nall keystrokes: median {statistics.median(every):.1f} ms, worst {max(every):.1f} ms"
        )
        tree.close()
        del tree
    app.shutdown()  # every Qt object deleted while Python is whole (as gui/app.py does)


def _items(tree: MemoryTree) -> int:
    count, stack = 0, [tree.invisibleRootItem()]
    while stack:
        item = stack.pop()
        for i in range(item.childCount()):
            count += 1
            stack.append(item.child(i))
    return count


if __name__ == "__main__":
    main()
