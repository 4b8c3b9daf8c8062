"""Memories written without the LLM summarized again, in their place (issue 36).

A memorize call whose retries ran out leaves a memory written without the LLM (`fallback:
true`, the passage's own sentences: ingest/memorize.py), and the add still succeeds; adding
the document again skips it as held. Here every such memory is found, the original wording
it stands for (`.gam/sources/<source_hash>.txt[span]`, the chunk it was written from) is
memorized again as an add would (the same prompt, the document's context, the same checks),
and the result is written over it: the same file in the same folder, its front matter kept
but for the title, the tldr and the mark (and its reason); its folder's README lists the
new tldr.

Nothing is lost: a memory whose call fails again stays as it was, still marked (the next
run tries it again); one whose original is missing or no longer matches its `hash` cannot
be summarized again and stays too; a file changed since it was read (by a person, another
window) is left as it now is. The calls are made before the folder is taken, as an add
memorizes before its step takes it, and each result is kept as it arrives (`ingest.resume`):
cancelled or killed mid-way, the next run pays for none of them twice. The writes are one
change set, staged here and committed by the caller as one operation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gam_desktop.engine.ingest.chunking import Chunk
from gam_desktop.engine.ingest.documents import SourceDocument, sha256_hex
from gam_desktop.engine.ingest.memorize import FALLBACK_REASON, memorize_chunks
from gam_desktop.engine.ingest.resume import NO_RESULTS, StageResults
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.models import MemorizedChunk
from gam_desktop.engine.progress import CancelToken, Stages
from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import README, parse_memory, render_memory
from gam_desktop.engine.store.readmes import find_dir, stage_readmes
from gam_desktop.engine.textutil import plural

FALLBACK = "fallback"  # the front matter's mark of a memory written without the LLM
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class Fallback:
    """A memory written without the LLM: its path, its file as read (an edit made since is
    noticed) and its front matter; `chunk` is its original passage, None when that is gone."""

    path: str
    text: str
    front: dict[str, Any]
    chunk: Chunk | None

    @property
    def directory(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass
class Resummarized:
    """What summarizing again made: the fallbacks found, and the memory made for each one
    whose call succeeded this time (by path)."""

    fallbacks: list[Fallback] = field(default_factory=list)
    memories: dict[str, MemorizedChunk] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # of each call that failed again

    def reasons(self) -> list[str]:
        """Why this run's calls failed again (each error once, the most frequent first), as
        a note keeps its reason: one line, every secret the process knows taken out."""
        counts = Counter(self.errors)
        return sorted(counts, key=lambda said: -counts[said])

    @property
    def failed(self) -> int:
        """Those still written without the LLM: their call failed again, or no original."""
        return len(self.fallbacks) - len(self.memories)

    def documents(self) -> set[str]:
        """The source hashes of the memories summarized again."""
        return {str(m.metadata.get("source_hash", "")) for m in self.memories.values()}


def read_file(folder: MemoryFolder, path: str) -> str | None:
    file = folder.root / path
    if not folder.readable(file):
        return None
    return file.read_text(encoding="utf-8", errors="replace")


def find_fallbacks(folder: MemoryFolder, cancel: CancelToken | None = None) -> list[Fallback]:
    """Every memory of the document tree marked `fallback: true`, in the tree's order, each
    with its original passage when that is still there (read once a document)."""
    documents: dict[str, SourceDocument | None] = {}
    found: list[Fallback] = []
    for node in folder.load_view().walk():
        if cancel is not None:
            cancel.raise_if_cancelled()
        for name in node.files:
            path = node.child_path(name)
            text = read_file(folder, path)
            if text is None or FALLBACK not in text:  # cheap: most memories never were
                continue
            parsed = parse_memory(text)
            if parsed.problem is None and parsed.front.get(FALLBACK) is True:
                chunk = original_chunk(folder, parsed.front, documents, len(found))
                found.append(Fallback(path, text, dict(parsed.front), chunk))
    return found


def original_chunk(
    folder: MemoryFolder,
    front: dict[str, Any],
    documents: dict[str, SourceDocument | None],
    index: int,
) -> Chunk | None:
    """The passage a memory was written from, as a chunk of its document (its text from
    `.gam/sources/`); None when the text is missing or its span no longer holds the passage
    the memory's `hash` names."""
    source_hash, span = str(front.get("source_hash") or ""), _span(front.get("span"))
    if not _SHA256.fullmatch(source_hash) or span is None:
        return None
    if source_hash not in documents:
        path = folder.source_path(source_hash)
        documents[source_hash] = (
            SourceDocument(
                name=str(front.get("source") or ""),
                text=path.read_text(encoding="utf-8", errors="replace"),
                content_hash=source_hash,
            )
            if folder.readable(path)
            else None
        )
    document = documents[source_hash]
    if document is None:
        return None
    start, end = span
    tokens = front.get("tokens")
    chunk = Chunk(index, document, start, end, tokens if isinstance(tokens, int) else 0)
    if end > len(document.text) or front.get("hash") not in (None, _hash(chunk.text)):
        return None
    return chunk


def _span(value: object) -> tuple[int, int] | None:
    """A front matter's `span` ([start, end], characters of its source text), if sound."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    start, end = value
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end)):
        return None
    return (start, end) if 0 <= start < end else None


def _hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


def memorize_again(
    llm: LLM,
    fallbacks: Sequence[Fallback],
    stages: Stages,
    cancel: CancelToken,
    results: StageResults = NO_RESULTS,
) -> Resummarized:
    """A memory made with the LLM for each fallback that has its original, in parallel calls
    (a call that fails again leaves its fallback out); OperationCancelled on a cancel."""
    done = Resummarized(list(fallbacks))
    ready = [f for f in fallbacks if f.chunk is not None]
    total = len(ready)
    stages.report("memorize", 0, total, f"Summarizing {plural(total, 'note')} again")

    def said(n: int) -> None:
        stages.report("memorize", n, total, f"Summarizing again: {n} of {plural(total, 'note')}")

    chunks = [f.chunk for f in ready if f.chunk is not None]
    if not chunks:
        return done
    memories = memorize_chunks(
        llm, chunks, first_index=0, cancel=cancel, on_done=said, results=results
    )
    for fallback, memory in zip(ready, memories, strict=True):
        if not memory.metadata.get(FALLBACK):  # its call succeeded this time
            done.memories[fallback.path] = memory
        elif memory.metadata.get(FALLBACK_REASON):  # this run's error, not the one it keeps
            done.errors.append(str(memory.metadata[FALLBACK_REASON]))
    return done


def summarized_front(front: dict[str, Any], memory: MemorizedChunk) -> dict[str, Any]:
    """The memory's front matter with the new title and tldr and without the mark; the rest
    (index, source, span, pages, hash, created, and whatever a person added) as it was."""
    updated = dict(front)
    updated["title"], updated["tldr"] = memory.heading, memory.tldr
    updated.pop(FALLBACK, None)
    updated.pop(FALLBACK_REASON, None)
    return updated


def stage_summaries(folder: MemoryFolder, done: Resummarized) -> tuple[ChangeSet, list[str]]:
    """The files summarizing again writes, as the folder is now (called under its writer
    lock): each memory summarized again, unless its file changed since it was read, and the
    README of each folder holding one. Returns them and the memories written."""
    changes, written = ChangeSet(), []
    tldrs: dict[str, dict[str, str]] = {}  # folder -> memory file -> its new tldr
    for fallback in done.fallbacks:
        memory = done.memories.get(fallback.path)
        if memory is None or read_file(folder, fallback.path) != fallback.text:
            continue
        front = summarized_front(fallback.front, memory)
        changes.writes[fallback.path] = render_memory(front, memory.memory)
        tldrs.setdefault(fallback.directory, {})[fallback.name] = memory.tldr
        written.append(fallback.path)
    root = folder.load_view()
    for directory, new in tldrs.items():
        node = find_dir(root, directory)
        if node is not None:
            folder.read_fronts(node)  # every memory's tldr as it is, then the new ones
            node.files.update({name: tldr for name, tldr in new.items() if name in node.files})
    stage_readmes(changes, root, tldrs)
    return changes, written


def summary(count: int) -> str:
    """The commit's summary: "Summarized again: 3 notes"."""
    return f"Summarized again: {plural(count, 'note')}"


def notes_in(changes: Changes) -> list[str]:
    """The memories an operation summarizing again rewrote (not the READMEs it updated)."""
    return sorted(p for p in changes.modified if p.endswith(".md") and not _is_readme(p))


def _is_readme(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == README
