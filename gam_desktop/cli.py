"""Command-line entry points: `gam-add`, `gam-request`, `gam-history`, `gam-rollback`.

Wires the engine and nothing else: settings from flags and the environment,
a tqdm progress bar, a one-line reason and a non-zero exit code on failure.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import math
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError
from tqdm import tqdm

from gam_desktop.engine.build.builder import BuildOptions, BuildReport
from gam_desktop.engine.build.documents import files_in
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.gitrepo import GitUnavailable
from gam_desktop.engine.history.log import History, RollbackConflict
from gam_desktop.engine.history.versioned import InterruptedOperationError
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.settings import Role
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.progress import OperationCancelled, ProgressEvent
from gam_desktop.engine.store.folder import MemoryFolder, NotAMemoryError
from gam_desktop.engine.workflow import Workflow

# What a person can act on: the engine's errors (with advice), the environment's (a
# folder that cannot be written, a full disk) and a bad setting. Anything else is a bug.
_EXPECTED_ERRORS = (GamError, OSError, ValidationError)
EX_SOFTWARE = 70  # sysexits.h: an internal error


def _entry_point(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """A command's main: output in UTF-8, and an unexpected error (a bug) reported as one,
    its traceback on stderr, exit status 70."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: Sequence[str] | None = None) -> int:
            _utf8_output()
            try:
                return main(argv)
            except Exception as exc:  # the expected ones were handled inside
                traceback.print_exc()
                print(
                    f"{name}: unexpected error (a bug; the traceback is above): "
                    f"{type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
                return EX_SOFTWARE

        return run

    return wrap


def _utf8_output() -> None:
    """Windows pipes default to the ANSI code page (cp1252): an answer holding '→' or CJK
    raised UnicodeEncodeError. Output is UTF-8, a character it cannot take replaced."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # None in a windowed app
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(encoding="utf-8", errors="replace")


NO_TEXT = "no text found"  # Workflow._new_only: "<name>: no text found; skipped"


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


def _whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high` (the engine's own bounds)."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if number < low or (high is not None and number > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range (it must be {bound})")
        return number

    return parse


def _seconds(value: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0 < number < math.inf:
        raise argparse.ArgumentTypeError(f"{value} is out of range (it must be more than 0)")
    return number


def _llm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument("--model", help="model name (default: $GAM_AGENT_MODEL or $OPENAI_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--workers", type=_whole(1, 64), help="parallel LLM calls (default 8)")
    parser.add_argument("--timeout", type=_seconds, help="seconds per LLM call (default 120)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _settings(role: Role, args: argparse.Namespace) -> LLMSettings:
    """LLM settings for `role` from the environment, with the shared flags on top."""
    return LLMSettings.from_env(
        role, model=args.model, base_url=args.base_url, workers=args.workers, timeout=args.timeout
    )


def add_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-add", description="Add documents to a GAM memory.")
    _llm_arguments(parser)
    parser.add_argument(
        "--files",
        nargs="*",
        default=[],
        help="PDF, TXT or Markdown files; a folder adds those in it, recursively",
    )
    parser.add_argument("--text", help="raw text to add")
    parser.add_argument("--min-tokens", type=_whole(1), help="smallest chunk (tokens; default 100)")
    parser.add_argument(
        "--max-tokens", type=_whole(16), default=1000, help="largest chunk (tokens)"
    )
    parser.add_argument("--no-chunking", action="store_true", help="one chunk per document")
    parser.add_argument(
        "--reorganize-threshold",
        type=_whole(1),
        default=10,
        help="re-plan a folder holding more memories than this",
    )
    return parser


def _expand_files(names: Sequence[str], gam_dir: str, quiet: bool) -> tuple[list[Path], list[str]]:
    """The files to add, and problems: a folder stands for its supported files, searched
    recursively as the GUI does (hidden files, links out of it and the memory folder
    itself left out)."""
    memory = Path(gam_dir).resolve()
    files: list[Path] = []
    problems: list[str] = []
    for name in names:
        folder = Path(name)
        if not folder.is_dir():
            files.append(folder)
            continue
        found = [p for p in files_in(folder)[0] if memory not in p.resolve().parents]
        if not found:
            problems.append(f"{name}: a folder with no PDF, TXT or Markdown files")
        elif not quiet:
            print(f"{name}: {len(found)} supported file{'s' * (len(found) != 1)}", file=sys.stderr)
        files += found
    return files, problems


def _without_text(files: Sequence[Path], report: BuildReport) -> list[str]:
    """Files that gave no text: those the engine reports so, and those the report does not
    name at all (an engine that drops blank documents without a word)."""
    named = {line.split(": ", 1)[0] for line in [*report.unreadable, *report.warnings]}
    named |= set(report.documents)
    silent = [f"{file.name}: {NO_TEXT}; skipped" for file in files if file.name not in named]
    return [w for w in report.warnings if NO_TEXT in w] + list(dict.fromkeys(silent))


@_entry_point("gam-add")
def add_main(argv: Sequence[str] | None = None) -> int:
    args = _add_arguments(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    text = args.text if args.text and args.text.strip() else None
    if not args.files and not text:
        print("gam-add: nothing to add (give --files or --text)", file=sys.stderr)
        return 2
    try:
        settings = _settings("builder", args)
        chunk = ChunkConfig(
            min_tokens=min(100, args.max_tokens) if args.min_tokens is None else args.min_tokens,
            max_tokens=args.max_tokens,
        )
    except ValueError as exc:  # pydantic's ValidationError, or a bad number in the environment
        print(f"gam-add: invalid setting: {_reason(exc)}", file=sys.stderr)
        return 2
    files, problems = _expand_files(args.files, args.gam_dir, args.quiet)
    if not files and not text:
        for problem in problems:
            print(f"gam-add: {problem}", file=sys.stderr)
        return 1
    bar = ProgressBar(enabled=not args.quiet)
    try:
        options = BuildOptions(chunk=chunk, reorganize_threshold=args.reorganize_threshold)
        workflow = Workflow(gam_dir=args.gam_dir, settings=settings, options=options, progress=bar)
        report = workflow.add(files=files, text=text, use_chunking=not args.no_chunking)
    except (KeyboardInterrupt, OperationCancelled):
        bar.close()
        print("gam-add: cancelled; the memory was not changed", file=sys.stderr)
        return 130
    except InterruptedOperationError:
        bar.close()
        print(f"gam-add: {_recover_hint(args.gam_dir)}", file=sys.stderr)
        return 1
    except _EXPECTED_ERRORS as exc:
        bar.close()
        print(f"gam-add: {_reason(exc)}", file=sys.stderr)
        return 1
    bar.close()
    return _report_add(report, problems + report.unreadable + _without_text(files, report))


def _report_add(report: BuildReport, problems: list[str]) -> int:
    """What an add did, its problems (exit 1) and warnings."""
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    for warning in report.warnings:
        if warning not in problems:
            print(f"warning: {warning}", file=sys.stderr)
    if report.documents or not problems:
        print(f"{report.summary()} — {report.usage.summary()}")
    return 1 if problems else 0


def _add_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = add_parser()
    args = parser.parse_args(argv)
    if args.min_tokens is not None and args.min_tokens > args.max_tokens:
        parser.error(
            f"--min-tokens {args.min_tokens} is larger than --max-tokens {args.max_tokens}"
        )
    return args


def request_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-request", description="Ask a question of a GAM memory."
    )
    _llm_arguments(parser)
    parser.add_argument("--query", "-Q", required=True, help="the question")
    parser.add_argument("--max-iterations", type=_whole(1), default=10, help="exploration steps")
    parser.add_argument(
        "--explore",
        action="store_true",
        help="explore the memory with tools even when its best passages answer the question",
    )
    parser.add_argument("--json", action="store_true", help="print the ChatResult as JSON")
    parser.add_argument("--trajectory", action="store_true", help="show the path taken")
    return parser


@_entry_point("gam-request")
def request_main(argv: Sequence[str] | None = None) -> int:
    args = request_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")

    def show_step(step) -> None:
        if not args.quiet and not args.json:
            print(f"  … {step.describe()}", file=sys.stderr)

    try:
        settings = _settings("chat", args)
    except ValueError as exc:  # pydantic's ValidationError, or a bad number in the environment
        print(f"gam-request: invalid setting: {_reason(exc)}", file=sys.stderr)
        return 2
    try:
        workflow = Workflow(gam_dir=args.gam_dir, chat_settings=settings)
        if workflow.folder.is_memory() and workflow.interrupted() is not None:
            print(f"gam-request: warning: {_recover_hint(args.gam_dir)}", file=sys.stderr)
        result = workflow.request(
            args.query,
            max_iterations=args.max_iterations,
            on_step=show_step,
            explore=args.explore,
        )
    except (KeyboardInterrupt, OperationCancelled):
        print("gam-request: cancelled", file=sys.stderr)
        return 130
    except _EXPECTED_ERRORS as exc:
        print(f"gam-request: {_reason(exc)}", file=sys.stderr)
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


def history_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-history", description="A memory's history.")
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="operations, newest first (the default)")
    listing.add_argument("--limit", type=_whole(1), default=30)
    listing.add_argument("--offset", type=_whole(0), default=0)
    show = commands.add_parser("show", help="one operation: its files, or one file's diff")
    show.add_argument("sha", help="the operation (a commit id or a prefix of one)")
    show.add_argument("--diff", metavar="PATH", help="print the diff of this file")
    recover = commands.add_parser("recover", help="after a crash in the middle of an operation")
    choice = recover.add_mutually_exclusive_group(required=True)
    choice.add_argument("--restore", action="store_true", help="go back to the last commit")
    choice.add_argument("--keep", action="store_true", help="keep the files as they are")
    return parser


def _print_operations(history: History, limit: int, offset: int) -> None:
    for op in history.operations(offset, limit):
        when = datetime.fromtimestamp(op.time).strftime("%Y-%m-%d %H:%M")
        tokens = f"  ({op.tokens} tokens)" if op.tokens else ""
        print(f"{op.sha[:10]}  {when}  {op.kind:<12} {op.summary}{tokens}")
    shown = offset + limit
    if history.count() > shown:
        print(f"… {history.count() - shown} older (--offset {shown})")


def _print_operation(history: History, sha: str, diff: str | None) -> None:
    op = history.get(sha)
    if diff:
        print(history.diff(op.sha, diff), end="")
        return
    print(f"{op.sha}\n{op.summary}\n{op.kind}, {op.tokens} tokens")
    for change in history.changes(op.sha):
        moved = f"{change.old_path} -> " if change.old_path else ""
        print(f"  {change.status:<9}{moved}{change.path}")


@_entry_point("gam-history")
def history_main(argv: Sequence[str] | None = None) -> int:
    args = history_parser().parse_args(argv)
    try:
        if args.command == "recover":  # also where a first build died: not a memory yet
            print(_recovery_workflow(args.gam_dir).recover(restore=args.restore))
            return 0
        workflow, history = _history_workflow(args.gam_dir)
        if workflow.interrupted() is not None:
            print(f"gam-history: warning: {_recover_hint(args.gam_dir)}", file=sys.stderr)
        if args.command == "show":
            _print_operation(history, args.sha, args.diff)
        else:
            _print_operations(history, getattr(args, "limit", 30), getattr(args, "offset", 0))
    except KeyboardInterrupt:
        return 130
    except _EXPECTED_ERRORS as exc:
        print(f"gam-history: {_reason(exc)}", file=sys.stderr)
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


@_entry_point("gam-rollback")
def rollback_main(argv: Sequence[str] | None = None) -> int:
    args = rollback_parser().parse_args(argv)
    try:
        workflow, history = _history_workflow(args.gam_dir)
        operation = history.get(args.sha)
        if args.restore_before:
            workflow.restore_before(operation.sha)
            print(f"Restored the memory to before: {operation.summary}")
        else:
            workflow.rollback(operation.sha)
            print(f"Rolled back: {operation.summary} (undo with gam-rollback on the new operation)")
    except KeyboardInterrupt:
        print("gam-rollback: cancelled", file=sys.stderr)
        return 130
    except RollbackConflict as exc:
        print(f"gam-rollback: {_reason(exc)} (use --restore-before)", file=sys.stderr)
        return 1
    except InterruptedOperationError:
        print(f"gam-rollback: {_recover_hint(args.gam_dir)}", file=sys.stderr)
        return 1
    except _EXPECTED_ERRORS as exc:
        print(f"gam-rollback: {_reason(exc)}", file=sys.stderr)
        return 1
    return 0


def _history_workflow(gam_dir: str) -> tuple[Workflow, History]:
    """The memory's workflow and its history (GitUnavailable when there is none)."""
    workflow = Workflow(gam_dir=gam_dir, settings=LLMSettings())
    if not workflow.folder.is_memory():
        raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
    history = workflow.history
    if history is None:
        raise GitUnavailable(workflow.history_message or "history is unavailable")
    return workflow, history


def _recovery_workflow(gam_dir: str) -> Workflow:
    workflow = Workflow(gam_dir=gam_dir, settings=LLMSettings())
    if not workflow.folder.is_memory() and journal.read(workflow.folder) is None:
        raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
    return workflow


def _recover_hint(gam_dir: str) -> str:
    """What to do after a crash in the middle of an operation (the journal names it)."""
    found = journal.read(MemoryFolder(gam_dir))
    return (
        f"a previous {found.operation if found else 'operation'} was interrupted; recover "
        f"first: gam-history --gam-dir {shlex.quote(gam_dir)} recover --restore (or --keep)"
    )


def _reason(exc: BaseException) -> str:
    """An expected failure in one line, never a traceback or a multi-line dump."""
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        where = ".".join([exc.title, *(str(part) for part in error["loc"])])
        return f"{where}: {error['msg']}"  # "LLMSettings.workers: Input should be ..."
    if isinstance(exc, OSError) and exc.strerror:  # "[Errno 30] ..." reads badly
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    text = str(exc).strip().splitlines()  # git's own message is its last line
    return text[-1] if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(add_main())
