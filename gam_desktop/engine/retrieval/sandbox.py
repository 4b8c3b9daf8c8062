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

    def visible(self, path: Path) -> bool:
        """Whether a path found while walking may be shown (no dotfiles, no links out)."""
        return not path.name.startswith(".") and not is_absent(self.root, path)
