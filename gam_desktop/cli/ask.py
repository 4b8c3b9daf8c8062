"""`gam-request`: ask a question of a memory."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from gam_desktop.cli.common import (
    EXPECTED_ERRORS,
    entry_point,
    llm_arguments,
    reason,
    recover_hint,
    settings_for,
    whole,
)
from gam_desktop.engine.progress import OperationCancelled
from gam_desktop.engine.workflow import Workflow


def request_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-request", description="Ask a question of a GAM memory."
    )
    llm_arguments(parser)
    parser.add_argument("--query", "-Q", required=True, help="the question")
    parser.add_argument("--max-iterations", type=whole(1), default=10, help="exploration steps")
    parser.add_argument(
        "--explore",
        action="store_true",
        help="explore the memory with tools even when its best passages answer the question",
    )
    parser.add_argument("--json", action="store_true", help="print the ChatResult as JSON")
    parser.add_argument("--trajectory", action="store_true", help="show the path taken")
    return parser


@entry_point("gam-request")
def request_main(argv: Sequence[str] | None = None) -> int:
    args = request_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")

    def show_step(step) -> None:
        if not args.quiet and not args.json:
            print(f"  … {step.describe()}", file=sys.stderr)

    try:
        settings = settings_for("chat", args)
    except ValueError as exc:  # pydantic's ValidationError, or a bad number in the environment
        print(f"gam-request: invalid setting: {reason(exc)}", file=sys.stderr)
        return 2
    try:
        workflow = Workflow(gam_dir=args.gam_dir, chat_settings=settings)
        if workflow.folder.is_memory() and workflow.interrupted() is not None:
            print(f"gam-request: warning: {recover_hint(args.gam_dir)}", file=sys.stderr)
        result = workflow.request(
            args.query,
            max_iterations=args.max_iterations,
            on_step=show_step,
            explore=args.explore,
        )
    except (KeyboardInterrupt, OperationCancelled):
        print("gam-request: cancelled", file=sys.stderr)
        return 130
    except EXPECTED_ERRORS as exc:
        print(f"gam-request: {reason(exc)}", file=sys.stderr)
        return 1
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    print(result.answer)
    cited = [c.describe() for c in result.citations] or result.sources
    print(f"\nSources: {', '.join(cited) or '(none)'}")
    print(f"Confidence: {result.confidence:.2f}")
    if args.trajectory:
        print("\nTrajectory:\n" + result.trajectory)
    return 0
