"""`gam-add`: build or grow a memory from documents; `gam-add --summarize-again`: give the
memories written without the LLM (its calls kept failing) real summaries."""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from gam_desktop.cli.common import (
    EXPECTED_ERRORS,
    ProgressBar,
    entry_point,
    llm_arguments,
    reason,
    recover_hint,
    say,
    settings_for,
    shown,
    whole,
)
from gam_desktop.engine.api import (
    ALREADY_HELD,
    READABLE,
    BuildOptions,
    BuildReport,
    Changes,
    ChunkConfig,
    InterruptedOperationError,
    OperationCancelled,
    Workflow,
    files_in,
    notes_in,
    plural,
)


def add_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-add", description="Add documents to a GAM memory.")
    llm_arguments(parser)
    parser.add_argument(
        "--files",
        nargs="*",
        default=[],
        help=f"{READABLE} files; a folder adds those in it, recursively",
    )
    parser.add_argument("--text", help="raw text to add")
    parser.add_argument("--min-tokens", type=whole(1), help="smallest chunk (tokens; default 100)")
    parser.add_argument("--max-tokens", type=whole(16), default=1000, help="largest chunk (tokens)")
    parser.add_argument("--no-chunking", action="store_true", help="one chunk per document")
    parser.add_argument(
        "--reorganize-threshold",
        type=whole(1),
        default=10,
        help="re-plan a folder holding more notes than this",
    )
    parser.add_argument(
        "--step-documents",
        type=whole(0),
        default=25,
        help="commit a big add in steps of this many documents (0: in one step)",
    )
    parser.add_argument(
        "--summarize-again",
        action="store_true",
        help="summarize again, with the LLM, the notes written without it when its calls "
        "kept failing (fallback: true), each in its place; no --files or --text",
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
            problems.append(f"{name}: a folder with no {READABLE} files")
        elif not quiet:
            say(f"{name}: {plural(len(found), 'supported file')}")
        files += found
    return files, problems


def _without_text(files: Sequence[Path], report: BuildReport) -> list[str]:
    """Files that gave no text: those the engine reports so, and those the report does not
    name at all (an engine that drops blank documents without a word)."""
    named = {line.split(": ", 1)[0] for line in [*report.unreadable, *report.warnings]}
    named |= set(report.documents)
    silent = [f"{file.name}: {NO_TEXT}; skipped" for file in files if file.name not in named]
    return [w for w in report.warnings if NO_TEXT in w] + list(dict.fromkeys(silent))


@entry_point("gam-add")
def add_main(argv: Sequence[str] | None = None) -> int:
    args = _add_arguments(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    return _summarize_again(args) if args.summarize_again else _add(args)


def _add(args: argparse.Namespace) -> int:
    text = args.text if args.text and args.text.strip() else None
    if not args.files and not text:
        print("gam-add: nothing to add (give --files or --text)", file=sys.stderr)
        return 2
    try:
        settings = settings_for("builder", args)
        chunk = ChunkConfig(
            min_tokens=min(100, args.max_tokens) if args.min_tokens is None else args.min_tokens,
            max_tokens=args.max_tokens,
        )
    except ValueError as exc:  # pydantic's ValidationError, or a bad number in the environment
        print(f"gam-add: invalid setting: {reason(exc)}", file=sys.stderr)
        return 2
    files, problems = _expand_files(args.files, args.gam_dir, args.quiet)
    if not files and not text:
        for problem in problems:
            say(f"gam-add: {problem}")
        return 1
    bar = ProgressBar(enabled=not args.quiet)
    options = BuildOptions(
        chunk=chunk,
        reorganize_threshold=args.reorganize_threshold,
        step_documents=args.step_documents,
    )
    workflow: Workflow | None = None
    try:
        workflow = Workflow(gam_dir=args.gam_dir, settings=settings, options=options, progress=bar)
        report = workflow.add(files=files, text=text, use_chunking=not args.no_chunking)
        fallbacks = workflow.fallback_memories()  # this add's and any earlier add's
    except (KeyboardInterrupt, OperationCancelled):
        bar.close()
        say(f"gam-add: cancelled; {_kept(workflow)}")
        return 130
    except InterruptedOperationError:
        bar.close()
        # Nothing was added: "run the same command again" is what adds the documents,
        # once the interrupted operation's half-written files are restored or kept.
        again = "run the same gam-add again (nothing was added this time)"
        say(f"gam-add: {recover_hint(args.gam_dir, again)}")
        return 1
    except EXPECTED_ERRORS as exc:
        bar.close()
        say(f"gam-add: {reason(exc)}")
        if workflow is not None and workflow.last_add and workflow.last_add.documents:
            say(f"gam-add: {_kept(workflow)}")
        return 1
    finally:
        if workflow is not None:  # nothing of the memory stays open (issue 38)
            workflow.close()
    bar.close()
    problems += report.unreadable + _without_text(files, report)
    return _report_add(report, problems, fallbacks, args.gam_dir)


def _kept(workflow: Workflow | None) -> str:
    """What an add that stopped early leaves: its finished steps, and the LLM results it
    paid for, which running the same command again uses."""
    done = workflow.last_add if workflow is not None else None
    if done is None or not done.documents:
        return (
            "the memory was not changed (the LLM results so far are kept: running the same "
            "command again reuses them)"
        )
    count = len(done.documents)
    return (
        f"{plural(count, 'document')} {'was' if count == 1 else 'were'} added in finished "
        "steps and kept; running the same command again adds the rest"
    )


def _report_add(
    report: BuildReport, problems: list[str], fallbacks: list[str], gam_dir: str
) -> int:
    """What an add did, its problems (exit 1) and warnings; last, the memories written
    without the LLM (`fallbacks`, exit 1 when this add wrote some: not every memory asked
    for was made) and how to summarize them again."""
    for problem in problems:
        say(f"error: {problem}")
    for warning in report.warnings:
        if warning not in problems:
            say(f"warning: {warning}")
    if report.documents or report.remaining:
        print(shown(f"{report.summary()} — {report.usage.summary()}"))
    elif not problems:  # "Added 0 documents" read as a success: say why nothing was added
        held = sum(ALREADY_HELD in warning for warning in report.warnings)
        print(f"Nothing added: {_nothing_added(held)}")
    if fallbacks:
        _say_fallbacks(fallbacks, gam_dir, made_now=report.fallbacks > 0)
    return 1 if problems or report.fallbacks else 0


def _say_fallbacks(fallbacks: list[str], gam_dir: str, made_now: bool) -> None:
    """The memories written without the LLM (this add's, and earlier ones still so), and
    how to summarize them again: an error when this add wrote some (exit 1: not every
    memory it made is what was asked for), else a warning."""
    count = len(fallbacks)
    again = f"gam-add --gam-dir {shlex.quote(gam_dir)} --summarize-again"
    say(
        f"{'error' if made_now else 'warning'}: {plural(count, 'note')} in this memory "
        f"{'is' if count == 1 else 'are'} written without the LLM (its calls kept failing; "
        f"marked fallback: true); once the LLM works, summarize them again: {again}"
    )


def _summarize_again(args: argparse.Namespace) -> int:
    """gam-add --summarize-again: the memories written without the LLM summarized again,
    one commit; exit 1 while some are still written without it (named), 130 on a cancel."""
    try:
        settings = settings_for("builder", args)
    except ValueError as exc:
        print(f"gam-add: invalid setting: {reason(exc)}", file=sys.stderr)
        return 2
    bar = ProgressBar(enabled=not args.quiet)
    workflow: Workflow | None = None
    try:
        workflow = Workflow(gam_dir=args.gam_dir, settings=settings, progress=bar)
        changes = workflow.summarize_again()
        left = workflow.fallback_memories()
    except (KeyboardInterrupt, OperationCancelled):
        bar.close()
        print(
            "gam-add: cancelled; the memory was not changed (the summaries made so far are "
            "kept: running the same command again reuses them)",
            file=sys.stderr,
        )
        return 130
    except InterruptedOperationError:
        bar.close()
        say(f"gam-add: {recover_hint(args.gam_dir, 'run the same command again')}")
        return 1
    except EXPECTED_ERRORS as exc:
        bar.close()
        print(f"gam-add: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        if workflow is not None:
            workflow.close()
    bar.close()
    return _report_summarized(changes, left)


def _report_summarized(changes: Changes, left: list[str]) -> int:
    """What summarizing again did, and the memories still written without the LLM (each
    named, exit 1)."""
    written = notes_in(changes)
    if written:
        print(f"Summarized again: {plural(len(written), 'note')}")
    elif not left:
        print("Nothing to summarize again: no note was written without the LLM")
    if not left:
        return 0
    listed = ", ".join(left[:5]) + (", …" if len(left) > 5 else "")
    one = len(left) == 1
    say(
        f"error: {plural(len(left), 'note')} {'is' if one else 'are'} still written without "
        f"the LLM ({listed}): {'its' if one else 'their'} calls failed again, or the original "
        "text is missing; run the same command again once the LLM works"
    )
    return 1


def _nothing_added(held: int) -> str:
    """Why an add without problems added nothing: its documents are committed already."""
    if held == 1:
        return "the document is already in this memory (saved in its history)"
    if held:
        return f"all {held} documents are already in this memory (saved in its history)"
    return "there was no new text to add"


def _add_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = add_parser()
    args = parser.parse_args(argv)
    if args.summarize_again and (args.files or args.text is not None):
        parser.error("--summarize-again adds nothing: give it without --files or --text")
    if args.min_tokens is not None and args.min_tokens > args.max_tokens:
        parser.error(
            f"--min-tokens {args.min_tokens} is larger than --max-tokens {args.max_tokens}"
        )
    return args


NO_TEXT = "no text found"  # Workflow._new_only: "<name>: no text found (why); skipped"
