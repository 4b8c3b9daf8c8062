"""What every command shares: expected errors, UTF-8 output, argument types, LLM flags,
the one-line reason of a failure, names shown with their control characters escaped."""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError
from tqdm import tqdm

from gam_desktop import appdirs
from gam_desktop.engine.api import (
    GamError,
    GitUnavailable,
    History,
    LLMSettings,
    MemoryFolder,
    NotAMemoryError,
    ProgressEvent,
    Role,
    Workflow,
    interrupted_operation,
    redact_known,
    remember_capabilities_in,
    stored_name,
)

# What a person can act on: the engine's errors (with advice), the environment's (a
# folder that cannot be written, a full disk) and a bad setting. Anything else is a bug.
EXPECTED_ERRORS = (GamError, OSError, ValidationError)


EX_SOFTWARE = 70  # sysexits.h: an internal error


def entry_point(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """A command's main: output in UTF-8, and an unexpected error (a bug) reported as one,
    its traceback on stderr, exit status 70."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: Sequence[str] | None = None, **options: Any) -> int:
            utf8_output()
            try:
                return main(argv, **options)
            except Exception as exc:  # the expected ones were handled inside
                # no key this process sends, even in a bug's traceback
                print(redact_known(traceback.format_exc()), end="", file=sys.stderr)
                print(
                    redact_known(
                        f"{name}: unexpected error (a bug; the traceback is above): "
                        f"{type(exc).__name__}: {exc}"
                    ),
                    file=sys.stderr,
                )
                return EX_SOFTWARE

        return run

    return wrap


def utf8_output() -> None:
    """Windows pipes default to the ANSI code page (cp1252): an answer holding '→' or CJK
    raised UnicodeEncodeError. Output is UTF-8, a character it cannot take replaced."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # None in a windowed app
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(encoding="utf-8", errors="replace")


def shown(text: str) -> str:
    """`text` for one line of the terminal: control codes (a newline in a file's name split
    the line, an ESC repaints the screen or retitles the window) and the bidirectional
    controls that show a name reversed written as escapes, by the rule a memory stores a
    document's name with ("new\\nline.txt", "esc\\x1b]0;TITLE"): a name reads the same in
    a note and on the command line."""
    return stored_name(text)


def say(line: str) -> None:
    """A progress, warning or error line on stderr, the names in it shown safely."""
    print(shown(line), file=sys.stderr, flush=True)


class ProgressBar:
    """One tqdm bar per stage, replaced when the stage changes. Events that tell the person
    something (`SAID`: "Resuming: 312 of 500 chunks already summarized") are printed as a
    line, bar or not."""

    SAID = ("resume",)

    def __init__(self, enabled: bool, name: str = "gam-add") -> None:
        self.enabled = enabled
        self.name = name
        self.bar: tqdm | None = None
        self.stage = ""
        # Into a log (stderr not a terminal) a bar's hundreds of "\r" frames filled it: a
        # line per stage there instead.
        self.lines = not (sys.stderr is not None and sys.stderr.isatty())

    def __call__(self, event: ProgressEvent) -> None:
        if event.stage in self.SAID:
            message = f"{self.name}: {event.message}"
            if self.bar is not None:
                self.bar.write(shown(message), file=sys.stderr)
            else:
                say(message)
            return
        if not self.enabled:
            return
        if self.lines:
            if event.stage != self.stage:
                self.stage = event.stage
                say(f"{self.name}: {event.message or event.stage}")
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
            self.bar.set_postfix_str(shown(event.message)[:40], refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
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


def parallel(value: str) -> int:
    """An argparse type: "auto" (0: as many as the server is found to take) or a number."""
    return 0 if value.strip().lower() == "auto" else whole(1, 64)(value)


def seconds(value: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0 < number < math.inf:
        raise argparse.ArgumentTypeError(f"{value} is out of range (it must be more than 0)")
    return number


def llm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument("--model", help="model name (default: $GAM_AGENT_MODEL or $OPENAI_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument(
        "--workers",
        type=parallel,
        help="parallel LLM calls: auto (the default: learned from the server) or a number",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        help="seconds of silence before an LLM call is given up (default 120)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def settings_for(role: Role, args: argparse.Namespace) -> LLMSettings:
    """LLM settings for `role` from the environment, with the shared flags on top; what
    the server is found to support is remembered across runs (as the window does)."""
    remember_capabilities_in(appdirs.capabilities_file())
    return LLMSettings.from_env(
        role, model=args.model, base_url=args.base_url, workers=args.workers, timeout=args.timeout
    )


def history_workflow(gam_dir: str) -> tuple[Workflow, History]:
    """The memory's workflow and its history (GitUnavailable when there is none)."""
    workflow = Workflow(gam_dir=gam_dir, settings=LLMSettings())
    if not workflow.folder.is_memory():
        raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
    history = workflow.history
    if history is None:
        raise GitUnavailable(workflow.history_message or "history is unavailable")
    return workflow, history


def recovery_workflow(gam_dir: str) -> Workflow:
    workflow = Workflow(gam_dir=gam_dir, settings=LLMSettings())
    if not workflow.folder.is_memory() and interrupted_operation(workflow.folder) is None:
        raise NotAMemoryError(f"{workflow.folder.root} is not a GAM memory")
    return workflow


def recover_hint(gam_dir: str, then: str = "") -> str:
    """What to do after a crash in the middle of an operation (the journal names it), and
    `then` what to do once it is recovered."""
    found = interrupted_operation(MemoryFolder(gam_dir))
    hint = (
        f"a previous {found.operation if found else 'operation'} was interrupted; recover "
        f"first: gam-history --gam-dir {shlex.quote(gam_dir)} recover --restore (or --keep)"
    )
    return shown(f"{hint}, then {then}" if then else hint)  # a folder's name may hold a newline


def reason(exc: BaseException) -> str:
    """An expected failure in one line, never a traceback or a multi-line dump."""
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        where = ".".join([exc.title, *(str(part) for part in error["loc"])])
        return shown(f"{where}: {error['msg']}")  # "LLMSettings.workers: Input should be ..."
    if isinstance(exc, OSError) and exc.strerror:  # "[Errno 30] ..." reads badly
        return shown(f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror)
    text = str(exc).strip().splitlines()  # git's own message is its last line
    return shown(text[-1]) if text else type(exc).__name__
