"""Each look-alike document a question is about, searched on its own.

A question over a kind of document ("which paging tool does each company's on-call
policy use?", "which kitchen keeps its fridges coldest?") is asked of each document of
that kind, one sub-question each; a sub-question about one listed name ("… at Osprine",
"… in Lumenvault 3.1") keeps to the document named after it. Their search reads only that
document's memories: look-alikes share every word but the numbers, so a search over all
of them returns whichever ranks first, and a small model answers with its value.

The kind is found by BM25: the documents whose best passage scores at least half the best
one's (on the look-alike sets measured, the documents of the kind asked about score 3 to
10 times the others).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gam_desktop.engine.ask.corpus import CorpusFile, document_of, memory_of
from gam_desktop.engine.ask.evidence import SPANS_DOCUMENTS, mentions
from gam_desktop.engine.ask.recall import is_personal
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.research.entities import named_list
from gam_desktop.engine.research.models import SubQuestion

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


def by_document(tools: MemoryTools, question: str, subs: list[SubQuestion]) -> list[SubQuestion]:
    """The plan with each sub-question kept to its document where one is clear: one per
    document of the kind asked about when the question spans them without listing
    names, else each sub-question about one name to the one document named after it."""
    kind = kind_of(tools, question)
    if not kind:
        return subs
    if named_list(question) is None and SPANS_DOCUMENTS.search(question):
        return [SubQuestion(question=f"{question} (in {d})", keywords=[], document=d) for d in kind]
    return [_kept_to(sub, kind) for sub in subs]


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


def _kept_to(sub: SubQuestion, kind: list[str]) -> SubQuestion:
    """`sub` searching only the document of `kind` whose name holds its one keyword."""
    if sub.document or len(sub.keywords) != 1:
        return sub
    named = [d for d in kind if mentions(_plain(d), [_plain(sub.keywords[0])])]
    return sub.model_copy(update={"document": named[0]}) if len(named) == 1 else sub


def _plain(name: str) -> str:
    """ "Okafor-Lind" as "field-report-okafor-lind-2022.md" spells it: "okafor lind"."""
    return re.sub(r"[-_\s]+", " ", name.casefold())
