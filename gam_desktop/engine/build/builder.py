"""Building a memory folder: full build, incremental add, reorganization.

Every operation first asks the LLM everything it needs, then writes the result
as one ChangeSet. Cancel or fail before the write and the folder is untouched;
fail during the write and the ChangeSet undoes itself.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.build.chunking import Chunker
from gam_desktop.engine.build.compose import place_memory, stage_sources
from gam_desktop.engine.build.documents import SourceDocument
from gam_desktop.engine.build.memorize import llm_split_advisor, memorize_chunks
from gam_desktop.engine.build.planning import describe_directories, place_memories, plan_taxonomy
from gam_desktop.engine.build.stages import (
    CUT_WEIGHT,
    PLAN_WEIGHT,
    WRITE_WEIGHT,
    WriteChanges,
    later_stages,
    summarizing,
)
from gam_desktop.engine.llm import LLM, UsageMeter
from gam_desktop.engine.models import ChunkConfig, MemorizedChunk, ReorganizeOperation
from gam_desktop.engine.progress import CancelToken, ProgressCallback, Stages, no_progress
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import DirView, MemoryFolder
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

    def summary(self) -> str:
        docs, memories = len(self.documents), len(self.memories)
        verb = "Built" if self.operation == "build" else "Added"
        text = f"{verb} {plural(docs, 'document')} ({plural(memories, 'memory')})"
        for op in self.reorganizations:
            where = op.directory or "/"
            text += f"; reorganized {where} into {plural(len(op.new_directories), 'folder')}"
        return text


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
    ):
        self.folder = folder
        self.llm = llm
        self.options = options or BuildOptions()
        # The operation's one bar: given by the caller when it has stages of its own
        # before these (reading the documents), else begun here.
        self.stages = progress if isinstance(progress, Stages) else Stages(progress)
        self.cancel = cancel or CancelToken()
        # Writes one operation's change set as (changes, summary, trailers): a versioned
        # folder's Transaction.write applies and commits it; alone, it is only applied.
        self.write_changes: WriteChanges = lambda changes, *_: changes.apply(folder.root)

    def _report(self, stage: str, done: int, total: int, message: str = "") -> None:
        self.stages.report(stage, done, total, message)

    # -- shared first half: chunks and memories ---------------------------------------

    def _memorize(
        self,
        docs: Sequence[SourceDocument],
        first_index: int,
        report: BuildReport,
        later: dict[str, float],
    ) -> list[MemorizedChunk]:
        """Cut `docs` into chunks and summarize each; `later`: the weights of the stages
        that follow, so the bar keeps room for them."""
        workers = max(1, self.llm.settings.workers)  # chunks summarized at a time
        self.stages.expect(chunk=CUT_WEIGHT, memorize=max(1.0, len(docs) / workers), **later)
        self._report("chunk", 0, len(docs), f"Cutting {plural(len(docs), 'document')} into chunks")
        chunker = Chunker(self.options.chunk, llm_split_advisor(self.llm, self.cancel))
        chunks = chunker.chunk_documents(docs, self._split_in_parallel)
        report.chunks = len(chunks)
        total = len(chunks)
        self._report("chunk", len(docs), len(docs), f"Cut into {plural(total, 'chunk')}")
        self.stages.expect(memorize=max(1.0, total / workers), **later)  # now it is known
        said = summarizing(chunks, docs)
        self._report("memorize", 0, total, said(0))
        memories = memorize_chunks(
            self.llm,
            chunks,
            first_index=first_index,
            cancel=self.cancel,
            on_done=lambda n: self._report("memorize", n, total, said(n)),
        )
        report.fallbacks = sum(1 for m in memories if m.metadata.get("fallback"))
        if report.fallbacks:
            report.warnings.append(
                f"{report.fallbacks} of {plural(total, 'memory')} "
                f"{'was' if report.fallbacks == 1 else 'were'} written without the LLM (it kept "
                "failing); they are marked fallback: true"
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
        clean = {k: " ".join(str(v).split()) for k, v in details.items()}
        committing = functools.partial(self._report, "write", 1, 2, "Committing")
        self.write_changes(changes, summary, clean, committing)
        self._report("write", 2, 2, "Saved")

    def build(self, docs: Sequence[SourceDocument]) -> BuildReport:
        """A new memory from scratch."""
        report = BuildReport("build", documents=[d.name for d in docs], usage=self.llm.usage)
        memories = self._memorize(
            docs, 0, report, later_stages("organize", self.options.auto_reorganize)
        )
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

    def add(self, docs: Sequence[SourceDocument]) -> BuildReport:
        """New documents placed into the existing taxonomy."""
        report = BuildReport("add", documents=[d.name for d in docs], usage=self.llm.usage)
        meta = self.folder.read_meta()
        first = meta.total_chunks if meta else 0
        memories = self._memorize(
            docs, first, report, later_stages("place", self.options.auto_reorganize)
        )
        if not memories:
            return report
        root = self.folder.load_view()
        self._report(
            "place", 0, len(memories), f"Choosing folders for {plural(len(memories), 'memory')}"
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
            self.llm, listings, self.cancel
        ).items():
            node = dir_at(root, path)
            node.title, node.description = title, description
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
        from gam_desktop.engine.build.reorganize import plan_reorganization, stage_reorganization

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
        moved = plural(len(operation.moved_files), "memory")
        self._report("reorganize", 1, 1, f"{moved} would move" if dry_run else f"{moved} moved")
        return operation
