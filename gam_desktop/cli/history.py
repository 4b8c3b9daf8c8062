"""`gam-history` and `gam-rollback`: a memory's operations, undone one by one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime

from gam_desktop.cli.common import (
    EXPECTED_ERRORS,
    entry_point,
    history_workflow,
    reason,
    recover_hint,
    recovery_workflow,
    whole,
)
from gam_desktop.engine.api import (
    History,
    InterruptedOperationError,
    RollbackConflict,
    Workflow,
    plural,
    restore_summary,
    rollback_summary,
)


def history_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gam-history", description="A memory's history.")
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    commands = parser.add_subparsers(dest="command")
    listing = commands.add_parser("list", help="operations, newest first (the default)")
    listing.add_argument("--limit", type=whole(1), default=30)
    listing.add_argument("--offset", type=whole(0), default=0)
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
        tokens = f"  ({plural(op.tokens, 'token')})" if op.tokens else ""
        print(f"{op.sha[:10]}  {when}  {op.kind:<12} {op.summary}{tokens}")
    shown = offset + limit
    if history.count() > shown:
        print(f"… {history.count() - shown} older (--offset {shown})")


def _print_operation(history: History, sha: str, diff: str | None) -> None:
    op = history.get(sha)
    if diff:
        print(history.diff(op.sha, diff), end="")
        return
    print(f"{op.sha}\n{op.summary}\n{op.kind}, {plural(op.tokens, 'token')}")
    for change in history.changes(op.sha):
        moved = f"{change.old_path} -> " if change.old_path else ""
        print(f"  {change.status:<9}{moved}{change.path}")


@entry_point("gam-history")
def history_main(argv: Sequence[str] | None = None) -> int:
    args = history_parser().parse_args(argv)
    workflow: Workflow | None = None
    try:
        if args.command == "recover":  # also where a first build died: not a memory yet
            workflow = recovery_workflow(args.gam_dir)
            print(workflow.recover(restore=args.restore))
            return 0
        workflow, history = history_workflow(args.gam_dir)
        if workflow.interrupted() is not None:
            print(f"gam-history: warning: {recover_hint(args.gam_dir)}", file=sys.stderr)
        if args.command == "show":
            _print_operation(history, args.sha, args.diff)
        else:
            _print_operations(history, getattr(args, "limit", 30), getattr(args, "offset", 0))
    except KeyboardInterrupt:
        return 130
    except EXPECTED_ERRORS as exc:
        print(f"gam-history: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        if workflow is not None:  # nothing of the memory stays open (issue 38)
            workflow.close()
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


@entry_point("gam-rollback")
def rollback_main(argv: Sequence[str] | None = None) -> int:
    args = rollback_parser().parse_args(argv)
    workflow: Workflow | None = None
    try:
        workflow, history = history_workflow(args.gam_dir)
        operation = history.get(args.sha)
        if args.restore_before:
            workflow.restore_before(operation.sha)
            print(restore_summary(operation))
        else:
            workflow.rollback(operation.sha)
            print(f"{rollback_summary(operation)} (undo with gam-rollback on the new operation)")
    except KeyboardInterrupt:
        print("gam-rollback: cancelled", file=sys.stderr)
        return 130
    except RollbackConflict as exc:
        print(f"gam-rollback: {reason(exc)} (use --restore-before)", file=sys.stderr)
        return 1
    except InterruptedOperationError:
        print(f"gam-rollback: {recover_hint(args.gam_dir)}", file=sys.stderr)
        return 1
    except EXPECTED_ERRORS as exc:
        print(f"gam-rollback: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        if workflow is not None:  # nothing of the memory stays open (issue 38)
            workflow.close()
    return 0
