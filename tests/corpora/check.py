"""Checks an evaluation corpus: its documents' sizes, and that every gold answer is written
verbatim in the documents as the app reads them (the same readers `gam-add` uses).

    .venv/bin/python tests/corpora/check.py postgres [sqlite ...]   # or: all

Exit status 1 when a corpus breaks a rule; every problem is printed.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.ingest.documents import load_file  # noqa: E402

HERE = Path(__file__).resolve().parent
KINDS_AT_LEAST = {
    "single_fact": 5,
    "disambiguation": 5,
    "multi_document": 4,
    "enumeration": 2,
    "history": 0,  # where a genre has no versions, more multi-document questions instead
    "unanswerable": 3,
}
QUESTIONS_AT_LEAST = 20
DOCUMENTS = (8, 12)
WORDS_PER_GENRE = 9_500


def comparable(text: str) -> str:
    """Lowercase, Markdown emphasis and code marks dropped, whitespace collapsed."""
    text = re.sub(r"[*`]+", "", text.lower().replace("\u00a0", " "))
    return " ".join(text.split())


def genres() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if (p / "questions.json").is_file())


def read_docs(genre: str) -> dict[str, str]:
    return {p.name: load_file(p).text for p in sorted((HERE / genre / "docs").iterdir())}


def check_docs(docs: dict[str, str]) -> list[str]:
    problems = []
    if not DOCUMENTS[0] <= len(docs) <= DOCUMENTS[1]:
        problems.append(f"{len(docs)} documents; expected {DOCUMENTS[0]}-{DOCUMENTS[1]}")
    total = sum(len(t.split()) for t in docs.values())
    if total > WORDS_PER_GENRE:
        problems.append(f"{total} words in all; at most {WORDS_PER_GENRE}")
    return problems


def check_question(q: dict, docs: dict[str, str]) -> list[str]:
    """What is wrong with one question (nothing, usually)."""
    where = q.get("id", "?")
    missing = {"id", "kind", "question", "answer_any", "source_docs", "evidence"} - set(q)
    if missing:
        return [f"{where}: missing {sorted(missing)}"]
    if q["kind"] not in KINDS_AT_LEAST:
        return [f"{where}: unknown kind {q['kind']!r}"]
    if q["kind"] == "unanswerable":
        if q["answer_any"] or q["source_docs"] or q.get("answer_all"):
            return [f"{where}: an unanswerable question has no answers nor sources"]
        return []
    return _check_answerable(q, docs)


def _check_answerable(q: dict, docs: dict[str, str]) -> list[str]:
    where = q["id"]
    unknown = [d for d in q["source_docs"] if d not in docs]
    if unknown or not q["source_docs"]:
        return [f"{where}: source_docs {unknown or 'empty'} not among the documents"]
    sources = comparable(" \n ".join(docs[d] for d in q["source_docs"]))
    problems = []
    evidence = [comparable(e) for e in q["evidence"]]
    if not evidence:
        problems.append(f"{where}: no evidence sentence")
    for sentence in evidence:
        if sentence not in sources:
            problems.append(f"{where}: evidence not verbatim in its sources: {sentence[:80]!r}")
    said = " \n ".join(evidence)
    if not q["answer_any"] and not q.get("answer_all"):
        problems.append(f"{where}: no gold answer")
    if q["answer_any"] and not any(comparable(g) in said for g in q["answer_any"]):
        problems.append(f"{where}: no answer_any string is in its evidence: {q['answer_any']}")
    for item in q.get("answer_all", []):
        options = item if isinstance(item, list) else [item]
        if not any(comparable(g) in sources for g in options):
            problems.append(f"{where}: answer_all item {options} not in its sources")
    return problems


def check(genre: str) -> list[str]:
    docs = read_docs(genre)
    questions = json.loads((HERE / genre / "questions.json").read_text(encoding="utf-8"))
    problems = [f"{genre}: {p}" for p in check_docs(docs)]
    for q in questions:
        problems += [f"{genre}: {p}" for p in check_question(q, docs)]
    ids = Counter(q.get("id") for q in questions)
    problems += [f"{genre}: id {i!r} used {n} times" for i, n in ids.items() if n > 1]
    kinds = Counter(q.get("kind") for q in questions)
    for kind, least in KINDS_AT_LEAST.items():
        if kinds[kind] < least:
            problems.append(f"{genre}: {kinds[kind]} {kind} questions; at least {least}")
    if len(questions) < QUESTIONS_AT_LEAST:
        problems.append(f"{genre}: {len(questions)} questions; at least {QUESTIONS_AT_LEAST}")
    words = sum(len(t.split()) for t in docs.values())
    print(
        f"{genre}: {len(docs)} documents, {words} words, {len(questions)} questions {dict(kinds)}"
    )
    return problems


def main(argv: list[str]) -> int:
    wanted = genres() if argv in ([], ["all"]) else argv
    problems = [p for genre in wanted for p in check(genre)]
    for p in problems:
        print("  " + p)
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
