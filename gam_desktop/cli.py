"""Command-line entry points: `gam-add`, `gam-request` (spec 9.2), `gam-history`, `gam-rollback`.

Wires the engine and nothing else: settings from flags and the environment,
a tqdm progress bar, a one-line reason and a non-zero exit code on failure.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from datetime import datetime

from tqdm import tqdm

from gam_desktop.engine.builder import BuildOptions
from gam_desktop.engine.changeset import StoreError
from gam_desktop.engine.control import OperationCancelled, ProgressEvent
from gam_desktop.engine.documents import DocumentError
from gam_desktop.engine.folder import NotAMemoryError
from gam_desktop.engine.gitrepo import GitUnavailable
from gam_desktop.engine.history import RollbackConflict
from gam_desktop.engine.llm import LLMError, LLMSettings
from gam_desktop.engine.llm.settings import Role
from gam_desktop.engine.lock import FolderBusyError
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.workflow import Workflow

_HISTORY_ERRORS = (
    NotAMemoryError,
    GitUnavailable,
    FolderBusyError,
    ValueError,
    IndexError,
    RuntimeError,
    OSError,
)
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


def history_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-history", description="A memory's history.")
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="operations, newest first (the default)")
    listing.add_argument("--limit", type=int, default=30)
    listing.add_argument("--offset", type=int, default=0)
    show = commands.add_parser("show", help="one operation: its files, or one file's diff")
    show.add_argument("sha", help="the operation (a commit id or a prefix of one)")
    show.add_argument("--diff", metavar="PATH", help="print the diff of this file")
    recover = commands.add_parser("recover", help="after a crash in the middle of an operation")
    choice = recover.add_mutually_exclusive_group(required=True)
    choice.add_argument("--restore", action="store_true", help="go back to the last commit")
    choice.add_argument("--keep", action="store_true", help="keep the files as they are")
    return parser


def _print_operations(workflow: Workflow, limit: int, offset: int) -> None:
    history = workflow.history
    for op in history.operations(offset, limit):
        when = datetime.fromtimestamp(op.time).strftime("%Y-%m-%d %H:%M")
        tokens = f"  ({op.tokens} tokens)" if op.tokens else ""
        print(f"{op.sha[:10]}  {when}  {op.kind:<12} {op.summary}{tokens}")
    shown = offset + limit
    if history.count() > shown:
        print(f"… {history.count() - shown} older (--offset {shown})")


def _print_operation(workflow: Workflow, sha: str, diff: str | None) -> None:
    history = workflow.history
    op = history.get(sha)
    if diff:
        print(history.diff(op.sha, diff), end="")
        return
    print(f"{op.sha}\n{op.summary}\n{op.kind}, {op.tokens} tokens")
    for change in history.changes(op.sha):
        moved = f"{change.old_path} -> " if change.old_path else ""
        print(f"  {change.status:<9}{moved}{change.path}")


def history_main(argv: Sequence[str] | None = None) -> int:
    args = history_parser().parse_args(argv)
    try:
        workflow = _history_workflow(args.gam_dir)
        if args.command == "recover":
            print(workflow.recover(restore=args.restore))
            return 0
        interrupted = workflow.interrupted()
        if interrupted is not None:
            print(
                f"warning: a {interrupted.operation} was interrupted; run "
                "'gam-history recover --restore' (or --keep)",
                file=sys.stderr,
            )
        if args.command == "show":
            _print_operation(workflow, args.sha, args.diff)
        else:
            _print_operations(workflow, getattr(args, "limit", 30), getattr(args, "offset", 0))
    except _HISTORY_ERRORS as exc:
        print(f"gam-history: {_one_line(exc)}", file=sys.stderr)
        return 1
    return 0


def rollback_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-rollback", description="Undo an operation, or go back to before it."
    )
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument("sha", help="the operation (see gam-history)")
    parser.add_argument(
        "--restore-before",
        action="store_true",
        help="make the whole memory as it was before the operation (this "
        "also undoes every later operation)",
    )
    return parser


def rollback_main(argv: Sequence[str] | None = None) -> int:
    args = rollback_parser().parse_args(argv)
    try:
        workflow = _history_workflow(args.gam_dir)
        operation = workflow.history.get(args.sha)
        if args.restore_before:
            workflow.restore_before(operation.sha)
            print(f"Restored the memory to before: {operation.summary}")
        else:
            workflow.rollback(operation.sha)
            print(f"Rolled back: {operation.summary} (undo with gam-rollback on the new operation)")
    except RollbackConflict as exc:
        print(f"gam-rollback: {exc} (use --restore-before)", file=sys.stderr)
        return 1
    except _HISTORY_ERRORS as exc:
        print(f"gam-rollback: {_one_line(exc)}", file=sys.stderr)
        return 1
    return 0


def _history_workflow(gam_dir: str) -> Workflow:
    workflow = Workflow(gam_dir=gam_dir, settings=LLMSettings())
    if not workflow.folder.is_memory():
        raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
    if workflow.history is None:
        raise GitUnavailable(workflow.history_message or "history is unavailable")
    return workflow


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(add_main())
