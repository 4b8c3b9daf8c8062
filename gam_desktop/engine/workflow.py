"""The engine's composition root: `Workflow`, the one name the front ends use.

A Workflow builds one `OperationContext` (the folder, the LLM settings and the one factory
every LLM is made by, the writer lock, the change listener, the search tools) and each
domain's operations on it (engine/operations), reachable as `workflow.ops`:
`workflow.ops.ingest.add(...)`, `workflow.ops.history.rollback(sha)`, …

Writing operations (add, initialize, reorganize, summarize_again, rollback, restore_before,
recover, a conversation's turn, facts, a saved report) each report what they changed, once,
to `on_change` as a `Changes` (computed from what they committed); the watcher's outside
edits carry one too. Reading (estimate, request, plan_reorganization, fallback_memories,
history, search) changes nothing and reports nothing.

The Workflow's former methods stay, each one line naming the operation it is, until the
front ends call the operations themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gam_desktop.engine.history.log import History
from gam_desktop.engine.history.versioned import VersionedFolder
from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport
from gam_desktop.engine.llm import LLMClient, LLMSettings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.llm.prices import PriceTable
from gam_desktop.engine.operations.ask import STATEMENT, AskOperations
from gam_desktop.engine.operations.context import (
    RESCAN_EVERY,
    ChangeListener,
    LLMFactory,
    OperationContext,
    foreign_content,
    ignore_changes,
)
from gam_desktop.engine.operations.conversations import (
    ChatTurn,
    ConversationOperations,
    EmptyQuestion,
)
from gam_desktop.engine.operations.facts import FactNotFound, FactOperations
from gam_desktop.engine.operations.forwarding import Delegated, Operations, Shared
from gam_desktop.engine.operations.history import HistoryOperations
from gam_desktop.engine.operations.ingest import ALREADY_HELD, IngestOperations
from gam_desktop.engine.operations.organize import OrganizeOperations
from gam_desktop.engine.operations.search import SearchOperations
from gam_desktop.engine.operations.watch import OutsideEdit, WatchOperations, front_matter_problems
from gam_desktop.engine.progress import CancelToken, ProgressCallback, no_progress
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.folder import MemoryFolder

__all__ = [  # what the front ends and the tests import from here
    "ALREADY_HELD",
    "STATEMENT",
    "ChatTurn",
    "EmptyQuestion",
    "FactNotFound",
    "Operations",
    "OutsideEdit",
    "Workflow",
    "foreign_content",
    "front_matter_problems",
]


class Workflow:
    """The engine's public API. `settings` are the builder's LLM settings; `chat_settings`
    the chat agent's (defaulting to `settings`, else the environment); `llm_factory` makes
    the LLM for either (the real client by default; `make_llm` is its former name);
    `on_change` hears what each writing operation changed, once it is recorded."""

    def __init__(
        self,
        workflow_type: str = "text",
        gam_dir: str | Path = ".",
        model: str | None = None,
        llm_config: dict[str, Any] | None = None,
        *,
        settings: LLMSettings | None = None,
        chat_settings: LLMSettings | None = None,
        options: BuildOptions | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        lock_timeout: float = 600.0,
        git_path: str | None = None,
        tools: MemoryTools | None = None,
        on_change: ChangeListener = ignore_changes,
        rescan_every: float = RESCAN_EVERY,
        prices: PriceTable | None = None,
        embeddings: EmbeddingSettings | None = None,
        llm_factory: LLMFactory | None = None,
        make_llm: LLMFactory | None = None,
    ) -> None:
        if workflow_type != "text":
            raise ValueError(f"unsupported workflow type {workflow_type!r} (only 'text')")
        config = llm_config or {}
        builder = settings or LLMSettings.from_env("builder", model=model, **config)
        chat = chat_settings or settings or LLMSettings.from_env("chat", model=model, **config)
        ctx = self.context = OperationContext(
            MemoryFolder(gam_dir),
            builder,
            chat,
            options or BuildOptions(),
            # Search by meaning (issue 35): given, else from the environment at the chat's
            embeddings or EmbeddingSettings.from_env(chat),
            # The LLM is handed in: the front ends make the real client (the default), tests
            # a fake where no HTTP behaviour is under test. Every LLM is made by this one.
            llm_factory or make_llm or LLMClient,
            git_path,
            # The search tools are thread-safe and may be shared by the Workflows of several
            # tasks, so the index stays warm between questions; their owner closes them.
            tools=tools,
            prices=prices,
            progress=progress,
            on_change=on_change,
            cancel=cancel or CancelToken(),
            lock_timeout=lock_timeout,
            rescan_every=rescan_every,
        )
        ingest, conversations = IngestOperations(ctx), ConversationOperations(ctx)
        self.ops = Operations(
            ingest=ingest,
            organize=OrganizeOperations(ctx),
            history=HistoryOperations(ctx),
            ask=AskOperations(ctx, ingest, conversations),
            conversations=conversations,
            facts=FactOperations(ctx),
            search=SearchOperations(ctx),
            watch=WatchOperations(ctx),
        )

    # -- the context's state, as the front ends set and read it ----------------------------

    folder = Shared[MemoryFolder]()
    settings = Shared[LLMSettings]()
    chat_settings = Shared[LLMSettings]()
    options = Shared[BuildOptions]()
    embeddings = Shared[EmbeddingSettings]()
    make_llm = Shared[LLMFactory]("llm_factory")
    llm_factory = Shared[LLMFactory]()
    prices = Shared[PriceTable | None]()
    progress = Shared[ProgressCallback]()
    on_change = Shared[ChangeListener]()
    cancel = Shared[CancelToken]()
    lock_timeout = Shared[float]()
    rescan_every = Shared[float]()
    versioned = Shared[VersionedFolder]()

    @property
    def last_add(self) -> BuildReport | None:
        """What the last add's finished steps added (also when it was cancelled or failed)."""
        return self.ops.ingest.last_add

    @property
    def history(self) -> History | None:
        """None when git is unavailable; `history_message` then says why."""
        return self.ops.history.log

    @property
    def history_message(self) -> str | None:
        return self.ops.history.message

    def search_tools(self) -> MemoryTools:
        """The search tools (corpus, BM25 index), made on first use."""
        return self.context.search_tools()

    # -- the former methods, each the operation it is ---------------------------------------

    add = Delegated(lambda ops: ops.ingest.add)
    estimate = Delegated(lambda ops: ops.ingest.estimate)
    check_folder = Delegated(lambda ops: ops.ingest.check_folder)
    initialize = Delegated(lambda ops: ops.ingest.initialize)
    interrupted_add = Delegated(lambda ops: ops.ingest.interrupted_add)
    forget_interrupted_add = Delegated(lambda ops: ops.ingest.forget_interrupted_add)
    summarize_again = Delegated(lambda ops: ops.ingest.summarize_again)
    fallback_memories = Delegated(lambda ops: ops.ingest.fallback_memories)
    plan_reorganization = Delegated(lambda ops: ops.organize.plan)
    reorganize = Delegated(lambda ops: ops.organize.reorganize)
    rollback = Delegated(lambda ops: ops.history.rollback)
    restore_before = Delegated(lambda ops: ops.history.restore_before)
    interrupted = Delegated(lambda ops: ops.history.interrupted)
    recover = Delegated(lambda ops: ops.history.recover)
    request = Delegated(lambda ops: ops.ask.request)
    chat = Delegated(lambda ops: ops.ask.chat)
    research = Delegated(lambda ops: ops.ask.research)
    save_research = Delegated(lambda ops: ops.ask.save_research)
    save_turn = Delegated(lambda ops: ops.conversations.save_turn)
    save_turns = Delegated(lambda ops: ops.conversations.save_turns)
    conversations = Delegated(lambda ops: ops.conversations.listed)
    conversation = Delegated(lambda ops: ops.conversations.find)
    last_conversation = Delegated(lambda ops: ops.conversations.latest)
    delete_conversation = Delegated(lambda ops: ops.conversations.delete)
    rename_conversation = Delegated(lambda ops: ops.conversations.rename)
    learn_from_turn = Delegated(lambda ops: ops.facts.learn_from_turn)
    facts = Delegated(lambda ops: ops.facts.listed)
    forget_fact = Delegated(lambda ops: ops.facts.forget)
    restore_fact = Delegated(lambda ops: ops.facts.restore)
    set_personal_memory = Delegated(lambda ops: ops.facts.set_personal_memory)
    search = Delegated(lambda ops: ops.search.files)
    search_notices = Delegated(lambda ops: ops.search.notices)
    titles = Delegated(lambda ops: ops.search.titles)
    watch = Delegated(lambda ops: ops.watch.start)

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close everything this Workflow opened in the memory: the watchers it started and
        its own search tools' database (the results cache and the writer lock are closed by
        the operation that opens them). Windows deletes no open file, so a memory left open
        cannot be moved or deleted, nor its temporary folder cleaned up. Safe to call twice;
        a later use opens what it needs again."""
        self.ops.watch.stop()
        self.context.close_tools()

    def __enter__(self) -> Workflow:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
