"""How a long operation reports progress and how it is stopped.

The engine reports through a plain callback so that the CLI can drive a progress
bar and the GUI can forward the same events from a QThread worker as signals.
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


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    pass


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
