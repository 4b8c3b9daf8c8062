"""What an operation changed in a memory folder: the value every writing operation reports.

The views (the tree, an open file, the history, a chat's sources) update from it instead of
guessing. It is computed from what was recorded (a commit's name-status, or the change sets
applied when there is no git), so it names exactly the files touched. Paths are relative
POSIX paths under the memory root; a move is (old, new). `everything` says the extent is
not known (recovery after a crash), and then every path counts as touched.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# The kinds of operation that change a memory (a commit's Gam-Operation trailer, mostly).
BUILD, ADD, REORGANIZE, INITIALIZE = "build", "add", "reorganize", "initialize"
ROLLBACK, RESTORE, RECOVER, OUTSIDE_EDIT = "rollback", "restore", "recover", "outside-edit"
CHAT, LEARN, FORGET = "chat", "learn", "forget"  # a saved turn; facts learned; forgotten
SETTINGS = "settings"  # the memory's own switches (.gam_meta.json)
RESEARCH = "research"  # a research report saved into research/
SUMMARIZE = "summarize"  # memories written without the LLM, summarized again with it

# How a path stands after a sequence of changes, relative to before the first of them:
# ("added", None), ("modified", path), or ("moved", the path it had before).
_State = tuple[str, str | None]


@dataclass(frozen=True)
class Changes:
    kind: str
    added: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    moved: frozenset[tuple[str, str]] = frozenset()  # (old path, new path)
    commit: str | None = None  # the (last) commit that recorded them, if any
    everything: bool = field(default=False)  # the extent is unknown: treat all as touched

    @property
    def empty(self) -> bool:
        return not (self.everything or self.added or self.modified or self.removed or self.moved)

    @functools.cached_property
    def paths(self) -> frozenset[str]:
        """Every path named: added, modified, removed, and both ends of each move."""
        ends = {path for pair in self.moved for path in pair}
        return self.added | self.modified | self.removed | ends

    @functools.cached_property
    def _folders(self) -> frozenset[str]:
        """Every folder holding a named path, at any depth: made once, as the views ask
        `touches` of a 1,000-file change several times each."""
        return frozenset(
            p.rsplit("/", depth)[0] for p in self.paths for depth in range(1, p.count("/") + 1)
        )

    def touches(self, path: str) -> bool:
        """Whether `path` (a file or a folder, "" for the root) was changed, is inside a
        folder that was, or is a folder holding a changed file."""
        if self.everything:
            return True
        path = path.strip("/")
        if not path:
            return not self.empty
        if path in self.paths or path in self._folders:  # it, or a folder holding one
            return True
        parts = path.split("/")
        return any("/".join(parts[:i]) in self.paths for i in range(1, len(parts)))  # in one

    def moved_to(self, path: str) -> str | None:
        """Where the file (or a file inside the folder) at `path` went, if it was moved."""
        for old, new in self.moved:
            if old == path:
                return new
            if path.startswith(f"{old}/"):
                return new + path[len(old) :]
        return None

    def then(self, later: Changes) -> Changes:
        """These changes followed by `later` ones, as one (the first's kind): a file added
        then moved is added at its new place, a file moved back is modified, and so on."""
        if self.everything or later.everything:
            return Changes(self.kind, everything=True, commit=later.commit or self.commit)
        net: dict[str, _State] = {p: ("added", None) for p in self.added}
        net.update({p: ("modified", p) for p in self.modified})
        net.update({new: ("moved", old) for old, new in self.moved})
        removed = set(self.removed)
        _move(net, removed, later.moved)
        for path in later.removed:
            state, origin = net.pop(path, ("modified", path))
            if state != "added" and origin is not None:
                removed.add(origin)
        for path in later.added:
            if path in removed:  # deleted, then made again: changed in place
                removed.discard(path)
                net[path] = ("modified", path)
            else:
                net.setdefault(path, ("added", None))
        for path in later.modified:
            net.setdefault(path, ("modified", path))
        return Changes(
            self.kind,
            added=frozenset(p for p, (s, _) in net.items() if s == "added"),
            modified=frozenset(p for p, (s, _) in net.items() if s == "modified"),
            removed=frozenset(removed),
            moved=frozenset((o, p) for p, (s, o) in net.items() if s == "moved" and o),
            commit=later.commit or self.commit,
        )

    @classmethod
    def combined(cls, kind: str, steps: Iterable[Changes]) -> Changes:
        """One operation's steps (oldest first) as one Changes of `kind`."""
        result = cls(kind)
        for step in steps:
            result = result.then(step)
        return result

    @classmethod
    def seen(
        cls, kind: str, root: Path, paths: Iterable[str], commit: str | None = None
    ) -> Changes:
        """Paths seen changing on disk, without knowing how: a path still there is
        modified, a path gone is removed (the watcher's view of an outside edit)."""
        present = {p for p in paths if (root / p).exists()}
        gone = {p for p in paths if p not in present}
        return cls(kind, modified=frozenset(present), removed=frozenset(gone), commit=commit)

    def merged(self, other: Changes) -> Changes:
        """Both views of the same change (a commit's exact list and the paths the watcher
        saw): a path the first names keeps how it names it; the rest is added."""
        if self.everything or other.everything:
            return Changes(self.kind, everything=True, commit=self.commit or other.commit)
        known = self.paths
        return Changes(
            self.kind,
            added=self.added | (other.added - known),
            modified=self.modified | (other.modified - known),
            removed=self.removed | (other.removed - known),
            moved=self.moved | frozenset(m for m in other.moved if not set(m) & known),
            commit=self.commit or other.commit,
        )


def _move(net: dict[str, _State], removed: set[str], moves: frozenset[tuple[str, str]]) -> None:
    """Apply one step's moves to `net`. They happen at once (a→b and b→c in the same
    commit): every source is taken first, then placed."""
    taken = [(net.pop(old, ("modified", old)), new) for old, new in moves]
    for (state, origin), new in taken:
        if state == "added":
            net[new] = ("added", None)
        elif origin == new or new in removed:  # back in place, or over a removed file
            removed.discard(new)
            if origin is not None and origin != new:
                removed.add(origin)
            net[new] = ("modified", new)
        else:
            net[new] = ("moved", origin)
