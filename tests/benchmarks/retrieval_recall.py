"""Whether the passages a reader is shown hold the gold answer, with no chat model: for each
question of a set's half, the general pipeline's passages (`answering.passages.retrieve`)
beside the baselines' (BM25 top 5 over paragraphs; hybrid when an embedding server is
given), in all and within the first k. A reader cannot answer from passages that lack the
answer, so this bounds every system and is cheap enough to tune retrieval on the dev half.
Prints a table; asserts nothing.

    .venv/bin/python tests/benchmarks/retrieval_recall.py --memories /tmp/evalmem \\
        --sets postgres,sqlite --half dev [--embed-url http://127.0.0.1:8090/v1] [-v]

The memories are those eval_corpora.py built (--memories); with GAM_EMBEDDING_* set, the
project's search is hybrid as in the app.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.answering.passages import PASSAGES, retrieve  # noqa: E402
from gam_desktop.engine.workflow import Workflow  # noqa: E402
from tests.benchmarks.eval_answers import Baseline, Server, normalize, occurs  # noqa: E402
from tests.benchmarks.eval_corpora import Embedder, HybridBaseline, questions_of, sets  # noqa: E402


def holds_gold(question: dict, text: str) -> bool:
    """Whether `text` holds every part of the question's gold answer."""
    norm = normalize(text)
    if question.get("answer_any") and not any(occurs(g, norm) for g in question["answer_any"]):
        return False
    for item in question.get("answer_all", []):
        options = item if isinstance(item, list) else [item]
        if not any(occurs(g, norm) for g in options):
            return False
    return True


def recall_of(name: str, args: argparse.Namespace) -> str:
    """One set's line: how many questions each system's passages hold the gold answer of."""
    docs, questions_file = sets()[name]
    memory = args.memories / name
    if not memory.is_dir():
        return f"{name}: no memory at {memory}: skipped"
    asked = questions_of(name, questions_file, args.half, None)
    questions = [q for q in asked if q["kind"] != "unanswerable"]
    server = Server("http://127.0.0.1:9/v1", "none", None)  # never called: no chat here
    tools = Workflow(gam_dir=memory).search_tools()
    bm25 = Baseline(docs, server)
    systems: dict[str, Callable[[str], list[str]]] = {
        "project": lambda q: [p.render() for p in retrieve(tools, q, args.limit)],
        "bm25": lambda q: [f"(from {doc})\n{text}" for doc, text in bm25.retrieve(q)],
    }
    if args.embed_url:
        hybrid = HybridBaseline(docs, server, Embedder(args.embed_url, args.embed_model))
        systems["hybrid"] = lambda q: [f"(from {d})\n{t}" for d, t in hybrid.retrieve(q)]
    found = dict.fromkeys(systems, 0)
    words = dict.fromkeys(systems, 0)
    within = {s: [0] * args.limit for s in systems}  # gold within the first k passages
    for question in questions:
        marks = []
        for system, shown in systems.items():
            passages = shown(question["question"])
            hit = holds_gold(question, "\n".join(passages))
            found[system] += hit
            for k in range(args.limit):
                within[system][k] += holds_gold(question, "\n".join(passages[: k + 1]))
            words[system] += sum(len(p.split()) for p in passages)
            marks.append(f"{system}={'Y' if hit else '-'}")
        if args.verbose:
            print(f"  {question['id']:<44} {question['kind']:<16} {' '.join(marks)}")
    cells = "   ".join(
        f"{s} {found[s]}/{len(questions)} ({words[s] // max(len(questions), 1)} words)"
        for s in systems
    )
    curves = "   ".join(f"{s} {', '.join(map(str, within[s]))}" for s in systems)
    return f"{name:<10} {args.half}: gold in passages  {cells}\n{'':<10} within k=1…: {curves}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=Path, required=True)
    parser.add_argument("--sets", help="comma-separated (default: all)")
    parser.add_argument("--half", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--embed-url", help="an embedding server for the hybrid baseline")
    parser.add_argument("--embed-model", default="multilingual-e5-small-q4")
    parser.add_argument("--limit", type=int, default=PASSAGES, help="passages shown")
    parser.add_argument("-v", "--verbose", action="store_true", help="each question's result")
    args = parser.parse_args(argv)
    wanted = args.sets.split(",") if args.sets else list(sets())
    for name in wanted:
        print(recall_of(name, args), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
