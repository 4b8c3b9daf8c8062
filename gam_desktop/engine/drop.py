"""Adding a drop of documents: in steps, each committed as it is done, nothing paid twice.

A drop of more than `BuildOptions.step_documents` documents is written in steps of that
many. Each step is a normal operation (its commit, its History entry, its rollback): the
first one into an empty memory plans the taxonomy, later ones place their memories in the
tree and reorganize a folder that crosses the threshold, as any add does. The memory can
be asked between steps, and a cancel keeps the finished steps.

A step's memories are made before it takes the folder (the writer lock and the journal
cover placing and writing only): a crash while the LLM works, most of a big add, leaves
no interrupted operation to recover, only the results kept so far (`ingest.resume`), which
the same add run again uses instead of calling the LLM. The chunks of the whole drop are
cut first, so that "Resuming: 312 of 500 chunks already summarized" can be said at once.

The drop has one progress bar (`Stages`) from reading its files to its last commit: the
cutting has its share, and each step a share in proportion to its chunks, within which the
step's own stages draw ("Step 2 of 3: Summarizing 4 of 10 chunks"), so that the bar never
goes back from one step to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from gam_desktop.engine.history import journal
from gam_desktop.engine.history.versioned import VersionedFolder
from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport, MemoryBuilder
from gam_desktop.engine.ingest.chunking import Chunk
from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.ingest.memorize import already_memorized
from gam_desktop.engine.ingest.resume import StageResults
from gam_desktop.engine.ingest.stages import CUT_WEIGHT, later_stages
from gam_desktop.engine.llm import UsageMeter
from gam_desktop.engine.models import MemorizedChunk
from gam_desktop.engine.progress import CancelToken, OperationCancelled, Stages
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import SOURCES_DIR
from gam_desktop.engine.store.results import ResultStore
from gam_desktop.engine.textutil import plural


def steps_of(docs: Sequence[SourceDocument], size: int) -> list[list[SourceDocument]]:
    """`docs` in steps of `size` (one step when `size` is 0 or the drop is no bigger)."""
    if size <= 0 or len(docs) <= size:
        return [list(docs)]
    return [list(docs[i : i + size]) for i in range(0, len(docs), size)]


@dataclass
class Drop:
    """One drop's run. `builder(results)` makes the builder (its LLM client's usage meter
    is replaced per step, so each commit's tokens are its own); `stages` is the operation's
    bar, begun before the drop (reading its files); `changed` hears what each step (and
    each undo) recorded. `report` is what the finished steps added, also when
    the run ends in a cancel or an error (those steps are kept)."""

    versioned: VersionedFolder
    builder: Callable[[StageResults], MemoryBuilder]
    model: str
    options: BuildOptions
    stages: Stages
    cancel: CancelToken
    changed: Callable[[Changes], None]
    report: BuildReport = field(default_factory=lambda: BuildReport("add"))

    def run(self, docs: Sequence[SourceDocument]) -> BuildReport:
        folder = self.versioned.folder
        folder.check_writable()  # before any call; also makes .gam/ for the results
        self.versioned.check_recovered()
        journal.check_space(folder)  # a full disk: refused before any call is paid for
        results = StageResults(ResultStore.of(folder), self.model)  # (None: a linked cache)
        results.begin(docs)
        builder = self.builder(results)
        builder.stages = self.stages
        total = self.report = BuildReport("add", usage=UsageMeter())
        commits: list[str] = []
        steps = steps_of(docs, self.options.step_documents)
        try:
            builder.llm.usage = UsageMeter()
            self._share(builder, steps, {}, cut=True)  # each step's chunks are guessed
            chunks = builder.chunk(docs)
            self._share(builder, steps, _count_by_document(chunks), cut=False)  # now known
            total.usage.absorb(builder.llm.usage)
            results.record_chunks(chunks)
            self._say_resumed(chunks, results)
            self._add_in_steps(builder, steps, chunks, commits, total)
            if not total.remaining:
                results.finish()
            else:  # stopped after a step, as the person asked: theirs to add again
                results.cancelled()
        except OperationCancelled:
            if self.cancel.undo:
                self._undo(commits, results)
            else:
                results.cancelled()  # not offered at the next start as a crash's would be
            raise
        finally:
            total.reused = results.reused
            results.close()
        return total

    def _later(self, number: int) -> dict[str, float]:
        """The weights of step `number`'s stages after its memories: the first step into
        an empty memory plans the folders, every other one places its memories."""
        meta = self.versioned.folder.read_meta() if number == 1 else None
        first = "organize" if number == 1 and (meta is None or meta.total_chunks == 0) else "place"
        return later_stages(first, self.options.auto_reorganize)

    def _share(
        self,
        builder: MemoryBuilder,
        steps: list[list[SourceDocument]],
        chunks: dict[str, int],
        cut: bool,
    ) -> None:
        """Share the bar among the cutting (when `cut`) and the steps, each step by its
        chunks (`chunks` by document hash; a document counts one until it is cut)."""
        weights = {"chunk": CUT_WEIGHT} if cut else {}
        for number, step in enumerate(steps, 1):
            count = sum(chunks.get(d.content_hash, 1) for d in step)
            later = sum(self._later(number).values())
            weights[_step_stage(number)] = builder.memorize_weight(count) + later
        self.stages.expect(**weights)

    def _add_in_steps(
        self,
        builder: MemoryBuilder,
        steps: list[list[SourceDocument]],
        chunks: list[Chunk],
        commits: list[str],
        total: BuildReport,
    ) -> None:
        """Each step memorized, placed and committed; a stop asked for between two steps
        leaves the rest in `total.remaining`."""
        for number, step in enumerate(steps, 1):
            self.cancel.raise_if_cancelled()
            if number > 1 and self.cancel.stopping:
                total.remaining = [d.name for s in steps[number - 1 :] for d in s]
                return
            report = self._step(builder, step, chunks, (number, len(steps)), commits)
            builder.results.forget_documents(step)
            total.operation = total.operation if number > 1 else report.operation
            total.absorb(report)
            total.steps = number

    def _step(
        self,
        builder: MemoryBuilder,
        docs: list[SourceDocument],
        chunks: list[Chunk],
        position: tuple[int, int],
        commits: list[str],
    ) -> BuildReport:
        """Memorize one step's documents, then place and commit them as one operation."""
        number, count = position
        prefix = f"Step {number} of {count}: " if count > 1 else ""
        builder.stages = self.stages.part(_step_stage(number), prefix)  # within its share
        builder.llm.usage = UsageMeter()  # this step's tokens, in its commit
        hashes = {d.content_hash for d in docs}
        mine = [c for c in chunks if c.source.content_hash in hashes]
        memories = builder.memorize(mine, docs, self._later(number))
        with self.versioned.operation("add") as transaction:
            builder.write_changes = transaction.write
            docs, memories = _still_new(self.versioned, docs, memories)
            meta = self.versioned.folder.read_meta()
            if not docs:
                report = BuildReport("add", usage=builder.llm.usage)
            elif meta is None or meta.total_chunks == 0:
                report = builder.build(docs, memories)
            else:
                report = builder.add(docs, memories)
        commits += transaction.commits
        # A named pipe (or socket, device) saved among the notes: left out of the commit,
        # said by name (once per drop, not once per step).
        report.warnings += [w for w in transaction.left_out if w not in self.report.warnings]
        self.changed(transaction.changes(report.operation))
        return report

    def _say_resumed(self, chunks: list[Chunk], results: StageResults) -> None:
        kept = already_memorized(chunks, results)
        if kept:
            message = f"Resuming: {kept} of {plural(len(chunks), 'chunk')} already summarized"
            self.stages.report("resume", kept, len(chunks), message)

    def _undo(self, commits: list[str], results: StageResults) -> None:
        """Cancelled with `undo`: the finished steps are rolled back, newest first (each
        rollback an operation of its own), and the drop is forgotten."""
        for sha in reversed(commits):
            self.changed(self.versioned.rollback(sha))
        self.report = BuildReport("add")  # nothing of it is left
        results.forget_pending()


def _step_stage(number: int) -> str:
    return f"step {number}"


def _count_by_document(chunks: Sequence[Chunk]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for chunk in chunks:
        counts[chunk.source.content_hash] = counts.get(chunk.source.content_hash, 0) + 1
    return counts


def held_sources(versioned: VersionedFolder) -> set[str]:
    """The hashes of the documents this memory holds: their source text is on disk and in
    its last commit. What an operation a crash interrupted wrote is not held until
    recovery keeps it (it was: "already in this memory; skipped", and the add run again
    after the crash added nothing). Without a repository (no git, or a memory made
    without it) the disk is all there is; no repository is made to ask."""
    folder = versioned.folder
    on_disk = folder.known_sources()
    if not on_disk or not (folder.root / ".git").exists():
        return on_disk
    repo = versioned.repo
    if repo is None:  # git is unavailable: history is off
        return on_disk
    if repo.head() is None:  # nothing committed yet: a first build that never finished
        return set()
    listed = repo.git("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", SOURCES_DIR)
    committed = {PurePosixPath(p).stem for p in listed.split("\0") if p.endswith(".txt")}
    return on_disk & committed


def _still_new(
    versioned: VersionedFolder, docs: list[SourceDocument], memories: list[MemorizedChunk]
) -> tuple[list[SourceDocument], list[MemorizedChunk]]:
    """The documents (and their memories) no one added while this step's memories were made
    (another window or `gam-add` may have, the folder not being held then)."""
    known = held_sources(versioned)
    fresh = [d for d in docs if d.content_hash not in known]
    if len(fresh) == len(docs):
        return docs, memories
    keep = {d.content_hash for d in fresh}
    return fresh, [m for m in memories if m.metadata.get("source_hash") in keep]
