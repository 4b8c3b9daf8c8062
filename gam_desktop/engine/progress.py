"""How a long operation reports progress and how it is stopped.

The engine reports through a plain callback so that the CLI can drive a progress
bar and the GUI can forward the same events from a QThread worker as signals. An
operation made of stages (reading, chunking, summarizing, planning, writing) says how
far the whole of it has come, so a front end draws one bar that never goes back.
Cancellation is cooperative: the engine checks the token between LLM calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


class OperationCancelled(Exception):
    """Raised inside the engine when the user cancelled; nothing has been written."""


@dataclass(frozen=True)
class ProgressEvent:
    stage: str  # "read", "chunk", "memorize", "organize", "place", "describe", "write", ...
    done: int
    total: int
    message: str = ""
    # How far the whole operation has come, 0 to 1, never less than in the event before;
    # None when the operation does not know (a wait for the lock, an operation of one step).
    fraction: float | None = None


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    pass


class Stages:
    """One operation's stages on one bar from 0 to 1 that never goes back.

    `expect` shares what is left of the bar among the stages still to come, in proportion
    to their weights (about how long each takes, in one unit of the caller's choosing);
    `report` moves the bar within its stage's share. The weights are guesses that get
    better as the work goes (the number of chunks is known once documents are cut): each
    `expect` shares anew only what is left, so no guess moves the bar back. A stage not
    expected (a wait for the lock) reports where the bar already is."""

    def __init__(self, callback: ProgressCallback = no_progress) -> None:
        self.callback = callback
        self.reached = 0.0
        self._shares: dict[str, tuple[float, float]] = {}  # stage -> (start, width)
        self._said = ""  # the last message

    def expect(self, **weights: float) -> None:
        total = sum(max(w, 0.0) for w in weights.values())
        start, left = self.reached, 1.0 - self.reached
        self._shares = {}
        for stage, weight in weights.items():
            width = left * max(weight, 0.0) / total if total > 0 else 0.0
            self._shares[stage] = (start, width)
            start += width

    def report(self, stage: str, done: int, total: int, message: str = "") -> None:
        start, width = self._shares.get(stage, (self.reached, 0.0))
        part = min(max(done, 0), total) / total if total > 0 else 1.0
        self.reached = max(self.reached, min(1.0, start + width * part))
        self._said = message or self._said
        self.callback(ProgressEvent(stage, done, total, message, self.reached))

    def part(self, stage: str, prefix: str = "") -> Stages:
        """A bar of its own for the work of `stage` (one step of a drop, with stages of its
        own), drawn within this bar's share for `stage`; its messages begin with `prefix`."""
        start, width = self._shares.get(stage, (self.reached, 0.0))

        def forward(event: ProgressEvent) -> None:
            inner = 0.0 if event.fraction is None else event.fraction
            self.reached = max(self.reached, min(1.0, start + width * inner))
            message = f"{prefix}{event.message}" if event.message else ""
            self._said = message or self._said
            self.callback(
                ProgressEvent(event.stage, event.done, event.total, message, self.reached)
            )

        return Stages(forward)

    def finish(self) -> None:
        """The operation is over: the bar is full (shares kept for work that was not needed,
        a reorganization that moved nothing, are passed over), saying what it said last."""
        self.expect(done=1)
        self.report("done", 1, 1, self._said)


class CancelToken:
    """A thread-safe flag the GUI sets and the engine polls between calls.

    Besides stopping now, a drop committed in steps can be asked to stop after its current
    step (`stop_after_step`: the finished steps, and that one, are kept), and a cancel can
    ask that the steps it already committed be undone too (`cancel(undo=True)`)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._after_step = threading.Event()
        self._undo = False

    def cancel(self, undo: bool = False) -> None:
        self._undo = self._undo or undo
        self._event.set()

    def stop_after_step(self) -> None:
        self._after_step.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def stopping(self) -> bool:
        """Asked to stop once the current step is written (a cancel implies it)."""
        return self._after_step.is_set() or self._event.is_set()

    @property
    def undo(self) -> bool:
        """Cancelled, and what was already committed is to be undone."""
        return self._undo and self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise OperationCancelled("cancelled")

    def sleep(self, seconds: float) -> None:
        """Wait, but wake up and raise as soon as the operation is cancelled."""
        if self._event.wait(max(0.0, seconds)):
            raise OperationCancelled("cancelled")
