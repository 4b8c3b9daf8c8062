"""The public API of the engine: `Workflow.add()` and friends.

Entry points (the CLI, the GUI) build a Workflow from settings; the Workflow
reads documents, takes the folder's writer lock and runs the builder.

Writing operations (add, initialize, reorganize, summarize_again, rollback, restore_before,
recover) each report what they changed, once, to `on_change` as a `Changes` (computed from
what they committed); the watcher's outside edits carry one too. Reading (estimate,
request, plan_reorganization, fallback_memories, history) changes nothing and reports
nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gam_desktop.engine.answering import pipeline as answering
from gam_desktop.engine.answering.exploring import Explorer
from gam_desktop.engine.answering.pipeline import Step, StepCallback
from gam_desktop.engine.chats import library as chats
from gam_desktop.engine.chats.conversation import Conversation, working_memory
from gam_desktop.engine.chats.intent import is_statement, question_part
from gam_desktop.engine.chats.library import ConversationInfo
from gam_desktop.engine.chats.record import ConversationRecord, Turn, new_record, title_from
from gam_desktop.engine.chats.saved_turns import TurnToSave, stage_turns
from gam_desktop.engine.drop import Drop, held_sources
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.facts import history as fact_history
from gam_desktop.engine.facts.learn import Learned, learn
from gam_desktop.engine.facts.record import Fact, read_facts
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.journal import Interrupted
from gam_desktop.engine.history.log import TRAILER_KIND, History, NothingToUndo, restore_summary
from gam_desktop.engine.history.versioned import RecordedEdits, VersionedFolder
from gam_desktop.engine.ingest import resume
from gam_desktop.engine.ingest import summarize_again as summarizing
from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport, MemoryBuilder
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument, load_file, load_text
from gam_desktop.engine.ingest.estimate import SECONDS_PER_CALL, Estimate, Pace
from gam_desktop.engine.ingest.estimate import estimate as size_of
from gam_desktop.engine.ingest.resume import PendingAdd
from gam_desktop.engine.ingest.stages import WRITE_WEIGHT
from gam_desktop.engine.llm import LLM, LLMClient, LLMSettings
from gam_desktop.engine.llm.concurrency import expected as expected_parallel
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.llm.prices import PriceTable
from gam_desktop.engine.models import (
    META_FILE,
    ChatResult,
    ChunkConfig,
    GamMeta,
    ReorganizeOperation,
    utc_now,
)
from gam_desktop.engine.progress import (
    CancelToken,
    ProgressCallback,
    ProgressEvent,
    Stages,
    no_progress,
)
from gam_desktop.engine.research import save as research_files
from gam_desktop.engine.research.agent import ResearchAgent, ResearchCallback
from gam_desktop.engine.research.budget import Limits
from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.engine.retrieval import find
from gam_desktop.engine.retrieval.find import Found
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.changes import (
    CHAT,
    FORGET,
    INITIALIZE,
    LEARN,
    OUTSIDE_EDIT,
    RECOVER,
    REORGANIZE,
    RESEARCH,
    SETTINGS,
    SUMMARIZE,
    Changes,
)
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import APP_DIR, MemoryFolder, NotAMemoryError
from gam_desktop.engine.store.location import user_content
from gam_desktop.engine.store.lock import FolderBusyError, writer_lock
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.store.results import ResultStore
from gam_desktop.engine.store.watcher import FolderWatcher
from gam_desktop.engine.textutil import plural

ChangeListener = Callable[[Changes], None]
LLMFactory = Callable[[LLMSettings], LLM]  # the LLM for a role's settings
ALREADY_HELD = "already in this memory; skipped"  # a document whose source is committed
STATEMENT = "a statement, not a question"  # the notes of a turn that told, not asked
# How often the watcher asks git what changed, for edits whose notification was lost: on
# Windows a buffer overflow drops them silently; elsewhere it is rarer (network folders).
RESCAN_EVERY = 30.0 if os.name == "nt" else 120.0


def ignore_changes(_changes: Changes) -> None:
    pass


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


@dataclass
class ChatTurn:
    """An answer given in a saved conversation: the id to continue it with (None when
    saving is off for this memory), its file and the turn's number."""

    result: ChatResult
    conversation_id: str | None
    path: str | None
    turn: int


class EmptyQuestion(GamError, ValueError):
    title = "Nothing to ask"
    advice = "Type a question or something you want the memory to know."


def _fact_state(facts: list[Fact]) -> set[tuple[str, str, str]]:
    return {(fact.id, fact.statement, fact.path) for fact in facts}


class FactNotFound(GamError, LookupError):
    title = "Fact not found"
    advice = "It may have been forgotten or edited outside the app; list the facts again."


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


class Workflow:
    """The engine's public API. `settings` are the builder's LLM settings;
    `chat_settings` the chat agent's (defaulting to `settings`, else the environment);
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
        make_llm: LLMFactory = LLMClient,
    ) -> None:
        if workflow_type != "text":
            raise ValueError(f"unsupported workflow type {workflow_type!r} (only 'text')")
        self.folder = MemoryFolder(gam_dir)
        self.settings = settings or LLMSettings.from_env(
            "builder", model=model, **(llm_config or {})
        )
        self.chat_settings = chat_settings or (
            settings
            if settings is not None
            else LLMSettings.from_env("chat", model=model, **(llm_config or {}))
        )
        self.options = options or BuildOptions()
        self.prices = prices  # for the estimate's cost; None: the cost is not named
        # Search by meaning (issue 35): given, else from the environment at the chat's endpoint
        self.embeddings = embeddings or EmbeddingSettings.from_env(self.chat_settings)
        # The LLM is handed in: the front ends make the real client (the default), tests a
        # fake where no HTTP behaviour is under test. Every call of an operation goes through
        # the one it makes for its settings (the builder's or the chat's).
        self.make_llm = make_llm
        # The search tools (corpus, BM25 index) are thread-safe and may be shared by the
        # Workflows of several tasks, so the index stays warm between questions.
        self._tools: MemoryTools | None = tools
        # Closed by `close` only when made here: tools handed in are shared, and their
        # owner (the window's session) closes them.
        self._owns_tools = tools is None
        self._watchers: list[FolderWatcher] = []  # started by `watch`, stopped by close
        self.progress = progress
        self.on_change = on_change
        self.rescan_every = rescan_every  # seconds between the watcher's checks for lost edits
        self.cancel = cancel or CancelToken()
        self.lock_timeout = lock_timeout
        self.versioned = VersionedFolder(self.folder, git_path, lock_timeout, self._waiting)
        # What the last add's finished steps added: kept also when it was cancelled or
        # failed after some of them (gam-add says so).
        self.last_add: BuildReport | None = None

    def _builder(
        self, results: resume.StageResults = resume.NO_RESULTS, stages: Stages | None = None
    ) -> MemoryBuilder:
        """A builder keeping its LLM results in `results`, reporting on `stages` (the
        operation's bar, begun before it), else on a bar of its own."""
        return MemoryBuilder(
            self.folder,
            self.make_llm(self.settings),
            self.options,
            stages or Stages(self.progress),
            self.cancel,
            results,
        )

    def check_folder(self) -> None:
        """Refuse to write into a folder that holds other things and is not a memory."""
        root = self.folder.root
        if root.exists() and not root.is_dir():
            raise NotAMemoryError(f"{root} is a file, not a folder")
        content = foreign_content(root)
        if content:
            shown = ", ".join(content[:3]) + (", …" if len(content) > 3 else "")
            raise NotAMemoryError(
                f"{root} is not a GAM memory and is not empty (it holds {shown}); choose an "
                "empty folder or an existing memory, or open it in GAM Desktop to make it one"
            )

    def _parse(
        self, files: Sequence[str | Path], stages: Stages
    ) -> tuple[list[SourceDocument], list[str]]:
        docs, unreadable = [], []
        count = len(files)
        for i, path in enumerate(files):
            self.cancel.raise_if_cancelled()  # a slow document is not followed by the rest
            where = f"document {i + 1} of {count}: " if count > 1 else ""
            stages.report("read", i, count, f"Reading {where}{Path(path).name}")
            try:
                docs.append(load_file(path))
            except DocumentError as exc:
                unreadable.append(str(exc))
        stages.report("read", count, count, f"Read {plural(count, 'file')}")
        return docs, unreadable

    def _new_only(self, docs: list[SourceDocument]) -> tuple[list[SourceDocument], list[str]]:
        """The documents with text that this memory does not hold yet; why others are not.
        Held means committed (`drop.held_sources`), never merely on disk."""
        known = held_sources(self.versioned)
        fresh: list[SourceDocument] = []
        skipped: list[str] = []
        for doc in docs:
            if doc.content_hash in known or doc.content_hash in {d.content_hash for d in fresh}:
                skipped.append(f"{doc.name}: {ALREADY_HELD}")
            elif doc.text.strip():
                fresh.append(doc)
            else:
                # the reader's own reason when it has one ("no text found (scanned?)")
                skipped.append(
                    doc.warnings[-1] if doc.warnings else f"{doc.name}: no text found; skipped"
                )
        return fresh, skipped

    def add(
        self,
        files: Sequence[str | Path] | None = None,
        text: str | None = None,
        use_chunking: bool = True,
        chunk_config: dict[str, Any] | None = None,
        estimate: Estimate | None = None,
    ) -> BuildReport:
        """Add documents: a full build into an empty memory, else an incremental add; a big
        drop in steps, each committed as it is done (`engine.drop`), every LLM result kept
        as it arrives so that running the same add again pays for nothing twice. With the
        `estimate` made of the same files, what it read is used again (a file changed
        since is read anew). A cancel keeps the finished steps (`last_add` says what they
        added), or undoes them with `cancel(undo=True)`."""
        if chunk_config:
            self.options.chunk = ChunkConfig.model_validate(
                {**self.options.chunk.model_dump(), **chunk_config}
            )
        if not use_chunking:
            self.options.chunk = self.options.chunk.model_copy(update={"max_tokens": 10**9})
        self.check_folder()
        self._refuse_if_interrupted()
        stages = Stages(self.progress)  # one bar from reading to the last commit
        if estimate is not None and estimate.stamps == file_stamps(files or ()):
            parsed, unreadable = list(estimate.parsed), list(estimate.unreadable)
        else:
            stages.expect(read=1, build=4)  # reading is quick beside the LLM's work
            parsed, unreadable = self._parse(files or (), stages)
        if text and text.strip():
            parsed.append(load_text(text))
        docs, skipped = self._new_only(parsed)
        if not docs:  # nothing to write: no lock, no journal, no repository made
            report = BuildReport("add" if self.folder.is_memory() else "build")
        else:
            drop = Drop(
                self.versioned,
                self._builder,
                self.settings.model,
                self.options,
                stages,
                self.cancel,
                self._changed,
            )
            try:
                report = drop.run(docs)
            finally:
                self.last_add = drop.report
        stages.finish()
        report.unreadable = unreadable
        report.warnings = skipped + [w for d in docs for w in d.warnings] + report.warnings
        return report

    def _refuse_if_interrupted(self) -> None:
        """An operation a crash left half-done is recovered before anything is judged
        "already in this memory": judged first, an add run again after the crash skipped
        every document it had half-written and said it succeeded. Read without the lock
        (nothing made in a folder that is not a memory yet); an operation running right
        now is no reason (`VersionedFolder.interrupted`)."""
        if journal.read(self.folder) is not None:
            self.versioned.check_recovered()

    def estimate(self, files: Sequence[str | Path]) -> Estimate:
        """The size of adding `files` (chunks, LLM calls, tokens, time, cost when the price is
        known), without the LLM; `resume` is the unfinished add of some of them, if any."""
        stamps = file_stamps(files)
        stages = Stages(self.progress)
        stages.expect(read=4, size=1)
        parsed, unreadable = self._parse(files, stages)
        docs, skipped = self._new_only(parsed)
        stages.report("size", 0, 1, "Counting chunks and tokens")
        pending = self.interrupted_add()
        if pending is not None and not pending.hashes & {d.content_hash for d in parsed}:
            pending = None  # an unfinished add of other documents
        result = size_of(
            docs,
            self.options.chunk,
            kept=pending.ready if pending else frozenset(),
            step_documents=self.options.step_documents,
            pace=self._pace(),
        )
        stages.report("size", 1, 1, "Estimate ready")
        result.unreadable, result.skipped, result.resume = unreadable, skipped, pending
        result.parsed, result.stamps = parsed, stamps
        return result

    def _pace(self) -> Pace:
        settings = self.settings
        measured = resume.measured_seconds(self.folder, settings.model)
        price = self.prices.price(settings.base_url, settings.model) if self.prices else None
        seconds = measured if measured is not None else SECONDS_PER_CALL
        parallel = expected_parallel(settings)  # the person's number, or the learned one
        return Pace(parallel, seconds, measured is not None, settings.model, price)

    def interrupted_add(self) -> PendingAdd | None:
        """The add that began here and did not finish (cancelled, crashed, failed): its
        files and how many of its documents are already summarized with this model."""
        if not (self.folder.root / ".gam").is_dir():
            return None
        pending = resume.pending(self.folder, self.settings.model)
        return None if pending is None or pending.running else pending

    def forget_interrupted_add(self) -> None:
        """The person does not want to resume it: it is no longer offered."""
        resume.forget_pending(self.folder)

    def initialize(self) -> None:
        """Make a folder that holds other things a memory, after the user agreed: its
        files are kept (and committed first when git is there)."""
        if self.folder.is_memory():
            return
        with self.versioned.operation(INITIALIZE) as transaction:
            meta = GamMeta(chunk_config=self.options.chunk).model_dump_json(indent=2) + "\n"
            transaction.write(
                ChangeSet(writes={META_FILE: meta}),
                "Made this folder a memory",
                {"Gam-Operation": INITIALIZE},
            )
        self._changed(transaction.changes(INITIALIZE))

    def _may_hold_memory(self) -> bool:
        """A memory, or a folder holding nothing of anyone's: one made for a memory and not
        built yet, or whose first build was rolled back (that removes .gam_meta.json). Its
        first question was refused as "not a GAM memory" in the folder the app had made."""
        root = self.folder.root
        return self.folder.is_memory() or (root.is_dir() and not foreign_content(root))

    def plan_reorganization(self, path: str = "") -> ReorganizeOperation:
        """What reorganizing `path` would move, planned by the LLM; changes nothing."""
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory")
        with writer_lock(self.folder, self.lock_timeout, on_wait=self._waiting):
            builder = self._builder()
            plan = builder.reorganize(path.strip("/"), dry_run=True)
        builder.stages.finish()
        return plan

    def reorganize(
        self, path: str = "", dry_run: bool = False, plan: ReorganizeOperation | None = None
    ) -> ReorganizeOperation:
        """Reorganize `path` as the LLM plans it now, or as `plan` (from
        `plan_reorganization`, shown to the person) says, without asking the LLM again; a
        ReorganizeError when the folder changed since that plan was made."""
        if dry_run:  # changes nothing, commits nothing
            return self.plan_reorganization(path)
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory")
        with self.versioned.operation(REORGANIZE) as transaction:
            builder = self._builder()
            builder.write_changes = transaction.write
            where = plan.directory if plan is not None else path.strip("/")
            operation = builder.reorganize(where, plan=plan)
        self._changed(transaction.changes(REORGANIZE))
        builder.stages.finish()
        return operation

    def fallback_memories(self) -> list[str]:
        """The memories written without the LLM (`fallback: true`: its calls kept failing
        during their add), by path; `summarize_again` gives them real summaries. Reads
        only (every memory file: run it off the GUI thread)."""
        if not self.folder.is_memory():
            return []
        return [f.path for f in summarizing.find_fallbacks(self.folder, self.cancel)]

    def summarize_again(self) -> Changes:
        """Summarize again with the LLM, from their original wording, the memories written
        without it, each in its place (ingest/summarize_again.py): one commit ("Summarized
        again: 3 notes") that History can undo. A memory whose call fails again stays as it
        was, still marked; `fallback_memories` then names it. The calls are made before the
        folder is taken and kept as they arrive, so a cancel (OperationCancelled, nothing
        written) or a crash costs none of them twice. Returns what changed (empty when
        nothing could be summarized again)."""
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory")
        self._refuse_if_interrupted()
        self.folder.check_writable()
        journal.check_space(self.folder)  # refused before any call is paid for
        stages = Stages(self.progress)
        stages.expect(find=0.2, memorize=1.0, write=WRITE_WEIGHT)
        stages.report("find", 0, 1, "Looking for notes written without the LLM")
        fallbacks = summarizing.find_fallbacks(self.folder, self.cancel)
        stages.report("find", 1, 1, f"Found {plural(len(fallbacks), 'note')} to summarize again")
        if not fallbacks:
            stages.finish()
            return Changes(SUMMARIZE)
        llm = self.make_llm(self.settings)
        results = resume.StageResults(ResultStore.of(self.folder), self.settings.model)
        try:
            done = summarizing.memorize_again(llm, fallbacks, stages, self.cancel, results)
            changes = self._write_summaries(done, llm, stages)
            if not changes.empty and results.store is not None:
                results.store.forget_documents(done.documents())  # held, and summarized
        finally:
            results.close()
        stages.finish()
        return changes

    def _write_summaries(self, done: summarizing.Resummarized, llm: LLM, stages: Stages) -> Changes:
        """One operation writing what `memorize_again` made, as the folder is now."""
        if not done.memories:
            return Changes(SUMMARIZE)
        self.cancel.raise_if_cancelled()  # last chance: after this the write is all or nothing
        with self.versioned.operation(SUMMARIZE) as transaction:
            staged, written = summarizing.stage_summaries(self.folder, done)
            if written:
                stages.report("write", 0, 2, f"Writing {plural(len(written), 'note')}")
                tokens = llm.usage.prompt_tokens + llm.usage.completion_tokens
                trailers = {
                    TRAILER_KIND: SUMMARIZE,
                    "Gam-Memories": str(len(written)),
                    "Gam-Model": " ".join(llm.settings.model.split()),
                    "Gam-Tokens": str(tokens),
                }
                committing = functools.partial(stages.report, "write", 1, 2, "Committing")
                transaction.write(staged, summarizing.summary(len(written)), trailers, committing)
                stages.report("write", 2, 2, "Saved")
        changes = transaction.changes(SUMMARIZE)
        self._changed(changes)
        return changes

    # -- history -----------------------------------------------------------------------

    @property
    def history(self) -> History | None:
        """None when git is unavailable; `history_message` then says why."""
        return self.versioned.history

    @property
    def history_message(self) -> str | None:
        return self.versioned.history_message

    def rollback(self, sha: str) -> str:
        """Undo one operation as a new commit (returned); RollbackConflict when later ones
        collide."""
        changes = self.versioned.rollback(sha)
        self._changed(changes)
        assert changes.commit is not None  # History.rollback raised NothingToUndo otherwise
        return changes.commit

    def restore_before(self, sha: str) -> str | None:
        """Make the whole memory as it was just before operation `sha` (a new commit)."""
        history = self.versioned._require_history()
        operation = history.get(sha)
        parent = history.repo.git("rev-parse", "--verify", "-q", f"{sha}^", check=False).strip()
        if not parent:
            raise NothingToUndo(f"'{operation.summary}' is the first operation; nothing before it")
        changes = self.versioned.restore(parent, restore_summary(operation))
        self._changed(changes)
        return changes.commit

    def interrupted(self) -> Interrupted | None:
        return self.versioned.interrupted()

    def recover(self, restore: bool) -> str:
        """Finish an interrupted operation: restore the last commit or keep the files. What
        it changed is not listed (the files the crash left are not known), so the change it
        reports touches everything."""
        message = self.versioned.recover(restore)
        self._changed(Changes(RECOVER, everything=True))
        return message

    def watch(self, on_edit: Callable[[OutsideEdit], None]) -> FolderWatcher:
        """Start watching for edits made outside the app: each quiet burst of them becomes
        one "manual edit" commit, refreshes the search index and is reported."""

        # The watcher's thread gets a versioned folder (and repository) of its own: they
        # are not safe to share between threads, and the GUI thread holds this Workflow's.
        own = VersionedFolder(self.folder, self.versioned.git_path, self.lock_timeout)

        def handle(paths: list[str]) -> None:
            recorded = RecordedEdits(
                None, paths, Changes.seen(OUTSIDE_EDIT, own.folder.root, paths)
            )
            with contextlib.suppress(FolderBusyError):
                recorded = own.commit_manual_edits(paths)
            if self._tools is not None:  # on this background thread, not the next question's
                self._tools.corpus.refresh(paths)
                self._tools.index.ensure_built()
            outside = recorded.outside
            problems = front_matter_problems(self.folder, outside)
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
            if repo is None or journal.read(self.folder) is not None:
                return []
            return [p for p in repo.dirty_paths() if p.endswith(".md")]

        watcher = FolderWatcher(
            self.folder.root, handle, rescan=missed, rescan_every=self.rescan_every
        )
        watcher.start()
        self._watchers.append(watcher)
        # While it runs, it reports every outside edit: searches need no walk of the tree.
        self.search_tools().corpus.watched = lambda: watcher.running
        return watcher

    def close(self) -> None:
        """Close everything this Workflow opened in the memory: the watchers it started and
        its own search tools' database (the results cache and the writer lock are closed by
        the operation that opens them). Windows deletes no open file, so a memory left open
        cannot be moved or deleted, nor its temporary folder cleaned up. Safe to call twice;
        a later use opens what it needs again."""
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            watcher.stop()
        if self._owns_tools and self._tools is not None:
            self._tools.close()

    def __enter__(self) -> Workflow:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def search_tools(self) -> MemoryTools:
        """The search tools (corpus, BM25 index), made on first use. They are thread-safe:
        the Workflows of several tasks may share them, so the index stays warm."""
        if self._tools is None:
            self._tools = MemoryTools(self.folder.root, embeddings=self.embeddings)
        return self._tools

    def search(self, query: str, limit: int = 20) -> list[Found]:
        """The files whose text best matches `query` (BM25 over the memories, their original
        wording, READMEs, conversations and facts), best first, one per file, each with its
        title and a snippet with the query's words marked. Reads only; stops (raising
        OperationCancelled) between its steps once this Workflow's token is cancelled."""
        return find.search(self.search_tools(), query, limit, self.cancel)

    def search_notices(self) -> list[str]:
        """What the user should be told about search and was not yet, each thing once (no
        embedding model, the embedding endpoint failing: search is BM25 alone meanwhile)."""
        return self._tools.index.notices() if self._tools is not None else []

    def titles(self) -> dict[str, str]:
        """Every Markdown file's title by path, for filtering the tree by name. Reads only;
        cancelled as `search` is."""
        return find.titles(self.search_tools(), self.cancel)

    def _changed(self, changes: Changes) -> None:
        """A writing operation finished: the search tools re-read the files it changed, and
        `on_change` hears what changed."""
        if self._tools is not None:
            if changes.everything:  # which files is not known: the next look walks the tree
                self._tools.corpus.mark_stale()
            else:
                self._tools.corpus.refresh(changes.paths)
        self.on_change(changes)

    def request(
        self,
        user_prompt: str,
        system_prompt: str | None = None,
        max_iterations: int = 10,
        conversation: Conversation | None = None,
        on_step: StepCallback | None = None,
        explore: bool = False,
    ) -> ChatResult:
        """Answer a question from the memory's best passages, read by the model and checked
        against them (engine/answering); with `explore`, the model browses the memory with
        tools first (`max_iterations` calls, `system_prompt` its instructions), and the
        passages are read when that gives no answer that holds. A follow-up
        question is understood in the context of `conversation`, which the answer is added
        to."""
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory (no .gam_meta.json)")
        tools = self.search_tools()
        tools.corpus.refresh_if_stale(max_age=0)
        steps: list[str] = []

        def report(line: str) -> None:
            steps.append(line)
            if on_step is not None and line:
                on_step(Step(len(steps), line))

        evidence = answering.Evidence(
            question_part(user_prompt),  # "I moved. What is …?" asks only its question
            tools,
            self.make_llm(self.chat_settings),
            self.cancel,
            conversation.context_messages() if conversation is not None else [],
            on_step=report,
            earlier=(conversation.last_question() or "") if conversation is not None else "",
        )
        # exploring, with the best passages' reading when it gives no answer that holds
        explorer = (Explorer(max_iterations, system_prompt), answering.Grounded())
        answerers = explorer if explore else answering.ANSWERERS
        result = answering.answer(evidence, answerers)
        result.question = user_prompt
        if conversation is not None:
            conversation.add(user_prompt, result.answer, self.cancel)
        return result

    # -- research -----------------------------------------------------------------------

    def research(
        self, question: str, limits: Limits | None = None, on_step: ResearchCallback | None = None
    ) -> ResearchReport:
        """Research `question` across the memory (plan, search, integrate, reflect) into a
        report whose every claim cites a file the run read or matched. Reads only; stops
        between steps once this Workflow's token is cancelled (OperationCancelled)."""
        if not self._may_hold_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory (no .gam_meta.json)")
        if not question.strip():
            raise EmptyQuestion("there is no question to research")
        agent = ResearchAgent(
            self.search_tools(), self.make_llm(self.chat_settings), limits, on_step, self.cancel
        )
        return agent.run(question.strip())

    def save_research(self, report: ResearchReport) -> tuple[str, Changes]:
        """Save `report` as research/<date>-<slug>.md, one commit ("Research: <question>")
        that History can undo; returns its path and what changed."""
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory")
        with self.versioned.operation(RESEARCH) as transaction:
            path, changes = research_files.stage_save(report, self.folder.root, utc_now())
            transaction.write(
                changes, f"Research: {report.question[:80]}", {TRAILER_KIND: RESEARCH}
            )
        changed = transaction.changes(RESEARCH)
        self._changed(changed)
        return path, changed

    # -- conversations and facts ---------------------------------------------------------

    def chat(
        self,
        question: str,
        conversation_id: str | None = None,
        *,
        on_step: StepCallback | None = None,
        explore: bool = False,
        max_iterations: int = 10,
    ) -> ChatTurn:
        """Answer `question` in a saved conversation (a new one without an id) and commit
        the turn ("Chat: <title>"). With saving switched off for this memory the answer
        is given and nothing is written. Learning from it is `learn_from_turn`'s job."""
        if not self.folder.is_memory() and self._may_hold_memory():
            self.initialize()  # its first turn makes an empty folder a memory (issue 39)
        record, path = self._conversation(question, conversation_id)
        conversation = working_memory(record, self.make_llm(self.chat_settings))
        if is_statement(question):  # told, not asked: acknowledged, learned afterwards
            result = self._acknowledge(question)
            conversation.add(question, result.answer)
        else:
            result = self.request(
                question, None, max_iterations, conversation, on_step=on_step, explore=explore
            )
        told = result.notes == STATEMENT  # no confidence: nothing was looked up
        turn = Turn(
            utc_now(),
            question,
            result.answer,
            result.sources,
            None if told else result.confidence,
            steps=result.trajectory.splitlines(),  # shown again when it is reopened
            citations=list(result.citations),
            statement=told,
        )
        return self._save_turn(record, path, turn, conversation, result)

    def _acknowledge(self, statement: str) -> ChatResult:
        meta = self.folder.read_meta()
        learning = meta is not None and meta.learn_facts
        answer = (
            "Noted."
            if learning
            else "Noted here, but learning facts is off for this memory: it is not kept as a fact."
        )
        return ChatResult(question=statement, answer=answer, confidence=1.0, notes=STATEMENT)

    def save_turn(
        self,
        question: str,
        answer: str,
        conversation_id: str | None = None,
        *,
        sources: Sequence[str] = (),
        confidence: float | None = None,
        at: datetime | None = None,
        turn_id: str | None = None,
        history_key: str | None = None,
        report: dict[str, Any] | None = None,
    ) -> ChatTurn:
        """Record a turn answered elsewhere (another app through the memory's endpoint, an
        imported chat) in a saved conversation, as `chat` would; no LLM call. `turn_id` and
        `history_key` are kept in the turn's data (gam-serve's queue finds the id there
        after a crash, and a restarted gam-serve the conversation a request continues);
        `report`, the structured form of a research report the answer shows, is kept with the
        turn (read back, the report can still be saved). A conversation that is gone
        (deleted meanwhile, a made-up id) gets a new one."""
        item = TurnToSave(
            question,
            answer,
            conversation_id,
            None,
            sources,
            confidence,
            at,
            turn_id,
            history_key,
            report,
        )
        return self.save_turns([item])[0]

    def save_turns(self, items: Sequence[TurnToSave]) -> list[ChatTurn]:
        """Several turns answered elsewhere as one operation and one commit (saved_turns.py)."""
        self._refuse_saving([item.question for item in items])
        results = [
            ChatResult(question=i.question, answer=i.answer, sources=list(i.sources)) for i in items
        ]
        meta = self.folder.read_meta()
        if meta is not None and not meta.save_conversations:
            return [ChatTurn(result, None, None, 0) for result in results]
        with self.versioned.operation(CHAT) as transaction:
            staged = stage_turns(self.folder.root, items, self.chat_settings.model)
            ids = ", ".join(record.id for record in staged.conversations)
            trailers = {TRAILER_KIND: CHAT, "Gam-Conversation": ids}
            transaction.write(staged.changes, staged.summary(), trailers)
        self._changed(transaction.changes(CHAT))
        return [
            ChatTurn(result, saved.conversation_id, saved.path, saved.turn)
            for result, saved in zip(results, staged.saved, strict=True)
        ]

    def _refuse_saving(self, questions: list[str]) -> None:
        """No conversation is saved into a folder that is not a memory (never a repository
        made in someone's folder), nor without a question."""
        if not self.folder.is_memory():
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory (no .gam_meta.json)")
        if not questions or any(not question.strip() for question in questions):
            raise EmptyQuestion("there is no question to ask or save")

    def _conversation(
        self, question: str, conversation_id: str | None
    ) -> tuple[ConversationRecord, str | None]:
        self._refuse_saving([question])
        if conversation_id:
            return chats.load(self.folder.root, conversation_id)
        return new_record(question, self.chat_settings.model), None

    def _save_turn(
        self,
        record: ConversationRecord,
        path: str | None,
        turn: Turn,
        conversation: Conversation,
        result: ChatResult,
    ) -> ChatTurn:
        meta = self.folder.read_meta()
        if meta is not None and not meta.save_conversations:
            return ChatTurn(result, None, None, len(record.turns) + 1)
        trailers = {TRAILER_KIND: CHAT, "Gam-Conversation": record.id}
        with self.versioned.operation(CHAT) as transaction:
            summary, folded = conversation.summary, conversation.folded
            if path is not None:  # as it is now: another window may have added a turn
                fresh, path = chats.load(self.folder.root, record.id)
                if len(fresh.turns) != len(record.turns):  # its summary state is the file's
                    summary, folded = fresh.summary, fresh.summarized
                record = fresh
            record = chats.with_turn(record, turn, summary, folded)
            # The History names each turn by its own question, not the conversation's title
            # (three turns were "Chat: How much water did…" three times).
            said = f"Chat: {title_from(turn.question)}"
            transaction.write(chats.stage_save(record, path), said, trailers)
        self._changed(transaction.changes(CHAT))
        return ChatTurn(result, record.id, path or record.path, len(record.turns))

    def learn_from_turn(
        self,
        conversation_id: str | None,
        turn: int,
        message: str,
        at: datetime | None = None,
    ) -> Learned:
        """The facts the user's `message` states, reconciled with those known and
        committed as one operation ("Learned 2 facts, updated 1"); nothing when learning
        is off for this memory or the LLM fails (it never forgets on a failure)."""
        meta = self.folder.read_meta()
        if meta is None or not meta.learn_facts:
            return Learned()
        existing = read_facts(self.folder.root)
        llm = self.make_llm(self.chat_settings)
        learned = learn(llm, message, existing, conversation_id or "", turn, self.cancel, at)
        if not learned:
            return learned
        trailers = {TRAILER_KIND: LEARN, "Gam-Conversation": conversation_id or ""}
        with self.versioned.operation(LEARN) as transaction:
            now = read_facts(self.folder.root)
            if _fact_state(now) != _fact_state(existing):  # another process learned meanwhile
                learned = learn(llm, message, now, conversation_id or "", turn, self.cancel, at)
            if learned:
                transaction.write(learned.changes(), learned.summary(), trailers)
        if learned:
            self._changed(transaction.changes(LEARN))
        return learned

    def conversations(self) -> list[ConversationInfo]:
        return chats.list_conversations(self.folder.root)

    def conversation(self, conversation_id: str) -> ConversationInfo:
        """The saved conversation `conversation_id`: ConversationNotFound when there is
        none, ConversationUnreadable (naming the file and what is wrong) when its file is
        there but its front matter cannot be read."""
        return chats.find(self.folder.root, conversation_id)

    def last_conversation(self) -> ConversationInfo | None:
        """The latest conversation (None when none was saved); ConversationUnreadable when
        the latest one's file cannot be read, rather than an older one or a new one."""
        return chats.latest(self.folder.root)

    def delete_conversation(self, conversation_id: str) -> Changes:
        """Delete a conversation as a commit (History can bring it back)."""
        info = chats.find(self.folder.root, conversation_id)
        with self.versioned.operation(FORGET) as transaction:
            transaction.write(
                chats.stage_delete(info.path),
                f"Deleted the conversation: {info.title}",
                {TRAILER_KIND: FORGET, "Gam-Conversation": info.id},
            )
        changes = transaction.changes(FORGET)
        self._changed(changes)
        return changes

    def rename_conversation(self, conversation_id: str, title: str) -> Changes:
        record, path = chats.load(self.folder.root, conversation_id)
        old, record.title = record.title, title_from(title) if title.strip() else record.title
        with self.versioned.operation(CHAT) as transaction:
            transaction.write(
                chats.stage_save(record, path),
                f"Renamed the conversation: {old} → {record.title}",
                {TRAILER_KIND: CHAT, "Gam-Conversation": record.id},
            )
        changes = transaction.changes(CHAT)
        self._changed(changes)
        return changes

    def facts(self, deleted: bool = False) -> list[Fact]:
        return read_facts(self.folder.root, deleted=deleted)

    def forget_fact(self, fact_id: str) -> Changes:
        """Forget a fact: its tombstone in facts/.deleted, which `restore_fact` (or History)
        undoes (a commit)."""
        fact = next((f for f in read_facts(self.folder.root) if f.id == fact_id), None)
        if fact is None:
            raise FactNotFound(f"no fact {fact_id!r} in {self.folder.root}")
        staged = fact_history.forget(fact, utc_now())
        return self._fact_commit(staged, f"Forgot: {fact.statement}", fact.id)

    def restore_fact(self, fact_id: str) -> Changes:
        """Undo a Forget (or a retraction): the fact is current again (a commit)."""
        tombs = read_facts(self.folder.root, deleted=True)
        tomb = next((f for f in tombs if f.id == fact_id), None)
        if tomb is None or fact_history.replaced(tomb):
            raise FactNotFound(f"no forgotten fact {fact_id!r} in {self.folder.root}")
        _fact, staged = fact_history.restore(tomb, utc_now())
        return self._fact_commit(staged, f"Restored: {tomb.statement}", tomb.id)

    def _fact_commit(self, staged: ChangeSet, summary: str, fact_id: str) -> Changes:
        with self.versioned.operation(FORGET) as transaction:
            transaction.write(staged, summary, {TRAILER_KIND: FORGET, "Gam-Fact": fact_id})
        changes = transaction.changes(FORGET)
        self._changed(changes)
        return changes

    def set_personal_memory(
        self, save_conversations: bool | None = None, learn_facts: bool | None = None
    ) -> None:
        """Switch saving chats and learning facts on or off for this memory (a commit)."""
        meta = self.folder.read_meta()
        if meta is None:
            raise NotAMemoryError(f"{self.folder.root} is not a GAM memory")
        asked = {"save_conversations": save_conversations, "learn_facts": learn_facts}
        update = {key: on for key, on in asked.items() if on is not None}
        meta = meta.model_copy(update=update)
        said = ", ".join(
            f"{k.replace('_', ' ')} {'on' if on else 'off'}" for k, on in update.items()
        )
        with self.versioned.operation(SETTINGS) as transaction:
            transaction.write(
                ChangeSet(writes={META_FILE: meta.model_dump_json(indent=2) + "\n"}),
                f"Settings: {said}",
                {TRAILER_KIND: SETTINGS},
            )
        self._changed(transaction.changes(SETTINGS))

    def _waiting(self) -> None:
        self.progress(
            ProgressEvent("lock", 0, 1, "Waiting for another operation on this memory to finish")
        )


def file_stamps(files: Sequence[str | Path]) -> dict[str, tuple[int, int] | None]:
    """Each file's (mtime, size), None if it cannot be read: equal stamps, same content."""
    stamps: dict[str, tuple[int, int] | None] = {}
    for path in files:
        try:
            stat = Path(path).stat()
        except OSError:
            stamps[str(path)] = None
        else:
            stamps[str(path)] = (stat.st_mtime_ns, stat.st_size)
    return stamps
