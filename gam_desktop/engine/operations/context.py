"""What every operation of a Workflow shares: the memory folder, the LLM settings and the
one factory every LLM is made by, the versioned folder (the journal, the writer lock), the
progress bar, the cancel token, the change listener and the search tools.

A Workflow makes one context; its operation objects hold that one, never a copy, so what a
front end sets on the Workflow after making it (a task's progress bar and listener, the
session's new model) is what the next operation uses."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import InitVar, dataclass, field
from pathlib import Path

from gam_desktop.engine.history import journal
from gam_desktop.engine.history.versioned import VersionedFolder
from gam_desktop.engine.ingest import resume
from gam_desktop.engine.ingest.builder import BuildOptions, MemoryBuilder
from gam_desktop.engine.llm import LLM, LLMSettings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.llm.prices import PriceTable
from gam_desktop.engine.progress import (
    CancelToken,
    ProgressCallback,
    ProgressEvent,
    Stages,
    no_progress,
)
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import APP_DIR, MemoryFolder
from gam_desktop.engine.store.location import user_content
from gam_desktop.engine.store.lock import writer_lock

ChangeListener = Callable[[Changes], None]
LLMFactory = Callable[[LLMSettings], LLM]  # the LLM for a role's settings
# How often the watcher asks git what changed, for edits whose notification was lost: on
# Windows a buffer overflow drops them silently; elsewhere it is rarer (network folders).
RESCAN_EVERY = 30.0 if os.name == "nt" else 120.0


def ignore_changes(_changes: Changes) -> None:
    pass


def foreign_content(root: Path) -> list[str]:
    """The user's things in a folder that is not a memory yet (`store.location.user_content`,
    the one rule for an empty folder): writing a memory there needs their consent. Empty for
    a memory, a missing or empty folder, a folder an interrupted first build left (its
    operation asks for recovery instead) and a memory whose first build was rolled back
    (the rollback removed .gam_meta.json: its history is left beside the app's own folder,
    and its next question or add was refused as "not a GAM memory")."""
    folder = MemoryFolder(root)
    if folder.is_memory() or not root.is_dir() or journal.read(folder) is not None:
        return []
    content = user_content(root)
    return [] if content == [".git"] and (root / APP_DIR).is_dir() else content


@dataclass(eq=False)
class OperationContext:
    """One memory's shared state. `settings` are the builder's LLM settings, `chat_settings`
    the questions', conversations' and facts'; `llm_factory` makes the LLM for either (the
    real client in the app, a fake in tests); `tools` handed in are shared with other
    Workflows and closed by their owner."""

    folder: MemoryFolder
    settings: LLMSettings
    chat_settings: LLMSettings
    options: BuildOptions
    embeddings: EmbeddingSettings
    llm_factory: LLMFactory
    git_path: InitVar[str | None] = None
    tools: MemoryTools | None = None
    prices: PriceTable | None = None  # for the estimate's cost; None: the cost is not named
    progress: ProgressCallback = no_progress
    on_change: ChangeListener = ignore_changes
    cancel: CancelToken = field(default_factory=CancelToken)
    lock_timeout: float = 600.0
    rescan_every: float = RESCAN_EVERY  # seconds between the watcher's checks for lost edits
    versioned: VersionedFolder = field(init=False)
    owns_tools: bool = field(init=False)

    def __post_init__(self, git_path: str | None) -> None:
        self.owns_tools = self.tools is None
        self.versioned = VersionedFolder(self.folder, git_path, self.lock_timeout, self.waiting)

    # -- the LLM: every one is made by the factory ---------------------------------------

    def builder_llm(self) -> LLM:
        return self.llm_factory(self.settings)

    def chat_llm(self) -> LLM:
        return self.llm_factory(self.chat_settings)

    def builder(
        self, results: resume.StageResults = resume.NO_RESULTS, stages: Stages | None = None
    ) -> MemoryBuilder:
        """A builder keeping its LLM results in `results`, reporting on `stages` (the
        operation's bar, begun before it), else on a bar of its own."""
        return MemoryBuilder(
            self.folder,
            self.builder_llm(),
            self.options,
            stages or Stages(self.progress),
            self.cancel,
            results,
        )

    # -- the folder -----------------------------------------------------------------------

    def may_hold_memory(self) -> bool:
        """A memory, or a folder holding nothing of anyone's: one made for a memory and not
        built yet, or whose first build was rolled back (that removes .gam_meta.json). Its
        first question was refused as "not a GAM memory" in the folder the app had made."""
        root = self.folder.root
        return self.folder.is_memory() or (root.is_dir() and not foreign_content(root))

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """The folder's writer lock, for work that writes nothing yet must see no writer."""
        with writer_lock(self.folder, self.lock_timeout, on_wait=self.waiting):
            yield

    def waiting(self) -> None:
        self.progress(
            ProgressEvent("lock", 0, 1, "Waiting for another operation on this memory to finish")
        )

    def changed(self, changes: Changes) -> None:
        """A writing operation finished: the search tools re-read the files it changed, and
        `on_change` hears what changed."""
        if self.tools is not None:
            if changes.everything:  # which files is not known: the next look walks the tree
                self.tools.corpus.mark_stale()
            else:
                self.tools.corpus.refresh(changes.paths)
        self.on_change(changes)

    # -- the search tools -----------------------------------------------------------------

    def search_tools(self) -> MemoryTools:
        """The search tools (corpus, BM25 index), made on first use. They are thread-safe:
        the Workflows of several tasks may share them, so the index stays warm."""
        if self.tools is None:
            self.tools = MemoryTools(self.folder.root, embeddings=self.embeddings)
        return self.tools

    def close_tools(self) -> None:
        """Close the search index if it was made here (tools handed in are their owner's)."""
        if self.owns_tools and self.tools is not None:
            self.tools.close()
