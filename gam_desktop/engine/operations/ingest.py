"""Documents into the memory: the estimate, the add (a drop in steps, engine/drop.py), making
a folder a memory, the unfinished add, and summarizing again the memories written without
the LLM. The add, `initialize` and `summarize_again` report what they changed."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gam_desktop.engine.drop import Drop, held_sources
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.log import TRAILER_KIND
from gam_desktop.engine.ingest import resume
from gam_desktop.engine.ingest import summarize_again as summarizing
from gam_desktop.engine.ingest.builder import BuildReport
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument, load_file, load_text
from gam_desktop.engine.ingest.estimate import SECONDS_PER_CALL, Estimate, Pace
from gam_desktop.engine.ingest.estimate import estimate as size_of
from gam_desktop.engine.ingest.resume import PendingAdd
from gam_desktop.engine.ingest.stages import WRITE_WEIGHT
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.llm.concurrency import expected as expected_parallel
from gam_desktop.engine.models import META_FILE, ChunkConfig, GamMeta
from gam_desktop.engine.operations.context import OperationContext, foreign_content
from gam_desktop.engine.progress import Stages
from gam_desktop.engine.store.changes import INITIALIZE, SUMMARIZE, Changes
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import NotAMemoryError
from gam_desktop.engine.store.results import ResultStore
from gam_desktop.engine.textutil import plural

ALREADY_HELD = "already in this memory; skipped"  # a document whose source is committed


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


class IngestOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context
        # What the last add's finished steps added: kept also when it was cancelled or
        # failed after some of them (gam-add says so).
        self.last_add: BuildReport | None = None

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
        ctx = self.context
        if chunk_config:
            ctx.options.chunk = ChunkConfig.model_validate(
                {**ctx.options.chunk.model_dump(), **chunk_config}
            )
        if not use_chunking:
            ctx.options.chunk = ctx.options.chunk.model_copy(update={"max_tokens": 10**9})
        self.check_folder()
        self._refuse_if_interrupted()
        stages = Stages(ctx.progress)  # one bar from reading to the last commit
        if estimate is not None and estimate.stamps == file_stamps(files or ()):
            parsed, unreadable = list(estimate.parsed), list(estimate.unreadable)
        else:
            stages.expect(read=1, build=4)  # reading is quick beside the LLM's work
            parsed, unreadable = self._parse(files or (), stages)
        if text and text.strip():
            parsed.append(load_text(text))
        docs, skipped = self._new_only(parsed)
        if not docs:  # nothing to write: no lock, no journal, no repository made
            report = BuildReport("add" if ctx.folder.is_memory() else "build")
        else:
            model = ctx.settings.model
            drop = Drop(
                ctx.versioned, ctx.builder, model, ctx.options, stages, ctx.cancel, ctx.changed
            )
            try:
                report = drop.run(docs)
            finally:
                self.last_add = drop.report
        stages.finish()
        report.unreadable = unreadable
        report.warnings = skipped + [w for d in docs for w in d.warnings] + report.warnings
        return report

    def check_folder(self) -> None:
        """Refuse to write into a folder that holds other things and is not a memory."""
        root = self.context.folder.root
        if root.exists() and not root.is_dir():
            raise NotAMemoryError(f"{root} is a file, not a folder")
        content = foreign_content(root)
        if content:
            shown = ", ".join(content[:3]) + (", …" if len(content) > 3 else "")
            raise NotAMemoryError(
                f"{root} is not a GAM memory and is not empty (it holds {shown}); choose an "
                "empty folder or an existing memory, or open it in GAM Desktop to make it one"
            )

    def _refuse_if_interrupted(self) -> None:
        """An operation a crash left half-done is recovered before anything is judged
        "already in this memory": judged first, an add run again after the crash skipped
        every document it had half-written and said it succeeded. Read without the lock
        (nothing made in a folder that is not a memory yet); an operation running right
        now is no reason (`VersionedFolder.interrupted`)."""
        if journal.read(self.context.folder) is not None:
            self.context.versioned.check_recovered()

    def _parse(
        self, files: Sequence[str | Path], stages: Stages
    ) -> tuple[list[SourceDocument], list[str]]:
        docs, unreadable = [], []
        count = len(files)
        for i, path in enumerate(files):
            self.context.cancel.raise_if_cancelled()  # a slow document stops the rest
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
        known = held_sources(self.context.versioned)
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

    def estimate(self, files: Sequence[str | Path]) -> Estimate:
        """The size of adding `files` (chunks, LLM calls, tokens, time, cost when the price is
        known), without the LLM; `resume` is the unfinished add of some of them, if any."""
        stamps = file_stamps(files)
        stages = Stages(self.context.progress)
        stages.expect(read=4, size=1)
        parsed, unreadable = self._parse(files, stages)
        docs, skipped = self._new_only(parsed)
        stages.report("size", 0, 1, "Counting chunks and tokens")
        pending = self.interrupted_add()
        if pending is not None and not pending.hashes & {d.content_hash for d in parsed}:
            pending = None  # an unfinished add of other documents
        options = self.context.options
        result = size_of(
            docs,
            options.chunk,
            kept=pending.ready if pending else frozenset(),
            step_documents=options.step_documents,
            pace=self._pace(),
        )
        stages.report("size", 1, 1, "Estimate ready")
        result.unreadable, result.skipped, result.resume = unreadable, skipped, pending
        result.parsed, result.stamps = parsed, stamps
        return result

    def _pace(self) -> Pace:
        settings, prices = self.context.settings, self.context.prices
        measured = resume.measured_seconds(self.context.folder, settings.model)
        price = prices.price(settings.base_url, settings.model) if prices else None
        seconds = measured if measured is not None else SECONDS_PER_CALL
        parallel = expected_parallel(settings)  # the person's number, or the learned one
        return Pace(parallel, seconds, measured is not None, settings.model, price)

    def interrupted_add(self) -> PendingAdd | None:
        """The add that began here and did not finish (cancelled, crashed, failed): its
        files and how many of its documents are already summarized with this model."""
        if not (self.context.folder.root / ".gam").is_dir():
            return None
        pending = resume.pending(self.context.folder, self.context.settings.model)
        return None if pending is None or pending.running else pending

    def forget_interrupted_add(self) -> None:
        """The person does not want to resume it: it is no longer offered."""
        resume.forget_pending(self.context.folder)

    def initialize(self) -> None:
        """Make a folder that holds other things a memory, after the user agreed: its
        files are kept (and committed first when git is there)."""
        ctx = self.context
        if ctx.folder.is_memory():
            return
        with ctx.versioned.operation(INITIALIZE) as transaction:
            meta = GamMeta(chunk_config=ctx.options.chunk).model_dump_json(indent=2) + "\n"
            transaction.write(
                ChangeSet(writes={META_FILE: meta}),
                "Made this folder a memory",
                {"Gam-Operation": INITIALIZE},
            )
        ctx.changed(transaction.changes(INITIALIZE))

    def fallback_memories(self) -> list[str]:
        """The memories written without the LLM (`fallback: true`: its calls kept failing
        during their add), by path; `summarize_again` gives them real summaries. Reads
        only (every memory file: run it off the GUI thread)."""
        if not self.context.folder.is_memory():
            return []
        fallbacks = summarizing.find_fallbacks(self.context.folder, self.context.cancel)
        return [f.path for f in fallbacks]

    def summarize_again(self, *, failed_because: list[str] | None = None) -> Changes:
        """Summarize again with the LLM, from their original wording, the memories written
        without it, each in its place (ingest/summarize_again.py): one commit ("Summarized
        again: 3 notes") that History can undo. A memory whose call fails again stays as it
        was, still marked; `fallback_memories` then names it, and `failed_because` (if given)
        is filled with why: this run's errors, redacted, the most frequent first (the notes
        keep the error of the add that wrote them). The calls are made before the folder is
        taken and kept as they arrive, so a cancel (OperationCancelled, nothing written) or
        a crash costs none of them twice. Returns what changed (empty when nothing could be
        summarized again)."""
        ctx = self.context
        if not ctx.folder.is_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory")
        self._refuse_if_interrupted()
        ctx.folder.check_writable()
        journal.check_space(ctx.folder)  # refused before any call is paid for
        stages = Stages(ctx.progress)
        stages.expect(find=0.2, memorize=1.0, write=WRITE_WEIGHT)
        stages.report("find", 0, 1, "Looking for notes written without the LLM")
        fallbacks = summarizing.find_fallbacks(ctx.folder, ctx.cancel)
        stages.report("find", 1, 1, f"Found {plural(len(fallbacks), 'note')} to summarize again")
        if not fallbacks:
            stages.finish()
            return Changes(SUMMARIZE)
        llm = ctx.builder_llm()
        results = resume.StageResults(ResultStore.of(ctx.folder), ctx.settings.model)
        try:
            done = summarizing.memorize_again(llm, fallbacks, stages, ctx.cancel, results)
            if failed_because is not None:
                failed_because.extend(done.reasons())
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
        ctx = self.context
        ctx.cancel.raise_if_cancelled()  # last chance: after this the write is all or nothing
        with ctx.versioned.operation(SUMMARIZE) as transaction:
            staged, written = summarizing.stage_summaries(ctx.folder, done)
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
        ctx.changed(changes)
        return changes
