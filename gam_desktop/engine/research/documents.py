"""Each look-alike document a question is about, searched on its own.

A question over a kind of document ("which paging tool does each company's on-call
policy use?", "which kitchen keeps its fridges coldest?") is asked of each document of
that kind, one sub-question each; a sub-question about one listed name ("… at Osprine",
"… in Lumenvault 3.1") keeps to the document named after it. Their search reads only that
document's memories (ask/kinds.py finds the kind and its memories).
"""

from __future__ import annotations

import re

from gam_desktop.engine.ask.evidence import SPANS_DOCUMENTS, mentions
from gam_desktop.engine.ask.kinds import kind_of
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.research.entities import named_list
from gam_desktop.engine.research.models import SubQuestion


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


def _kept_to(sub: SubQuestion, kind: list[str]) -> SubQuestion:
    """`sub` searching only the document of `kind` whose name holds its one keyword."""
    if sub.document or len(sub.keywords) != 1:
        return sub
    named = [d for d in kind if mentions(_plain(d), [_plain(sub.keywords[0])])]
    return sub.model_copy(update={"document": named[0]}) if len(named) == 1 else sub


def _plain(name: str) -> str:
    """ "Okafor-Lind" as "field-report-okafor-lind-2022.md" spells it: "okafor lind"."""
    return re.sub(r"[-_\s]+", " ", name.casefold())
