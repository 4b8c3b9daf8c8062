"""Research mode on cross-document questions (issue 15): `gam-research` beside the chat
agent (`gam-request`) and a one-call BM25-top-5 baseline, on the same OpenAI-compatible
server and the same memory. Prints figures; asserts nothing.

    # the real local model (../shared/tools/local-llm.sh starts it)
    .venv/bin/python tests/benchmarks/eval_research.py \\
        --base-url http://127.0.0.1:8089/v1 --model qwen2.5-coder-1.5b-instruct \\
        --workers 2 --timeout 300 --min-tokens 100 --max-tokens 400 --memory /tmp/research-mem
    # ask again without rebuilding
    .venv/bin/python tests/benchmarks/eval_research.py ... --memory /tmp/research-mem --skip-build
    # smoke run against the scripted server, in-process
    .venv/bin/python tests/benchmarks/eval_research.py --scripted --limit 3

The memory is built from tests/lookalike/docs with `gam-add` (eval_answers.build_memory);
the questions are tests/research/questions.json. Each system is asked every question:
- research: `gam-research --json` in-process; its answer is the report's claims and
  what it says the memory does not say (never the citation links, whose line numbers
  would match gold figures), its sources the report's `sources`;
- chat: `gam-request --json` (the chat agent);
- baseline: BM25 over the documents' paragraphs, the top 5 in one chat call.
Scoring, citation validity (the cited file exists and comes from a gold document) and
the LLM calls and tokens (counted by a proxy in front of the server) are eval_answers'.
The target of the issue: research answers more questions than both, every citation
valid, in at most 5x the chat agent's time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks import eval_answers as ev  # noqa: E402

QUESTIONS = ROOT / "tests" / "research" / "questions.json"


def ask_research(
    memory: Path, question: str, server: ev.Server, iterations: int | None
) -> dict[str, Any]:
    """`gam-research --json` through its real entry point, in-process."""
    from gam_desktop.cli import research_main

    argv = ["--gam-dir", str(memory), "--json", "-q", question]
    argv += ["--base-url", server.base_url, "--model", server.model]
    if server.timeout:
        argv += ["--timeout", str(server.timeout)]
    if iterations:
        argv += ["--max-iterations", str(iterations)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = research_main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    if code != 0:
        return {"error": f"exit {code}: {err.getvalue().strip()[-300:]}"}
    try:
        report = json.loads(out.getvalue())
    except ValueError:
        return {"error": f"not JSON: {out.getvalue()[:200]!r}"}
    claims = [c["text"] for s in report["sections"] for c in s["claims"]]
    said = claims + [f"The memory does not say: {line}" for line in report["not_said"]]
    return {
        "answer": "\n".join(said),
        "sources": report["sources"],
        "confidence": None,
        "notes": "; ".join(report["limits_hit"] + report["notes"]) or None,
        "raw": report["report"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)")
    parser.add_argument("--model", help="model name (default $OPENAI_MODEL)")
    parser.add_argument("--api-key", help="API key (default $OPENAI_API_KEY)")
    parser.add_argument("--scripted", action="store_true", help="the in-process scripted server")
    parser.add_argument("--memory", type=Path, help="the memory folder (default: a temporary one)")
    parser.add_argument("--skip-build", action="store_true", help="reuse the memory in --memory")
    parser.add_argument("--docs", type=Path, default=ev.DOCS)
    parser.add_argument("--questions-file", type=Path, default=QUESTIONS)
    parser.add_argument("--questions", help="ids, id prefixes or kinds, comma-separated")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--workers", type=int, help="gam-add --workers")
    parser.add_argument("--timeout", type=float, help="seconds per LLM call")
    parser.add_argument("--min-tokens", type=int, help="gam-add --min-tokens")
    parser.add_argument("--max-tokens", type=int, help="gam-add --max-tokens")
    parser.add_argument("--max-iterations", type=int, help="gam-research --max-iterations")
    parser.add_argument(
        "--systems", default="research,chat,baseline", help="which systems, comma-separated"
    )
    parser.add_argument("--json-out", type=Path, help="write every answer and figure here")
    args = parser.parse_args(argv)
    args.isolate, args.question_timeout = False, None  # what eval_answers' helpers read
    if args.api_key:
        os.environ["OPENAI_API_KEY"] = args.api_key
    questions = ev.pick(ev.load_questions(args.questions_file), args.questions, args.limit)
    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    with contextlib.ExitStack() as stack:
        upstream, model = ev._upstream(args, stack)
        proxy = stack.enter_context(ev.CountingProxy(upstream))
        server = ev.Server(proxy.base_url, model, args.timeout, os.environ.get("OPENAI_API_KEY"))
        memory = args.memory or (
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gam-research-")))
            / "memory"
        )
        print(f"server {upstream}  model {model}  memory {memory}")
        print(f"engine: {ev.engine_state()}  questions: {len(questions)}")
        report: dict[str, Any] = {"server": upstream, "model": model, "memory": str(memory)}
        if not args.skip_build:
            report["build"] = ev._build_phase(args, memory, proxy, server, echo=True)
        index = ev.MemoryIndex(memory)
        in_memory = lambda sources, q: ev.check_citations(sources, q, index)  # noqa: E731
        systems = {
            "research": (
                lambda text: ask_research(memory, text, server, args.max_iterations),
                in_memory,
            ),
            "chat": (lambda text: ev.ask_project(memory, text, server), in_memory),
        }
        if "baseline" in wanted:
            (_, ask, check), _info = ev._baseline_system(args, server)
            systems["baseline"] = (ask, check)
        chosen = [(name, *systems[name]) for name in wanted if name in systems]
        answered = ev.run_systems(chosen, questions, proxy, echo=True, interleave=True)
        summaries = {}
        for name, outcomes in answered.items():
            summaries[name] = ev.summarize(outcomes)
            report[name] = {
                "summary": summaries[name],
                "outcomes": [o.as_dict() for o in outcomes],
            }
        ev.print_totals(summaries)
        if "research" in summaries and "chat" in summaries:
            ratio = summaries["research"]["total_seconds"] / max(
                summaries["chat"]["total_seconds"], 1e-9
            )
            print(f"\n  research time / chat agent time: {ratio:.1f}x (target: at most 5x)")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
        print(f"\ndetails written to {args.json_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
