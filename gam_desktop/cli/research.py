"""`gam-research`: a question researched across the memory, printed as a Markdown report."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from gam_desktop.cli.common import (
    EXPECTED_ERRORS,
    entry_point,
    llm_arguments,
    reason,
    recover_hint,
    say,
    seconds,
    settings_for,
    whole,
)
from gam_desktop.engine.api import (
    Limits,
    OperationCancelled,
    ResearchStep,
    Workflow,
    report_markdown,
)

DEFAULTS = Limits()


def research_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-research",
        description="Research a question across a GAM memory: plan sub-questions, search, "
        "integrate the evidence and reflect, then print a report whose every claim cites "
        "the memory file it comes from.",
    )
    llm_arguments(parser)
    parser.add_argument("question", help="the question to research")
    parser.add_argument(
        "--max-iterations",
        type=whole(1, 10),
        default=DEFAULTS.iterations,
        help=f"search/reflect rounds (default {DEFAULTS.iterations})",
    )
    parser.add_argument(
        "--max-calls", type=whole(1), default=DEFAULTS.llm_calls, help="LLM calls at most"
    )
    parser.add_argument(
        "--max-tokens", type=whole(1), default=DEFAULTS.tokens, help="tokens at most, all calls"
    )
    parser.add_argument(
        "--max-seconds", type=seconds, default=DEFAULTS.seconds, help="wall time at most"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON: the report as `report` (Markdown), its citations as `sources`",
    )
    parser.add_argument(
        "--save", action="store_true", help="save the report into the memory (research/)"
    )
    return parser


@entry_point("gam-research")
def research_main(argv: Sequence[str] | None = None) -> int:
    args = research_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = settings_for("chat", args)
    except ValueError as exc:
        print(f"gam-research: invalid setting: {reason(exc)}", file=sys.stderr)
        return 2
    workflow = Workflow(gam_dir=args.gam_dir, chat_settings=settings)
    if workflow.folder.is_memory() and workflow.interrupted() is not None:
        say(f"gam-research: warning: {recover_hint(args.gam_dir)}")
    limits = Limits(args.max_iterations, args.max_calls, args.max_tokens, args.max_seconds)

    def show(step: ResearchStep) -> None:
        if args.quiet:
            return
        ticks = " ".join("✓" if done else "·" for done in step.answered)
        say(f"  … [{step.iteration}] {step.message}  {ticks}".rstrip())

    try:
        report = workflow.research(args.question, limits, on_step=show)
        saved = workflow.save_research(report)[0] if args.save else None
    except (KeyboardInterrupt, OperationCancelled):
        print("gam-research: cancelled; nothing was saved", file=sys.stderr)
        return 130
    except EXPECTED_ERRORS as exc:
        print(f"gam-research: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        workflow.close()  # nothing of the memory stays open (issue 38)
    if args.json:
        payload = {
            "question": report.question,
            "report": report_markdown(report),
            "sources": report.sources,
            "citations": [c.model_dump(mode="json") for c in report.citations],
            "sections": [s.model_dump(mode="json") for s in report.sections],
            "not_said": report.not_said,
            "limits_hit": report.limits_hit,
            "dropped": report.dropped,
            "notes": report.notes,
            "iterations": report.iterations,
            "llm_calls": report.llm_calls,
            "tokens": report.tokens,
            "seconds": report.seconds,
            "model": report.model,
            "saved": saved,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    print(report_markdown(report), end="")
    if saved:
        print(file=sys.stderr)
        say(f"Saved as {saved}")
    return 0
