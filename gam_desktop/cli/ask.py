"""`gam-request` (one question) and `gam-chat` (a conversation in the terminal)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence

from gam_desktop.cli.common import (
    EXPECTED_ERRORS,
    entry_point,
    llm_arguments,
    reason,
    recover_hint,
    settings_for,
    whole,
)
from gam_desktop.engine.api import (
    ChatResult,
    ChatTurn,
    Learned,
    OperationCancelled,
    Step,
    Workflow,
    plural,
)


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
        help="browse the memory with tools (ls, cat, grep, search) before answering",
    )
    parser.add_argument(
        "--conversation",
        metavar="ID|new|last",
        help="ask in a saved conversation (new: start one; last: the latest) and learn facts",
    )
    parser.add_argument(
        "--no-learn", action="store_true", help="with --conversation: learn no facts"
    )
    parser.add_argument("--json", action="store_true", help="print the ChatResult as JSON")
    parser.add_argument("--trajectory", action="store_true", help="show the path taken")
    return parser


@entry_point("gam-request")
def request_main(argv: Sequence[str] | None = None) -> int:
    args = request_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    workflow = _workflow("gam-request", args)
    if workflow is None:
        return 2
    try:
        if args.conversation is None:
            result = workflow.request(
                args.query,
                max_iterations=args.max_iterations,
                on_step=_steps(args),
                explore=args.explore,
            )
            turn, learned = None, None
        else:
            turn, learned = _turn(workflow, args, args.query, _continued(workflow, args))
            result = turn.result
    except (KeyboardInterrupt, OperationCancelled):
        print("gam-request: cancelled", file=sys.stderr)
        return 130
    except EXPECTED_ERRORS as exc:
        print(f"gam-request: {reason(exc)}", file=sys.stderr)
        return 1
    finally:
        workflow.close()  # nothing of the memory stays open (issue 38)
    if args.json:
        extra = {}
        if turn is not None:
            extra = {"conversation_id": turn.conversation_id, "turn": turn.turn}
            extra["learned"] = learned.summary() if learned else None
        print(json.dumps({**result.model_dump(mode="json"), **extra}, indent=2))
        return 0
    _print_answer(result, args.trajectory)
    _print_learned(learned)
    if turn is not None and turn.conversation_id:
        said = turn.conversation_id
        print(f"Conversation: {said} (continue with --conversation {said})")
    return 0


def chat_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gam-chat",
        description="Talk with a GAM memory in the terminal; the conversation is saved in "
        "the memory (conversations/) and what you state is learned as facts (facts/).",
    )
    llm_arguments(parser)
    parser.add_argument(
        "--conversation",
        metavar="ID|last",
        help="continue a saved conversation (default: start a new one)",
    )
    parser.add_argument("--no-learn", action="store_true", help="learn no facts from this chat")
    parser.add_argument("--max-iterations", type=whole(1), default=10, help="exploration steps")
    parser.add_argument("--explore", action="store_true", help="always explore with tools")
    return parser


@entry_point("gam-chat")
def chat_main(argv: Sequence[str] | None = None) -> int:
    """A read-eval loop: each line a question, answered and saved; /quit or an empty line
    (or end of input) ends it."""
    args = chat_parser().parse_args(argv)
    args.trajectory = args.json = False
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    workflow = _workflow("gam-chat", args)
    if workflow is None:
        return 2
    with workflow:  # nothing of the memory stays open (issue 38)
        try:
            conversation = _continued(workflow, args)
        except EXPECTED_ERRORS as exc:
            print(f"gam-chat: {reason(exc)}", file=sys.stderr)
            return 1
        print("Ask a question (an empty line or /quit ends the chat).", file=sys.stderr)
        session = _ChatSession(conversation)
        while True:
            try:
                question = input("you> ").strip()
            except EOFError:
                break
            if not question or question in ("/quit", "/exit"):
                break
            session.ask(workflow, args, question)
    session.goodbye()
    return 0


class _ChatSession:
    """gam-chat's turns: the conversation they continue, and what was really saved (a turn
    that failed saved nothing, and the goodbye never says otherwise)."""

    def __init__(self, conversation: str | None) -> None:
        self.conversation = conversation
        self.saved = 0
        self.failed = 0

    def ask(self, workflow: Workflow, args: argparse.Namespace, question: str) -> None:
        try:
            turn, learned = _turn(workflow, args, question, self.conversation)
        except KeyboardInterrupt:
            print("\ngam-chat: cancelled", file=sys.stderr)
            return
        except EXPECTED_ERRORS as exc:
            self.failed += 1
            print(f"gam-chat: {reason(exc)}; this turn was not saved", file=sys.stderr)
            return
        if turn.conversation_id:  # None: saving conversations is off for this memory
            self.conversation = turn.conversation_id
            self.saved += 1
        _print_answer(turn.result, trajectory=False)
        _print_learned(learned)

    def goodbye(self) -> None:
        unsaved = f" ({plural(self.failed, 'turn')} could not be saved)" if self.failed else ""
        if self.saved:
            print(f"Saved as conversation {self.conversation}.{unsaved}", file=sys.stderr)
        elif self.failed:
            print("Nothing was saved.", file=sys.stderr)


def _workflow(name: str, args: argparse.Namespace) -> Workflow | None:
    try:
        settings = settings_for("chat", args)
    except ValueError as exc:  # pydantic's ValidationError, or a bad number in the environment
        print(f"{name}: invalid setting: {reason(exc)}", file=sys.stderr)
        return None
    workflow = Workflow(gam_dir=args.gam_dir, chat_settings=settings)
    if workflow.folder.is_memory() and workflow.interrupted() is not None:
        print(f"{name}: warning: {recover_hint(args.gam_dir)}", file=sys.stderr)
    return workflow


def _continued(workflow: Workflow, args: argparse.Namespace) -> str | None:
    """The conversation to continue: an id, the latest ("last"), or None for a new one."""
    wanted = getattr(args, "conversation", None)
    if wanted in (None, "", "new"):
        return None
    if wanted == "last":  # an unreadable latest one is an error, not a reason to start anew
        latest = workflow.last_conversation()
        if latest is None:
            print("No saved conversation yet: starting a new one.", file=sys.stderr)
        return latest.id if latest is not None else None
    return workflow.conversation(str(wanted)).id  # there and readable, before any question


def _turn(
    workflow: Workflow, args: argparse.Namespace, question: str, conversation: str | None
) -> tuple[ChatTurn, Learned | None]:
    """One saved turn, then what it taught (unless --no-learn)."""
    turn = workflow.chat(
        question,
        conversation,
        on_step=_steps(args),
        explore=args.explore,
        max_iterations=args.max_iterations,
    )
    if getattr(args, "no_learn", False):
        return turn, None
    try:
        return turn, workflow.learn_from_turn(turn.conversation_id, turn.turn, question)
    except EXPECTED_ERRORS as exc:  # the answer is saved: say why nothing was learned
        return turn, Learned(problem=reason(exc))


def _steps(args: argparse.Namespace) -> Callable[[Step], None]:
    def show_step(step: Step) -> None:
        if not args.quiet and not args.json:
            print(f"  … {step.describe()}", file=sys.stderr)

    return show_step


def _print_answer(result: ChatResult, trajectory: bool) -> None:
    print(result.answer)
    cited = [c.describe() for c in result.citations] or result.sources
    print(f"\nSources: {', '.join(cited) or '(none)'}")
    print(f"Confidence: {result.confidence:.2f}")
    if trajectory:
        print("\nTrajectory:\n" + result.trajectory)


def _print_learned(learned: Learned | None) -> None:
    if learned is None:
        return
    if learned.problem:
        print(f"Learned nothing: {learned.problem}", file=sys.stderr)
    elif learned:
        changes = [f"+ {f.statement}" for f in learned.added]
        changes += [f"~ {old.statement} → {new.statement}" for old, new in learned.updated]
        changes += [f"- {f.statement}" for f in learned.deleted]
        print(f"{learned.summary()}:\n  " + "\n  ".join(changes))
