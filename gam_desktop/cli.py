"""Command-line entry points (spec 9.2): `gam-add` and `gam-request`.

Wires the engine and nothing else: settings from flags and the environment,
a tqdm progress bar, a one-line reason and a non-zero exit code on failure.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from tqdm import tqdm

from gam_desktop.engine.builder import BuildOptions
from gam_desktop.engine.changeset import StoreError
from gam_desktop.engine.control import OperationCancelled, ProgressEvent
from gam_desktop.engine.documents import DocumentError
from gam_desktop.engine.folder import NotAMemoryError
from gam_desktop.engine.llm import LLMError, LLMSettings
from gam_desktop.engine.llm.settings import Role
from gam_desktop.engine.lock import FolderBusyError
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.workflow import Workflow

_EXPECTED_ERRORS = (
    LLMError,
    DocumentError,
    NotAMemoryError,
    FolderBusyError,
    StoreError,
    PermissionError,
    ValueError,
)


class ProgressBar:
    """One tqdm bar per stage, replaced when the stage changes."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: tqdm | None = None
        self.stage = ""

    def __call__(self, event: ProgressEvent) -> None:
        if not self.enabled:
            return
        if event.stage != self.stage:
            self.close()
            self.stage = event.stage
            self.bar = tqdm(
                total=max(event.total, 1),
                desc=event.stage,
                unit="step",
                file=sys.stderr,
                leave=False,
            )
        if self.bar is not None:
            self.bar.total = max(event.total, 1)
            self.bar.n = event.done
            self.bar.set_postfix_str(event.message[:40], refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _llm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument("--model", help="model name (default: $GAM_AGENT_MODEL or $OPENAI_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--workers", type=int, help="parallel LLM calls (default 8)")
    parser.add_argument("--timeout", type=float, help="seconds per LLM call (default 120)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _settings(role: Role, args: argparse.Namespace) -> LLMSettings:
    """LLM settings for `role` from the environment, with the shared flags on top."""
    return LLMSettings.from_env(
        role, model=args.model, base_url=args.base_url, workers=args.workers, timeout=args.timeout
    )


def add_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-add", description="Add documents to a GAM memory.")
    _llm_arguments(parser)
    parser.add_argument("--files", nargs="*", default=[], help="PDF, TXT or Markdown files")
    parser.add_argument("--text", help="raw text to add")
    parser.add_argument("--min-tokens", type=int, default=100, help="smallest chunk (tokens)")
    parser.add_argument("--max-tokens", type=int, default=1000, help="largest chunk (tokens)")
    parser.add_argument("--no-chunking", action="store_true", help="one chunk per document")
    parser.add_argument(
        "--reorganize-threshold",
        type=int,
        default=10,
        help="re-plan a folder holding more memories than this",
    )
    return parser


def add_main(argv: Sequence[str] | None = None) -> int:
    args = add_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if not args.files and not args.text:
        print("gam-add: nothing to add (give --files or --text)", file=sys.stderr)
        return 2
    bar = ProgressBar(enabled=not args.quiet)
    try:
        settings = _settings("builder", args)
        options = BuildOptions(
            chunk=ChunkConfig(min_tokens=args.min_tokens, max_tokens=args.max_tokens),
            reorganize_threshold=args.reorganize_threshold,
        )
        workflow = Workflow(gam_dir=args.gam_dir, settings=settings, options=options, progress=bar)
        report = workflow.add(files=args.files, text=args.text, use_chunking=not args.no_chunking)
    except (KeyboardInterrupt, OperationCancelled):
        bar.close()
        print("gam-add: cancelled; the memory was not changed", file=sys.stderr)
        return 130
    except _EXPECTED_ERRORS as exc:
        bar.close()
        print(f"gam-add: {exc}", file=sys.stderr)
        return 1
    bar.close()
    for problem in report.unreadable:
        print(f"error: {problem}", file=sys.stderr)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"{report.summary()} — {report.usage.summary()}")
    return 1 if report.unreadable else 0


def request_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-request", description="Ask a question of a GAM memory."
    )
    _llm_arguments(parser)
    parser.add_argument("--query", "-Q", required=True, help="the question")
    parser.add_argument("--max-iterations", type=int, default=10, help="exploration steps")
    parser.add_argument("--json", action="store_true", help="print the ChatResult as JSON")
    parser.add_argument("--trajectory", action="store_true", help="show the path taken")
    return parser


def request_main(argv: Sequence[str] | None = None) -> int:
    args = request_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")

    def show_step(step) -> None:
        if not args.quiet and not args.json:
            print(f"  … {step.describe()}", file=sys.stderr)

    try:
        settings = _settings("chat", args)
        workflow = Workflow(gam_dir=args.gam_dir, chat_settings=settings)
        result = workflow.request(args.query, max_iterations=args.max_iterations, on_step=show_step)
    except (KeyboardInterrupt, OperationCancelled):
        print("gam-request: cancelled", file=sys.stderr)
        return 130
    except _EXPECTED_ERRORS as exc:
        print(f"gam-request: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    print(result.answer)
    print(f"\nSources: {', '.join(result.sources) or '(none)'}")
    print(f"Confidence: {result.confidence:.2f}")
    if args.trajectory:
        print("\nTrajectory:\n" + result.trajectory)
    return 0


if __name__ == "__main__":
    sys.exit(add_main())
