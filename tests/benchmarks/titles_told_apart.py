"""The titles notes get when the model gives every part of a document the same title (what
a small model often does): `titles.distinguish` and the reader's `written_title`, for each
document of the evaluation sets, no model call. Prints one title a line, the document's
parts in order, and how many titles are duplicates; asserts nothing.

    .venv/bin/python tests/benchmarks/titles_told_apart.py [--sets handbook,postgres]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.ingest.chunking import Chunker  # noqa: E402
from gam_desktop.engine.ingest.context import document_title  # noqa: E402
from gam_desktop.engine.ingest.documents import load_file  # noqa: E402
from gam_desktop.engine.ingest.titles import (  # noqa: E402
    distinguish,
    section_heading,
    written_title,
)
from gam_desktop.engine.models import ChunkConfig  # noqa: E402
from gam_desktop.engine.store.naming import sanitize_name  # noqa: E402

SETS = {
    "handbook": ROOT / "tests/corpora/handbook/docs",
    "licenses": ROOT / "tests/corpora/licenses/docs",
    "postgres": ROOT / "tests/corpora/postgres/docs",
    "sqlite": ROOT / "tests/corpora/sqlite/docs",
    "lookalike": ROOT / "tests/lookalike/docs",
}


def titles_of(folder: Path) -> list[str]:
    """The reader's titles of every part of every document in `folder` that has several."""
    shown: list[str] = []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        doc = load_file(path)
        chunks = Chunker(ChunkConfig()).chunk_documents([doc])
        if len(chunks) < 2:
            continue
        name = document_title(doc) or path.stem
        slugs = distinguish([sanitize_name(name)] * len(chunks), chunks)
        for chunk, slug in zip(chunks, slugs, strict=True):
            shown.append(written_title(slug, [name, section_heading(chunk), chunk.text]))
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", help="comma-separated (default: all)")
    args = parser.parse_args(argv)
    for name in args.sets.split(",") if args.sets else SETS:
        shown = titles_of(SETS[name])
        duplicates = sum(n - 1 for n in Counter(t.casefold() for t in shown).values())
        print(f"== {name}: {len(shown)} titles, {duplicates} duplicates")
        for title in shown:
            print(f"   {title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
