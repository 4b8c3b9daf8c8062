"""Fault points: the places where a writing operation can be interrupted.

The store and the history call `reached(point)` at each of them: `write` (after a file of
a change set is written), `staged` (after `git add`, before the commit), `reverted` (a
rollback's revert applied, not committed), `restored` (a restore's files checked out, not
committed). In the product nothing is installed and `reached` does nothing; the crash
tests install a hook (`install`) that dies there as `kill -9` would (tests/fault_runner.py).
"""

from __future__ import annotations

from collections.abc import Callable

FaultHook = Callable[[str], None]

_hook: FaultHook | None = None


def install(hook: FaultHook | None) -> FaultHook | None:
    """Call `hook(point)` at every fault point from now on (None: nothing); returns the
    hook it replaces."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def reached(point: str) -> None:
    hook = _hook
    if hook is not None:
        hook(point)
