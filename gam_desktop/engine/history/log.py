"""The memory's history: one git commit per operation, listed, inspected, undone.

A rollback is `git revert` as a new commit, never a rewrite, so it can itself be
rolled back. When later operations changed the same READMEs (every add rewrites
the root README), those derived files are regenerated from the tree instead of
failing; a conflict on a memory itself is reported with the operations that
caused it, and the caller may restore the whole folder to before the operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.history.gitrepo import GitFailed, MemoryRepo
from gam_desktop.engine.store import faults
from gam_desktop.engine.store.changes import Changes

TRAILER_KIND = "Gam-Operation"
ROLLED_BACK = "Rolled back: "
UNDID_ROLLBACK = "Undid rollback: "
RESTORED = "Restored the memory to before: "
_RECORD, _FIELD = "\x1e", "\x1f"
DERIVED_NAMES = ("README.md", ".gam_meta.json")


@dataclass
class Operation:
    sha: str
    time: int
    summary: str
    trailers: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.trailers.get(TRAILER_KIND, "other")

    @property
    def tokens(self) -> int:
        try:
            return int(self.trailers.get("Gam-Tokens", "0"))
        except ValueError:
            return 0


def rollback_summary(operation: Operation) -> str:
    """What rolling back `operation` is called, in the history and wherever it is reported:
    "Rolled back: Add…", then "Undid rollback: Add…", then "Rolled back: Add…" again; never
    "Rolled back: Rolled back: …"."""
    if operation.kind == "rollback":
        if operation.summary.startswith(ROLLED_BACK):
            return UNDID_ROLLBACK + operation.summary.removeprefix(ROLLED_BACK)
        if operation.summary.startswith(UNDID_ROLLBACK):
            return ROLLED_BACK + operation.summary.removeprefix(UNDID_ROLLBACK)
    return ROLLED_BACK + operation.summary


def restore_summary(operation: Operation) -> str:
    """What restoring the memory to before `operation` is called: "Restored the memory to
    before: Add…"; before a restore, "… before the restore to before: Add…" (its prefix is
    not repeated)."""
    if operation.summary.startswith(RESTORED):
        return f"{RESTORED}the restore to before “{operation.summary.removeprefix(RESTORED)}”"
    return RESTORED + operation.summary


@dataclass
class FileChange:
    status: str  # "added", "modified", "deleted", "moved"
    path: str
    old_path: str | None = None


def as_changes(kind: str, changes: Sequence[FileChange], commit: str | None = None) -> Changes:
    """One commit's file changes as the Changes the views update from."""

    def having(status: str) -> frozenset[str]:
        return frozenset(c.path for c in changes if c.status == status)

    return Changes(
        kind,
        added=having("added"),
        modified=having("modified"),
        removed=having("deleted"),
        moved=frozenset(
            (c.old_path, c.path) for c in changes if c.status == "moved" and c.old_path
        ),
        commit=commit,
    )


class UnknownOperation(GamError, ValueError):
    title = "No such operation"
    advice = "gam-history lists the operations of this memory."


class NothingToUndo(GamError, ValueError):
    title = "Nothing to undo"


class RollbackConflict(GamError, RuntimeError):
    """Later operations changed what the rollback would undo."""

    title = "This operation cannot be undone on its own"
    advice = (
        "Use “Restore to before this” to make the whole memory as it was before it (later "
        "operations are then undone too)."
    )

    def __init__(self, operation: Operation, paths: list[str], later: list[Operation]) -> None:
        names = ", ".join(f"'{op.summary}'" for op in later) or "later edits"
        same = "the same file" if len(paths) == 1 else f"{len(paths)} of the same files"
        super().__init__(
            f"'{operation.summary}' cannot be undone on its own: {names} changed {same}."
        )
        self.operation = operation
        self.paths = paths
        self.later = later


def _is_derived(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in DERIVED_NAMES


class History:
    def __init__(self, repo: MemoryRepo) -> None:
        self.repo = repo

    # -- reading -------------------------------------------------------------------

    def count(self) -> int:
        if self.repo.head() is None:
            return 0
        return int(self.repo.git("rev-list", "--count", "HEAD").strip())

    def operations(self, offset: int = 0, limit: int = 50, revs: str = "HEAD") -> list[Operation]:
        """Newest first."""
        if self.repo.head() is None:
            return []
        fmt = f"%H{_FIELD}%at{_FIELD}%s{_FIELD}%(trailers:unfold,only){_RECORD}"
        out = self.repo.git("log", f"--format={fmt}", f"--skip={offset}", f"-n{limit}", revs)
        return [self._parse(record) for record in out.split(_RECORD) if record.strip()]

    @staticmethod
    def _parse(record: str) -> Operation:
        sha, time, summary, trailers = record.strip("\n").split(_FIELD)
        pairs = dict(line.split(": ", 1) for line in trailers.splitlines() if ": " in line)
        return Operation(sha, int(time), summary, pairs)

    def removed_by(self, path: str) -> Operation | None:
        """The operation that last removed `path` (a rollback, a reorganization, an edit
        outside the app), or None when no operation removed it (never there, or there)."""
        if self.repo.head() is None:
            return None
        fmt = f"%H{_FIELD}%at{_FIELD}%s{_FIELD}%(trailers:unfold,only){_RECORD}"
        out = self.repo.git(
            "log",
            "-n1",
            "--diff-filter=D",
            f"--format={fmt}",
            "HEAD",
            "--",
            f":(literal){path}",
            check=False,
        )
        records = [record for record in out.split(_RECORD) if record.strip()]
        return self._parse(records[0]) if records else None

    def get(self, sha: str) -> Operation:
        resolved = self.repo.git(
            "rev-parse", "--verify", "-q", f"{sha}^{{commit}}", check=False
        ).strip()
        if not resolved or sha.startswith("-"):
            raise UnknownOperation(f"no operation '{sha}' in this memory's history")
        return self.operations(limit=1, revs=resolved)[0]

    def changes(self, sha: str) -> list[FileChange]:
        """The files one operation added, modified, deleted and moved (renames detected)."""
        out = self.repo.git(
            "diff-tree", "-r", "-M", "--root", "--no-commit-id", "--name-status", "-z", sha
        )
        parts = [p for p in out.split("\0") if p]
        changes, i = [], 0
        while i < len(parts):
            status = parts[i]
            if status.startswith(("R", "C")):
                changes.append(FileChange("moved", parts[i + 2], parts[i + 1]))
                i += 3
                continue
            kind = {"A": "added", "D": "deleted"}.get(status[0], "modified")
            changes.append(FileChange(kind, parts[i + 1]))
            i += 2
        return changes

    def committed(self, kind: str, commits: Sequence[str]) -> Changes:
        """What `commits` (one operation's, oldest first) changed, as one Changes."""
        return Changes.combined(kind, (as_changes(kind, self.changes(c), c) for c in commits))

    def diff(self, sha: str, path: str) -> str:
        """The patch of one file in one operation (both names of a moved file)."""
        paths = [path] + [c.old_path for c in self.changes(sha) if c.path == path and c.old_path]
        return self.repo.git("diff-tree", "-p", "-M", "--root", "--no-commit-id", sha, "--", *paths)

    def versions(self, sha: str, path: str) -> tuple[str | None, str | None]:
        """One file's text before and after one operation (None where it was not there; a
        moved file's, before, at its old name): the History says in words what changed in
        a note's front matter, and shows the rest of the patch without it."""
        old = next((c.old_path for c in self.changes(sha) if c.path == path and c.old_path), path)
        return self._text(f"{sha}^", old), self._text(sha, path)

    def _text(self, rev: str, path: str) -> str | None:
        try:  # the blob as stored (cat-file runs no filter or driver of the repository's)
            return self.repo.git("cat-file", "blob", f"{rev}:{path}")
        except GitFailed:  # no such file then (or no commit before the first)
            return None

    # -- undoing -------------------------------------------------------------------

    def rollback(self, sha: str, regenerate: Callable[[list[str]], object]) -> str:
        """Undo one operation as a new commit. `regenerate(paths)` rewrites derived files
        (READMEs, .gam_meta.json) from the tree where later operations also changed them."""
        operation = self.get(sha)  # pending edits were committed when the operation began
        self.repo.git("revert", "--no-commit", sha, check=False)
        faults.reached("reverted")
        conflicted = self.repo.git("diff", "--name-only", "--diff-filter=U").split()
        real = [p for p in conflicted if not _is_derived(p)]
        if real:
            self.repo.git("revert", "--abort", check=False)
            self.repo.git("reset", "-q", "--hard", "HEAD")
            later = self.operations(limit=100, revs=f"{sha}..HEAD")
            touching = set(self.repo.git("log", "--format=%H", f"{sha}..HEAD", "--", *real).split())
            raise RollbackConflict(operation, real, [op for op in later if op.sha in touching])
        if conflicted:
            self.repo.git("checkout", "--ours", "--", *conflicted)
            regenerate(conflicted)
        self.repo.git("revert", "--quit", check=False)
        new = self.repo.commit_all(
            rollback_summary(operation), {TRAILER_KIND: "rollback", "Gam-Reverts": sha}
        )
        if new is None:
            raise NothingToUndo("nothing to roll back: the operation changed nothing")
        return new

    def restore(self, sha: str, summary: str) -> str | None:
        """Make the whole folder as it was at `sha`, as a new commit."""
        self.repo.git("restore", f"--source={sha}", "--staged", "--worktree", "--", ".")
        faults.reached("restored")
        return self.repo.commit_all(summary, {TRAILER_KIND: "restore", "Gam-Restores": sha})
