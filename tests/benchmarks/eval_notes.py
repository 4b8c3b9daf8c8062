"""How readable the notes of a built memory are (issue 35, deliverable 6). Prints figures;
asserts nothing.

    # every set (tests/lookalike and tests/corpora/*), the in-process scripted server
    .venv/bin/python tests/benchmarks/eval_notes.py
    # some sets, one variant, and the first notes of each set shown
    .venv/bin/python tests/benchmarks/eval_notes.py --sets lookalike --variants fallback --show 3
    # a memory built elsewhere (by a real model, say)
    .venv/bin/python tests/benchmarks/eval_notes.py --memory /tmp/evalmem/postgres

Each set's documents are built into a fresh memory with `gam-add` (its real entry point,
in-process) against the scripted server, in three variants:
- plan: the scripted server as it is (its memories keep the chunk's facts; it plans folders);
- fallback: every taxonomy plan organizes nothing (one folder "topic"), so the folders come
  from the deterministic grouping (ingest/grouping.py);
- lazy: every memorize reply is a lazy small model's (title "overview", a body listing the
  chunk's headings), so titles and bodies come from the checks made without the LLM.

Figures per memory:
- duplicate titles: titles shared by more than one note (target 0); `_N` file names;
- numbers and identifiers kept: of the numbers and identifiers (snake_case, dotted, CamelCase,
  letters with digits) of a note's original passage, the share found in the note;
- appendix: notes holding "Details from the original"; body repeating the tldr: notes whose
  body starts with their tldr word for word;
- folders with several documents, and documents that share a folder with another (the
  folder holding their notes, and the top-level folder above it);
- READMEs in words: a description holding a sentence of 6 words or more that is not a count
  ("4 memories on a, b and c") nor mostly file names.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.cli import add_main  # noqa: E402
from gam_desktop.engine.store.markdown import parse_memory, readme_heading  # noqa: E402
from gam_desktop.engine.store.naming import memory_file_stem  # noqa: E402
from gam_desktop.selfcheck.scripted_llm import Fault, RunningServer  # noqa: E402

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
TOKEN = re.compile(r"[A-Za-z_][\w.\-]*\w")
COUNT_OPENING = re.compile(r"^\s*\d+\s+(memories|memory|notes|chunks)\b", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
VARIANTS = ("plan", "fallback", "lazy")


def sets() -> dict[str, Path]:
    found = {"lookalike": ROOT / "tests" / "lookalike" / "docs"}
    for folder in sorted((ROOT / "tests" / "corpora").iterdir()):
        if (folder / "docs").is_dir():
            found[folder.name] = folder / "docs"
    return found


def faults_for(variant: str) -> list[Fault]:
    if variant == "fallback":
        return [Fault("one_folder_taxonomy", times=1000, task="organize", on_reask=True)]
    if variant == "lazy":
        return [Fault("headings_only", times=100000, task="memorize", on_reask=True)]
    return []


def build(docs: Path, memory: Path, variant: str) -> float:
    """gam-add of `docs` into `memory` against a fresh scripted server; the seconds taken."""
    with RunningServer() as server:
        server.state.faults.extend(faults_for(variant))
        argv = ["--gam-dir", str(memory), "--base-url", server.base_url, "--model", "scripted"]
        argv += ["--files", str(docs), "-q"]
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = add_main(argv)
        if code != 0:
            raise SystemExit(f"gam-add failed on {docs} ({variant}): exit {code}")
        return time.perf_counter() - start


# -- what a note keeps -------------------------------------------------------------------


def identifiers(text: str) -> set[str]:
    """Names a question may ask for by spelling: snake_case, dotted, CamelCase, A1-style."""
    found = set()
    for token in TOKEN.findall(text):
        token = token.strip(".-")
        inner_capital = any(c.isupper() for c in token[1:]) and any(c.islower() for c in token)
        mixed = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if "_" in token or "." in token or inner_capital or mixed:
            found.add(token.lower())
    return found


def facts(text: str) -> set[str]:
    return set(NUMBER.findall(text)) | identifiers(text)


def original(root: Path, front: dict[str, Any]) -> str | None:
    sha, span = front.get("source_hash"), front.get("span")
    if not sha or not isinstance(span, list) or len(span) != 2:
        return None
    path = root / ".gam" / "sources" / f"{sha}.txt"
    return path.read_text(encoding="utf-8")[int(span[0]) : int(span[1])] if path.is_file() else None


def note_files(root: Path) -> tuple[list[Path], list[Path]]:
    notes, readmes = [], []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(p.startswith(".") for p in rel.parts) or rel.parts[0] in ("conversations", "facts"):
            continue
        (readmes if path.name == "README.md" else notes).append(path)
    return notes, readmes


def numbered_files(notes: list[Path], titles: list[str]) -> list[str]:
    """Files named by their title and a number (`x_2.md` for the second note titled x)."""
    return [
        p.stem
        for p, title in zip(notes, titles, strict=True)
        if re.fullmatch(rf"{re.escape(memory_file_stem(title))}_\d+", p.stem)
    ]


def in_words(description: str) -> bool:
    """A README description a person would write: a sentence of 6 words or more that is
    not a count of memories nor mostly file names."""
    text = " ".join(description.split())
    if not text or COUNT_OPENING.match(text) or text.lower().startswith("memories "):
        return False
    for sentence in SENTENCE.split(text):
        words = sentence.split()
        names = sum("_" in w for w in words)
        if len(words) >= 6 and names * 3 <= len(words):
            return True
    return False


# -- the figures -------------------------------------------------------------------------


def note_figures(root: Path, notes: list[Path]) -> dict[str, Any]:
    """Titles, facts kept, appendices and repeated tldrs of the notes, and the documents
    each folder holds."""
    titles: list[str] = []
    kept = wanted = appendix = repeats = 0
    shares: list[float] = []
    by_folder: dict[str, set[str]] = defaultdict(set)
    for path in notes:
        parsed = parse_memory(path.read_text(encoding="utf-8"))
        front, body = parsed.front, parsed.body
        title = str(front.get("title") or path.stem)
        tldr = " ".join(str(front.get("tldr", "")).split())
        titles.append(title)
        appendix += "Details from the original" in body
        repeats += bool(tldr) and " ".join(body.split()).startswith(tldr)
        by_folder[path.parent.relative_to(root).as_posix()].add(str(front.get("source")))
        need = facts(original(root, front) or "")
        if need:
            have = need & facts(f"{title.replace('_', ' ')} {tldr} {body}")
            kept, wanted = kept + len(have), wanted + len(need)
            shares.append(len(have) / len(need))
    return {
        "notes": len(notes),
        "titles": titles,
        "duplicate_titles": sorted(t for t, n in Counter(titles).items() if n > 1),
        "suffixed_files": numbered_files(notes, titles),
        "facts_micro": kept / wanted if wanted else None,
        "facts_macro": statistics.mean(shares) if shares else None,
        "appendix": appendix,
        "tldr_repeated": repeats,
        "by_folder": by_folder,
    }


def folder_figures(by_folder: dict[str, set[str]]) -> dict[str, Any]:
    """Folders holding several documents; documents sharing their folder, or the top-level
    folder above it, with another."""
    by_top: dict[str, set[str]] = defaultdict(set)
    for folder, found in by_folder.items():
        by_top[folder.split("/")[0]] |= found
    return {
        "folders": len(by_folder),
        "folders_several_documents": sum(len(s) > 1 for s in by_folder.values()),
        "documents": len({s for found in by_folder.values() for s in found}),
        "documents_sharing": len({s for f in by_folder.values() if len(f) > 1 for s in f}),
        "documents_sharing_top": len({s for f in by_top.values() if len(f) > 1 for s in f}),
    }


def readme_figures(readmes: list[Path]) -> dict[str, Any]:
    descriptions = [readme_heading(r.read_text(encoding="utf-8"))[1] for r in readmes]
    return {
        "readmes": len(readmes),
        "readmes_in_words": sum(in_words(d) for d in descriptions),
        "readmes_counting": sum(bool(COUNT_OPENING.match(d)) for d in descriptions),
    }


def measure(root: Path) -> dict[str, Any]:
    notes, readmes = note_files(root)
    figures = note_figures(root, notes)
    figures |= folder_figures(figures.pop("by_folder"))
    return figures | readme_figures(readmes)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def report(name: str, variant: str, m: dict[str, Any], seconds: float) -> None:
    dup = m["duplicate_titles"]
    print(
        f"{name:10} {variant:8} notes {m['notes']:3}  dup titles {len(dup):2}"
        f"  _N files {len(m['suffixed_files']):2}"
        f"  facts kept {pct(m['facts_micro']):>4} (per note {pct(m['facts_macro']):>4})"
        f"  appendix {m['appendix']:2}  tldr repeated {m['tldr_repeated']:2}"
        f"  folders >1 doc {m['folders_several_documents']:2}/{m['folders']:2}"
        f"  docs sharing a folder {m['documents_sharing']:2}/{m['documents']:2}"
        f" (a top folder {m['documents_sharing_top']:2})"
        f"  READMEs in words {m['readmes_in_words']:2}/{m['readmes']:2}"
        f" ('N memories' {m['readmes_counting']})  [{seconds:.1f} s]"
    )
    if dup:
        print(f"{'':20}duplicates: {dup[:6]}")


def show_notes(root: Path, count: int) -> None:
    notes, readmes = note_files(root)
    for path in notes[:count] + readmes[:count]:
        print(f"--- {path.relative_to(root)}")
        print(path.read_text(encoding="utf-8")[:1500])


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ["notes", "appendix", "tldr_repeated", "folders", "folders_several_documents"]
    keys += ["documents", "documents_sharing", "documents_sharing_top", "readmes"]
    keys += ["readmes_in_words", "readmes_counting"]
    total: dict[str, Any] = {k: sum(r[k] for r in rows) for k in keys}
    total["duplicate_titles"] = [t for r in rows for t in r["duplicate_titles"]]
    total["suffixed_files"] = [t for r in rows for t in r["suffixed_files"]]
    micro = [r["facts_micro"] for r in rows if r["facts_micro"] is not None]
    macro = [r["facts_macro"] for r in rows if r["facts_macro"] is not None]
    total["facts_micro"] = statistics.mean(micro) if micro else None
    total["facts_macro"] = statistics.mean(macro) if macro else None
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", help="comma-separated (default: all)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="plan,fallback,lazy")
    parser.add_argument("--memory", type=Path, help="measure this built memory instead")
    parser.add_argument("--show", type=int, default=0, help="print the first N notes and READMEs")
    args = parser.parse_args(argv)
    if args.memory:
        report(args.memory.name, "given", measure(args.memory), 0.0)
        show_notes(args.memory, args.show)
        return 0
    chosen = sets()
    if args.sets:
        chosen = {k: v for k, v in chosen.items() if k in args.sets.split(",")}
    for variant in args.variants.split(","):
        rows = []
        for name, docs in chosen.items():
            with tempfile.TemporaryDirectory() as tmp:
                memory = Path(tmp) / name
                seconds = build(docs, memory, variant)
                rows.append(measure(memory))
                report(name, variant, rows[-1], seconds)
                show_notes(memory, args.show)
        if len(rows) > 1:
            report("ALL", variant, totals(rows), 0.0)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
