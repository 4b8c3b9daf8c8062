"""Running a command that dies at a fault point, as `kill -9` would leave it.

    python tests/fault_runner.py <point>:<n> -c <code> [args...]

installs a hook on gam_desktop.engine.store.faults that exits the process at once (status
137, no cleanup, no `finally`) the n-th time it reaches `<point>` (write, staged, reverted,
restored), then runs `<code>` as `python -c` would. `dying_at` turns a `python -c` command
line (tests.clirun.cli_command) into that one.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

if __name__ == "__main__":  # run by path: the repository, not tests/, goes on sys.path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from gam_desktop.engine.store import faults


def exit_at(point: str, times: int = 1) -> faults.FaultHook:
    """A fault hook that exits (137) the `times`-th time `point` is reached."""
    seen = 0
    lock = threading.Lock()

    def hook(reached: str) -> None:
        nonlocal seen
        if reached != point:
            return
        with lock:
            seen += 1
            if seen >= times:
                os._exit(137)

    return hook


def dying_at(fault: str, command: list[str]) -> list[str]:
    """`command` ([python, "-c", code, *args]) run so that it dies at `fault` ("write:2")."""
    python, flag, *rest = command
    assert flag == "-c", command
    return [python, str(Path(__file__).resolve()), fault, flag, *rest]


def main(argv: list[str]) -> None:
    fault, flag, code, *args = argv
    assert flag == "-c", argv
    point, _, times = fault.partition(":")
    faults.install(exit_at(point, int(times or 1)))
    sys.argv = ["-c", *args]
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})


if __name__ == "__main__":
    main(sys.argv[1:])
