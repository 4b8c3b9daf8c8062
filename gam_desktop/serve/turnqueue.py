"""gam-serve's answered turns on disk until they are written: a `kill -9` loses none.

Each turn is one JSON file under the memory's .gam/serve-queue/ (kept out of git), written
whole (temp file, fsync, os.replace) before the writer thread is handed the turn, and
removed once the turn is saved. At start the files left are replayed, oldest first (the
name starts with the time it was queued). A turn is never saved twice: its id goes into
the saved turn's data, and a replayed turn whose id is already saved is only removed.
A file that is not a queued turn is renamed `*.bad` (kept for a person to look at).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from gam_desktop.engine.api import SERVE_QUEUE_DIR, atomic_write, check_writable_path, parse_time

log = logging.getLogger(__name__)


class TurnQueue:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def put(self, turn_id: str, data: dict[str, Any]) -> Path:
        """Write one turn (refused, like every write, if .gam or the folder is a link)."""
        name = f"{SERVE_QUEUE_DIR}/{time.time_ns():020d}-{turn_id}.json"
        path = check_writable_path(self.root, name)
        atomic_write(path, json.dumps({**data, "id": turn_id}, ensure_ascii=False))
        return path

    def done(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def left(self) -> list[tuple[Path, dict[str, Any]]]:
        """The turns a previous run queued and did not write, oldest first; files that
        cannot be read as a turn are set aside."""
        folder = self.root / SERVE_QUEUE_DIR
        if folder.is_symlink() or not folder.is_dir():
            return []
        found = []
        for path in sorted(folder.glob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if not (isinstance(data, dict) and _is_turn(data)):
                    raise ValueError("not a queued turn")
            except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
                aside = path.with_name(path.name + ".bad")
                log.warning("queued turn %s cannot be read (%s): set aside as %s", path, exc, aside)
                with contextlib.suppress(OSError):
                    path.replace(aside)
                continue
            found.append((path, data))
        return found


def _is_turn(data: dict[str, Any]) -> bool:
    return (
        isinstance(data.get("id"), str)
        and isinstance(data.get("question"), str)
        and isinstance(data.get("answer"), str)
        and isinstance(data.get("history"), list)
        and isinstance(data.get("sources"), list)
        and isinstance(data.get("at"), str)
        and parse_time(data["at"]) is not None
    )
