"""`gam-facts`: the facts a memory learned from its user: list, show (with its history),
forget, restore."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from gam_desktop.cli.common import EXPECTED_ERRORS, entry_point, reason
from gam_desktop.engine.api import (
    Fact,
    FactNotFound,
    LLMSettings,
    NotAMemoryError,
    Workflow,
    fact_lineages,
    plural,
)


def facts_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-facts", description="The facts a GAM memory learned from what you said."
    )
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the current facts, oldest first")
    listing.add_argument("--json", action="store_true", help="one JSON list, for scripts")
    listing.add_argument("--deleted", action="store_true", help="updated and forgotten ones")
    show = commands.add_parser("show", help="one fact, where it was stated, and its history")
    show.add_argument("id", help="the fact's id (see list)")
    forget = commands.add_parser("forget", help="forget a fact (restore brings it back)")
    forget.add_argument("id", help="the fact's id (see list)")
    restore = commands.add_parser("restore", help="bring back a forgotten or retracted fact")
    restore.add_argument("id", help="the fact's id (see list --deleted)")
    return parser


@entry_point("gam-facts")
def facts_main(argv: Sequence[str] | None = None) -> int:
    args = facts_parser().parse_args(argv)
    workflow: Workflow | None = None
    try:
        workflow = Workflow(gam_dir=args.gam_dir, settings=LLMSettings())
        if not workflow.folder.is_memory():
            raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
        if args.command == "list":
            _list(workflow.facts(deleted=args.deleted), args.json)
        elif args.command == "show":
            _show(workflow, _find(workflow, args.id, with_deleted=True))
        elif args.command == "restore":
            fact = _find(workflow, args.id, deleted=True)
            workflow.restore_fact(fact.id)
            print(f"Restored: {fact.statement}")
        else:
            fact = _find(workflow, args.id)
            workflow.forget_fact(fact.id)
            print(f"Forgot: {fact.statement}")
    except EXPECTED_ERRORS as exc:
        print(f"gam-facts: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        if workflow is not None:  # nothing of the memory stays open (issue 38)
            workflow.close()
    return 0


def _find(
    workflow: Workflow, fact_id: str, deleted: bool = False, with_deleted: bool = False
) -> Fact:
    """The current fact (or tombstone) with this id, or the one it starts (ids are long)."""
    wanted = fact_id.strip()
    facts = workflow.facts(deleted=deleted)
    facts += workflow.facts(deleted=True) if with_deleted and not deleted else []
    matches = [f for f in facts if wanted and f.id.startswith(wanted)]
    if len(matches) != 1:
        why = "no fact" if not matches else plural(len(matches), "fact")
        raise FactNotFound(f"{why} with the id {fact_id!r}; see gam-facts list")
    return matches[0]


def _as_dict(fact: Fact) -> dict[str, object]:
    return {
        "id": fact.id,
        "statement": fact.statement,
        "subject": fact.subject,
        "topic": fact.topic,
        "path": fact.path,
        "source_conversation": fact.source_conversation or None,
        "turn": fact.turn or None,
        "created": fact.created.isoformat(),
        "updated": fact.updated.isoformat(),
        "deleted": fact.deleted.isoformat() if fact.deleted else None,
        "replaced_by": fact.replaced_by or None,
        "kind": fact.kind or None,
        "replaces": fact.replaces or None,
        "first_stated": fact.first_stated.isoformat() if fact.first_stated else None,
        "ended": fact.ended or None,
        "ended_conversation": fact.ended_conversation or None,
        "ended_turn": fact.ended_turn or None,
    }


def _list(facts: list[Fact], as_json: bool) -> None:
    if as_json:
        print(json.dumps([_as_dict(f) for f in facts], indent=2, ensure_ascii=False))
        return
    if not facts:
        print("No facts yet: they are learned from what you tell the memory in a chat.")
    for fact in facts:
        print(f"{fact.id}  {fact.updated:%Y-%m-%d}  {fact.statement}")


def _show(workflow: Workflow, fact: Fact) -> None:
    for key, value in _as_dict(fact).items():
        if value is not None:
            print(f"{key}: {value}")
    line = next((x for x in fact_lineages(workflow) if x.fact == fact), None)
    for event in line.events if line is not None else ():
        where = (
            f" (conversation {event.conversation}, turn {event.turn})" if event.conversation else ""
        )
        print(f"history: {event.at:%Y-%m-%d %H:%M} {event.kind}: {event.statement}{where}")
