"""Command-line entry points (spec 9.2): `gam-add`.

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
        settings = LLMSettings.from_env(
            "builder",
            model=args.model,
            base_url=args.base_url,
            workers=args.workers,
            timeout=args.timeout,
        )
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


if __name__ == "__main__":
    sys.exit(add_main())
