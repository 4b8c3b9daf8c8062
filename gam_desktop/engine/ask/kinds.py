"""The documents of one kind: the look-alikes a question over several documents is about.

The kind is found by BM25: the documents whose best passage scores at least half the best
one's (on the look-alike sets measured, the documents of the kind asked about score 3 to
10 times the others). Each is then searched on its own: look-alikes share every word but
the numbers, so a search over all of them returns whichever ranks first, and a small
model answers with its value.
"""

from __future__ import annotations

from collections.abc import Mapping

from gam_desktop.engine.ask.corpus import CorpusFile, document_of, memory_of
from gam_desktop.engine.ask.recall import is_personal
from gam_desktop.engine.ask.tools import MemoryTools

HITS = 40  # passages looked at to find the documents of the kind asked about
SAME_KIND = 0.5  # a document whose best passage scores under half the best is another kind
MAX_DOCUMENTS = 6
DOCUMENT_HITS = 200  # passages searched for those of one document


def kind_of(tools: MemoryTools, question: str) -> list[str]:
    """The source documents (as memories' front matter names them) of the kind
    `question` is about, best first; empty when fewer than two."""
    tools.corpus.refresh_if_stale()
    files = tools.corpus.snapshot()
    best: dict[str, float] = {}
    for hit in tools.index.search(question, top_k=HITS):
        memory = files.get(memory_of(hit.path))
        if memory is None or is_personal(hit.path):
            continue
        document = document_of(memory.text)
        if document and document not in best:
            best[document] = hit.score
    top = max(best.values(), default=0.0)
    kind = [d for d, score in best.items() if top > 0 and score >= SAME_KIND * top]
    return kind[:MAX_DOCUMENTS] if len(kind) >= 2 else []


def memories_of(tools: MemoryTools, question: str, document: str) -> list[str]:
    """The memories written from `document` that best answer `question`, best first."""
    files = tools.corpus.snapshot()
    hits = tools.index.search(question, top_k=DOCUMENT_HITS)
    found = dict.fromkeys(memory_of(h.path) for h in hits)
    return [m for m in found if is_from(files, m, document)]


def is_from(files: Mapping[str, CorpusFile], memory: str, document: str) -> bool:
    """Whether the memory at `memory` was written from `document`."""
    found = files.get(memory)
    return found is not None and document_of(found.text) == document
