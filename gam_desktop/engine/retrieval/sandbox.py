"""Confining the agent's tools to the memory folder.

Everything the agent names is untrusted: a document may tell it to read
`../../.ssh/id_rsa`. A path is accepted only if, after resolving `..` and every
symlink, it lies inside the memory root and outside `.git/` and `.gam/`.
Refusals are ToolErrors whose message the agent sees, never exceptions that
escape the loop.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from gam_desktop.engine.store.gitdir import kind_of
from gam_desktop.engine.store.links import is_absent, is_private, is_private_name, resolve_within


class ToolError(ValueError):
    """A tool call that was refused or failed; str() is what the agent is told."""


def _kind(path: Path) -> str:
    """What `path` is, as the agent is told ("a named pipe"): a FIFO is neither a file nor
    a directory, and calling it one sent the agent looking for what was not there."""
    try:
        mode = path.stat().st_mode  # (resolved already: through links inside the memory)
    except OSError:
        return "unreadable"
    if stat.S_ISDIR(mode):
        return "a directory"
    return kind_of(path.resolve()) or "a file"


def read_regular_text(path: Path, limit: int = -1) -> str | None:
    """The first `limit` characters of the regular file at `path` (UTF-8, what is not
    replaced), None when it is none: a named pipe, a socket or a device is not opened
    (opening a pipe waits for a writer: the agent's call, or the search, for ever), and one
    put in the file's place between that look and the open is opened without waiting and
    not read."""
    if not stat.S_ISREG(path.stat().st_mode):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        return handle.read(limit)


class Sandbox:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def resolve(self, raw: str | None, *, want_dir: bool | None = None) -> tuple[Path, str]:
        """(absolute path, POSIX path relative to the root) for an agent-given path."""
        text = (raw or "/").strip().replace("\\", "/")
        if "\x00" in text:
            raise ToolError("invalid path")
        if text.startswith("~") or (len(text) > 1 and text[1] == ":"):
            raise ToolError(f"'{raw}' is outside the memory; paths are relative to its root")
        rel = PurePosixPath(text.lstrip("/"))
        if any(part == ".." for part in rel.parts):
            raise ToolError(f"'{raw}' leaves the memory folder; '..' is not allowed")
        if any(is_private_name(part) for part in rel.parts):
            raise ToolError(f"'{raw}' is private to the app and cannot be read")
        path = resolve_within(self.root, self.root / rel)
        if path is None:
            if not os.path.lexists(self.root / rel):
                raise ToolError(f"'{raw}' does not exist")
            raise ToolError(f"'{raw}' points outside the memory folder (a link?)")
        if is_private(self.root, path):
            raise ToolError(f"'{raw}' is private to the app and cannot be read")
        inside = path.relative_to(self.root).as_posix()
        if want_dir is True and not path.is_dir():
            raise ToolError(f"'{raw}' is {_kind(path)}, not a directory")
        if want_dir is False and not path.is_file():
            raise ToolError(f"'{raw}' is {_kind(path)}, not a file")
        return path, "" if inside == "." else inside

    def read(self, path: Path, shown: str, limit: int = -1) -> str:
        """The text of the file `resolve` gave (its first `limit` characters); a file
        swapped since for a named pipe, a socket or a device is refused, never waited on."""
        text = read_regular_text(path, limit)
        if text is None:
            raise ToolError(f"'{shown}' is {_kind(path)}, not a file")
        return text

    def visible(self, path: Path) -> bool:
        """Whether a path found while walking may be shown (no dotfiles, no links out)."""
        return not path.name.startswith(".") and not is_absent(self.root, path)
