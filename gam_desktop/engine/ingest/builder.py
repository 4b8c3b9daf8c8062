"""Building a memory folder: full build, incremental add, reorganization.

Every operation first asks the LLM everything it needs, then writes the result
as one ChangeSet. Cancel or fail before the write and the folder is untouched;
fail during the write and the ChangeSet undoes itself. The chunks and their memories
may be made beforehand (`chunk`, `memorize`: a drop committed in steps memorizes each
step before it takes the folder), and every result worth keeping is kept as it arrives
(`results`, ingest/resume.py).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.ingest.chunking import Chunk, Chunker
from gam_desktop.engine.ingest.compose import place_memory, stage_sources
from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.ingest.memorize import (
    FALLBACK_REASON,
    llm_split_advisor,
    memorize_chunks,
)
from gam_desktop.engine.ingest.planning import describe_directories, place_memories, plan_taxonomy
from gam_desktop.engine.ingest.resume import NO_RESULTS, StageResults
from gam_desktop.engine.ingest.stages import (
    CUT_WEIGHT,
    PLAN_WEIGHT,
    WRITE_WEIGHT,
    WriteChanges,
    later_stages,
    summarizing,
)
from gam_desktop.engine.llm import LLM, UsageMeter, concurrency
from gam_desktop.engine.models import ChunkConfig, MemorizedChunk, ReorganizeOperation
from gam_desktop.engine.progress import CancelToken, ProgressCallback, Stages, no_progress
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.naming import stored_name
from gam_desktop.engine.store.readmes import (
    ancestors,
    dir_at,
    ensure_dir,
    listing,
    stage_meta,
    stage_readmes,
)
from gam_desktop.engine.textutil import plural

log = logging.getLogger(__name__)


@dataclass
class BuildOptions:
    chunk: ChunkConfig = field(default_factory=ChunkConfig)
    reorganize_threshold: int = 10  # a directory with more memories than this is re-planned
    auto_reorganize: bool = True
    # A drop of more documents than this is committed in steps of this many (0: never):
    # each step is an operation of its own, usable (and askable) while the rest runs.
    step_documents: int = 25


@dataclass
class BuildReport:
    operation: str  # "build", "add" or "reorganize"
    documents: list[str] = field(default_factory=list)
    chunks: int = 0
    memories: list[str] = field(default_factory=list)
    new_directories: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # one message per file not read
    fallbacks: int = 0
    usage: UsageMeter = field(default_factory=UsageMeter)
    reorganizations: list[ReorganizeOperation] = field(default_factory=list)
    steps: int = 1  # the operations (commits of its own) the drop was written in
    remaining: list[str] = field(default_factory=list)  # not added: stopped after a step
    reused: int = 0  # LLM results kept from an earlier, unfinished run: calls not made

    def summary(self) -> str:
        docs, memories = len(self.documents), len(self.memories)
        verb = "Built" if self.operation == "build" else "Added"
        if self.remaining:
            of = docs + len(self.remaining)
            text = f"{verb} {docs} of {plural(of, 'document')} ({plural(memories, 'note')})"
        else:
            text = f"{verb} {plural(docs, 'document')} ({plural(memories, 'note')})"
        if self.steps > 1:
            text += f" in {plural(self.steps, 'step')}"
        if self.remaining:
            text += "; stopped after a step (add the same files again for the rest)"
        for op in self.reorganizations:
            where = op.directory or "/"
            text += f"; reorganized {where} into {plural(len(op.new_directories), 'folder')}"
        if self.reused:
            text += f"; {plural(self.reused, 'earlier LLM result')} reused"
        return text

    def absorb(self, step: BuildReport) -> None:
        """Count one more step of the same drop in this report."""
        self.documents += step.documents
        self.chunks += step.chunks
        self.memories += step.memories
        self.new_directories += step.new_directories
        self.warnings += step.warnings
        self.fallbacks += step.fallbacks
        self.reorganizations += step.reorganizations
        self.usage.absorb(step.usage)


def reorganize_summary(operation: ReorganizeOperation) -> str:
    """ "Reorganized ml/ into 3 folders": counting the folders made directly inside it."""
    base = operation.directory
    direct = [
        d for d in operation.new_directories if (d.rsplit("/", 1)[0] if "/" in d else "") == base
    ]
    name = f"{base}/" if base else "the root"
    return f"Reorganized {name} into {plural(len(direct), 'folder')}"


class MemoryBuilder:
    def __init__(
        self,
        folder: MemoryFolder,
        llm: LLM,
        options: BuildOptions | None = None,
        progress: ProgressCallback | Stages = no_progress,
        cancel: CancelToken | None = None,
        results: StageResults = NO_RESULTS,
    ):
        self.folder = folder
        self.llm = llm
        self.options = options or BuildOptions()
        # The operation's one bar: given by the caller when it has stages of its own
        # before these (reading the documents), else begun here.
        self.stages = progress if isinstance(progress, Stages) else Stages(progress)
        self.cancel = cancel or CancelToken()
        self.results = results
        # Writes one operation's change set as (changes, summary, trailers): a versioned
        # folder's Transaction.write applies and commits it; alone, it is only applied.
        self.write_changes: WriteChanges = lambda changes, *_: changes.apply(folder.root)

    def _report(self, stage: str, done: int, total: int, message: str = "") -> None:
        self.stages.report(stage, done, total, message)

    # -- shared first half: chunks and memories ---------------------------------------

    def chunk(self, docs: Sequence[SourceDocument]) -> list[Chunk]:
        """The documents' chunks (split points of oversize passages asked in parallel). The
        bar's shares are the caller's to expect (`_memories`, or a drop for all its steps)."""
        count = len(docs)
        self._report("chunk", 0, count, f"Cutting {plural(count, 'document')} into chunks")
        advisor = llm_split_advisor(self.llm, self.cancel, self.results)
        chunks = Chunker(self.options.chunk, advisor).chunk_documents(docs, self._split_in_parallel)
        self._report("chunk", count, count, f"Cut into {plural(len(chunks), 'chunk')}")
        return chunks

    def memorize_weight(self, chunks: int) -> float:
        """About how long summarizing `chunks` takes, in the unit of `stages.later_stages`."""
        parallel = concurrency.expected(self.llm.settings)  # the calls in flight at a time
        return max(1.0, chunks / max(1, parallel))

    def memorize(
        self, chunks: Sequence[Chunk], docs: Sequence[SourceDocument], later: dict[str, float]
    ) -> list[MemorizedChunk]:
        """A memory per chunk of `docs`, in order (numbered when they are placed); `later`:
        the weights of the stages that follow, so the bar keeps room for them."""
        total = len(chunks)
        self.stages.expect(memorize=self.memorize_weight(total), **later)
        said = summarizing(chunks, docs)
        self._report("memorize", 0, total, said(0))
        return memorize_chunks(
            self.llm,
            chunks,
            first_index=0,
            cancel=self.cancel,
            on_done=lambda n: self._report("memorize", n, total, said(n)),
            results=self.results,
        )

    def _memories(
        self,
        docs: Sequence[SourceDocument],
        memories: list[MemorizedChunk] | None,
        first_index: int,
        report: BuildReport,
        later: dict[str, float],
    ) -> list[MemorizedChunk]:
        """The documents' memories (made now unless given), numbered from `first_index`."""
        if memories is None:
            # the number of chunks is a guess until the documents are cut
            self.stages.expect(chunk=CUT_WEIGHT, memorize=self.memorize_weight(len(docs)), **later)
            memories = self.memorize(self.chunk(docs), docs, later)
        else:
            self.stages.expect(**later)  # what is left of the bar is the later stages'
        for number, memory in enumerate(memories):
            memory.index = first_index + number
        report.chunks = len(memories)
        report.fallbacks = sum(1 for m in memories if m.metadata.get("fallback"))
        if report.fallbacks:  # in words, with why (it said "marked fallback: true")
            reasons = [str(m.metadata.get(FALLBACK_REASON) or "") for m in memories]
            why = next((reason for reason in reasons if reason), "it kept failing")
            report.warnings.append(
                f"{report.fallbacks} of {plural(len(memories), 'note')} "
                f"{'was' if report.fallbacks == 1 else 'were'} written without the LLM, from "
                f"the passages' own sentences. Why: {why.rstrip('. ')}"
            )
        return memories

    def _split_in_parallel(self, split: Callable[[Any], Any], passages: Sequence[Any]) -> list[Any]:
        """The LLM's splits of passages too long for one chunk, on the worker pool."""
        count = len(passages)
        return self.llm.parallel_map(
            split,
            passages,
            cancel=self.cancel,
            on_done=lambda n: self._report(
                "chunk", n, count, f"Splitting long passages: {n} of {count}"
            ),
        )

    def _write(self, changes: ChangeSet, kind: str, summary: str, **trailers: object) -> None:
        """Apply all of one operation's writes, then report it as one operation (a commit)."""
        self.cancel.raise_if_cancelled()  # last chance: after this the write is all or nothing
        self._report("write", 0, 2, f"Writing {plural(len(changes.writes), 'file')}")
        details = {
            "Gam-Operation": kind,
            **{f"Gam-{k.title()}": v for k, v in trailers.items()},
            "Gam-Model": self.llm.settings.model,
            "Gam-Tokens": self.llm.usage.prompt_tokens + self.llm.usage.completion_tokens,
        }
        # one line each; a document's name with an ESC in it is written escaped (`git log`)
        clean = {k: " ".join(stored_name(str(v)).split()) for k, v in details.items()}
        committing = functools.partial(self._report, "write", 1, 2, "Committing")
        self.write_changes(changes, summary, clean, committing)
        self._report("write", 2, 2, "Saved")

    def build(
        self, docs: Sequence[SourceDocument], memories: list[MemorizedChunk] | None = None
    ) -> BuildReport:
        """A new memory from scratch (from `memories` of `docs` when already made)."""
        report = BuildReport("build", documents=[d.name for d in docs], usage=self.llm.usage)
        later = later_stages("organize", self.options.auto_reorganize)
        memories = self._memories(docs, memories, 0, report, later)
        if not memories:
            return report
        self._report("organize", 0, 1, "Planning folders")
        plan, warnings = plan_taxonomy(self.llm, memories, self.cancel)
        report.warnings += warnings
        self._report("organize", 1, 1, f"Planned {plural(len(plan.walk()) - 1, 'folder')}")
        self._report("describe", 0, 1, "Writing READMEs")
        root = DirView(
            "",
            title=self.folder.root.name.replace("_", " ").title() or "Memory",
            description=plan.description,
        )
        changes = ChangeSet()
        by_index = {m.index: m for m in memories}
        for node in plan.walk()[1:]:
            directory, _ = ensure_dir(root, node.path)
            directory.description = node.description
            report.new_directories.append(node.path)
        for leaf in plan.leaves():
            directory, _ = ensure_dir(root, leaf.path)
            report.memories += [
                place_memory(changes, directory, by_index[i]) for i in leaf.chunk_indices
            ]
        stage_readmes(changes, root, [d.path for d in root.walk()])
        self._report("describe", 1, 1, "READMEs written")
        stage_sources(changes, docs)
        stage_meta(
            changes,
            self.folder.read_meta(),
            root,
            report.documents,
            self.llm.settings.model,
            self.options.chunk,
        )
        self._write_report(changes, report)
        if self.options.auto_reorganize:  # a plan can leave a folder overfull, as an add can
            self._reorganize_overfull(report)
        return report

    def add(
        self, docs: Sequence[SourceDocument], memories: list[MemorizedChunk] | None = None
    ) -> BuildReport:
        """New documents placed into the existing taxonomy (`memories` as for `build`)."""
        report = BuildReport("add", documents=[d.name for d in docs], usage=self.llm.usage)
        meta = self.folder.read_meta()
        first = meta.total_chunks if meta else 0
        later = later_stages("place", self.options.auto_reorganize)
        memories = self._memories(docs, memories, first, report, later)
        if not memories:
            return report
        root = self.folder.load_view()
        self._report(
            "place", 0, len(memories), f"Choosing folders for {plural(len(memories), 'note')}"
        )
        placements = place_memories(self.llm, root, memories, self.cancel)
        changes, changed = ChangeSet(), set()
        for memory in memories:
            path, description = placements[memory.index]
            directory, created = ensure_dir(root, path)
            for new_path in created:
                report.new_directories.append(new_path)
                new_dir = dir_at(root, new_path)
                new_dir.description = description if new_path == directory.path else ""
            report.memories.append(place_memory(changes, directory, memory))
            changed.update(ancestors(directory.path))
        self._describe(root, changed)
        stage_readmes(changes, root, changed)
        stage_sources(changes, docs)
        stage_meta(
            changes, meta, root, report.documents, self.llm.settings.model, self.options.chunk
        )
        self._write_report(changes, report)
        if self.options.auto_reorganize:
            self._reorganize_overfull(report)
        return report

    def _write_report(self, changes: ChangeSet, report: BuildReport) -> None:
        self._write(
            changes,
            report.operation,
            report.summary(),
            sources=", ".join(report.documents),
            memories=len(report.memories),
        )

    def _describe(self, root: DirView, paths: set[str]) -> None:
        """Refresh titles and descriptions of changed directories with one batched call."""
        listings = {}
        for path in sorted(paths):
            node = dir_at(root, path)
            self.folder.read_fronts(node, unread_only=True)  # new files are not on disk yet
            listings[path] = listing(node)
        self._report("describe", 0, len(listings), "Writing READMEs")
        for path, (title, description) in describe_directories(
            self.llm, listings, self.cancel, self.results
        ).items():
            node = dir_at(root, path)
            # the memory's own overview keeps its name ("My Notes"): the LLM's title for it
            # ("Memory") replaced the name the first build gave it at every add
            node.title = node.title if not path and node.title else title
            node.description = description
        self._report("describe", len(listings), len(listings), "READMEs written")

    def _reorganize_overfull(self, report: BuildReport) -> None:
        """Re-plan every directory holding more memories than the threshold, each as its
        own operation; a folder a reorganization leaves overfull gets its turn too, but
        no directory is re-planned twice."""
        limit = self.options.reorganize_threshold
        tried: set[str] = set()
        while True:
            overfull = [
                d.path
                for d in self.folder.load_view().walk()
                if len(d.files) > limit and d.path not in tried
            ]
            if not overfull:
                return
            tried.add(overfull[0])
            operation = self.reorganize(overfull[0], later=len(overfull) - 1)
            if operation.moved_files:
                report.reorganizations.append(operation)

    def reorganize(
        self,
        path: str,
        dry_run: bool = False,
        later: int = 0,
        plan: ReorganizeOperation | None = None,
    ) -> ReorganizeOperation:
        """Re-plan one directory's memories into subdirectories, or carry out the `plan`
        made for it before (shown to the person: applied as shown, no LLM call). `later`:
        how many more reorganizations are known to follow, each with a share of the bar."""
        from gam_desktop.engine.ingest.reorganize import plan_reorganization, stage_reorganization

        write = 0.0 if dry_run else WRITE_WEIGHT
        planning = PLAN_WEIGHT if plan is None else 0.0
        self.stages.expect(reorganize=planning, write=write, later=later * (PLAN_WEIGHT + 1))
        doing = "Re-planning" if plan is None else "Reorganizing"
        self._report("reorganize", 0, 1, f"{doing} {path or '/'}")
        operation = plan or plan_reorganization(self.folder, self.llm, path, self.cancel)
        if not dry_run and operation.moved_files:
            changes, root = stage_reorganization(self.folder, operation)
            stage_meta(
                changes,
                self.folder.read_meta(),
                root,
                [],
                self.llm.settings.model,
                self.options.chunk,
            )
            self._write(
                changes,
                "reorganize",
                reorganize_summary(operation),
                directory=path or "/",
                moved=len(operation.moved_files),
            )
        moved = plural(len(operation.moved_files), "note")
        self._report("reorganize", 1, 1, f"{moved} would move" if dry_run else f"{moved} moved")
        return operation
