"""Fault injection for the crash tests: dying at a chosen point, as `kill -9` would.

`GAM_FAULT_EXIT_AT=<point>:<n>` makes the process exit at once (status 137, no cleanup,
no `finally`) the n-th time it reaches `<point>`. Points: `write` (after a file of a
change set is written), `staged` (after `git add`, before the commit), `reverted`
(a rollback's revert applied, not committed), `restored` (a restore's files checked
out, not committed). Unset in normal use: then `reached` is one dictionary lookup.
"""

from __future__ import annotations

import os
import threading

_point, _, _count = os.environ.get("GAM_FAULT_EXIT_AT", "").partition(":")
_EXIT_AT = {_point: int(_count or 1)} if _point else {}
_seen: dict[str, int] = {}
_lock = threading.Lock()


def reached(point: str) -> None:
    if point not in _EXIT_AT:
        return
    with _lock:
        _seen[point] = _seen.get(point, 0) + 1
        if _seen[point] >= _EXIT_AT[point]:
            os._exit(137)
