"""Watching the memory for edits made outside the app: each quiet burst of them becomes one
"manual edit" commit, refreshes the search index and is reported as an `OutsideEdit`
carrying its `Changes`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from gam_desktop.engine.history import journal
from gam_desktop.engine.history.versioned import RecordedEdits, VersionedFolder
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.store.changes import OUTSIDE_EDIT, Changes
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.lock import FolderBusyError
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.store.watcher import FolderWatcher


@dataclass
class OutsideEdit:
    """Files changed outside the app, the commit that recorded them, and problems seen."""

    paths: list[str]  # edited by someone else (empty when all were the app's own writes)
    commit: str | None
    problems: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # everything that changed on disk
    changes: Changes = field(default_factory=lambda: Changes(OUTSIDE_EDIT))  # ...as Changes
    head: str | None = None  # the memory's last commit once they were recorded
    left_out: list[str] = field(default_factory=list)  # a pipe or device among the notes


def front_matter_problems(folder: MemoryFolder, paths: list[str]) -> list[str]:
    """Memories whose front matter a person broke, in words: "The front matter of x.md cannot
    be read: line 3 has a ':' where a value was expected …". Reported, never rewritten."""
    problems = []
    for path in paths:
        file = folder.root / path
        if not path.endswith(".md") or file.name == "README.md" or not folder.readable(file):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        problem = parse_memory(text).problem
        if problem and text.startswith("---"):
            problems.append(f"The front matter of {path} cannot be read: {problem}.")
    return problems


class WatchOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context
        self.watchers: list[FolderWatcher] = []  # started by `start`, stopped by `stop`

    def start(self, on_edit: Callable[[OutsideEdit], None]) -> FolderWatcher:
        """Start watching for edits made outside the app; `on_edit` hears each burst's."""
        ctx = self.context
        folder = ctx.folder
        # The watcher's thread gets a versioned folder (and repository) of its own: they
        # are not safe to share between threads, and the GUI thread holds the context's.
        own = VersionedFolder(folder, ctx.versioned.git_path, ctx.lock_timeout)

        def handle(paths: list[str]) -> None:
            recorded = RecordedEdits(None, paths, Changes.seen(OUTSIDE_EDIT, folder.root, paths))
            with contextlib.suppress(FolderBusyError):
                recorded = own.commit_manual_edits(paths)
            if ctx.tools is not None:  # on this background thread, not the next question's
                ctx.tools.corpus.refresh(paths)
                ctx.tools.index.ensure_built()
            outside = recorded.outside
            problems = front_matter_problems(folder, outside)
            on_edit(
                OutsideEdit(
                    outside,
                    recorded.commit,
                    problems,
                    changed=paths,
                    changes=recorded.changes,
                    head=recorded.head,
                    left_out=list(recorded.left_out),
                )
            )

        def missed() -> list[str]:
            """Uncommitted files while no operation runs: edits no notification reported."""
            repo = own.repo
            if repo is None or journal.read(folder) is not None:
                return []
            return [p for p in repo.dirty_paths() if p.endswith(".md")]

        watcher = FolderWatcher(folder.root, handle, rescan=missed, rescan_every=ctx.rescan_every)
        watcher.start()
        self.watchers.append(watcher)
        # While it runs, it reports every outside edit: searches need no walk of the tree.
        ctx.search_tools().corpus.watched = lambda: watcher.running
        return watcher

    def stop(self) -> None:
        """Stop every watcher started here (a later `start` watches again)."""
        watchers, self.watchers = self.watchers, []
        for watcher in watchers:
            watcher.stop()
