"""The search index requests read, kept fresh off the request path.

Every saved turn changes the folder, and the BM25 model is rebuilt whole when the corpus
changes: 1.8 s at 10,000 memories. Rebuilt on a request, each turn would stall the next
requests by that much (3 requests/s). Instead requests read `current`, which nothing
refreshes under them, while one thread refreshes a second set of tools (re-reading only
changed files), rebuilds its index and swaps the two. A turn is searchable a few seconds
after it is written; an edit made elsewhere (the app, an editor) is seen within `idle`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from gam_desktop.engine.api import EmbeddingSettings, MemoryTools

log = logging.getLogger(__name__)


class FreshIndex:
    """Two sets of search tools over one folder: `current` for reading, the other being
    refreshed. `changed()` asks for a refresh soon; without one, the folder is checked
    every `idle` seconds. Rebuilds are at least `gap` seconds apart. With `embeddings` (not
    off), search is by meaning too, as in the app; without, BM25 alone."""

    def __init__(
        self,
        root: Path,
        *,
        gap: float = 2.0,
        idle: float = 15.0,
        embeddings: EmbeddingSettings | None = None,
    ) -> None:
        self.current = MemoryTools(root, embeddings=embeddings)
        self._standby = MemoryTools(root, embeddings=embeddings)
        self.gap, self.idle = gap, idle
        self.swaps = 0
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gam-serve-index", daemon=True)

    def start(self) -> None:
        """Build the first index (a request never waits for one), then keep it fresh."""
        self.current.corpus.refresh()
        self.current.index.ensure_built()
        self._thread.start()

    def stop(self) -> None:
        """End the thread, then close both indexes' databases (Windows keeps a folder with
        an open file from being deleted or moved)."""
        self._stop.set()
        self._dirty.set()
        if self._thread.is_alive():
            self._thread.join(60)
        if not self._thread.is_alive():  # (a refresh that outlived the wait keeps its own)
            self.current.close()
            self._standby.close()

    def changed(self) -> None:
        self._dirty.set()

    def refresh_now(self) -> None:
        """Refresh the standby tools and make them current (the thread's step; tests call
        it to see a write at once)."""
        standby = self._standby
        standby.corpus.refresh()
        standby.index.ensure_built()
        self._standby, self.current = self.current, standby
        self.swaps += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self._dirty.wait(self.idle)
            self._dirty.clear()
            if self._stop.is_set():
                return
            try:
                self.refresh_now()
            except OSError as exc:  # the folder went away or cannot be read: keep serving
                log.warning("the search index could not be refreshed: %s", exc)
            self._stop.wait(self.gap)
