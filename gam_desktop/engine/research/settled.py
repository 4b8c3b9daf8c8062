"""What the documents settle with no model call: "Which kitchen keeps its fridges
coldest?" is each kitchen's own fridge temperature, compared (`ask.compare`); "Compare
after how many minutes a page escalates at Brindlewave, Osprine and Quillfern" is each
named one's own (`ask.each_named`). The chat answers such a question that way; research
reports it as its one section, each value cited from the memory covering the sentence
that gives it, instead of a plan whose sub-questions a small model answers with any
kitchen's number.
"""

from __future__ import annotations

from gam_desktop.engine.ask.compare import Compared, compare_documents
from gam_desktop.engine.ask.each_named import each_named
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.ask.words import tokenize
from gam_desktop.engine.research.models import Claim, Excerpt, SectionNotes


def settled(tools: MemoryTools, question: str) -> SectionNotes | None:
    """The comparison `question` asks for, as a section of claims: the documents chosen,
    then each other document's value; or the value of each document it names; None when
    the documents do not settle it."""
    compared = compare_documents(tools, question)
    if compared is not None and compared.chosen:
        most = f", the {compared.superlative}" if compared.superlative else ""
        values = [(v, f"{v.said}{most}") for v in compared.chosen]
        values += [(v, v.said) for v in sorted(compared.others, key=lambda v: v.value)]
    elif named := each_named(tools, question):
        values = [(v, v.said) for v in named]
    else:
        return None
    claims = [_claim(tools, v, f"{v.document}: {said} (“{v.sentence}”).") for v, said in values]
    return SectionNotes(question=question, claims=claims, searched=True, integrated=True)


def _claim(tools: MemoryTools, value: Compared, text: str) -> Claim:
    sources = [_excerpt(tools, path, value) for path in value.memories]
    return Claim(text=text, sources=sources)


def _excerpt(tools: MemoryTools, path: str, value: Compared) -> Excerpt:
    """The memory covering the value, at its line giving the value that says most of the
    sentence quoted (another may give the same figure of something else); else all of it."""
    try:
        lines = (tools.sandbox.root / path).read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    quoted = set(tokenize(value.sentence))
    giving = [(len(quoted & set(tokenize(line))), n) for n, line in enumerate(lines, 1)]
    at = max((g for g in giving if value.said in lines[g[1] - 1]), default=(0, 0))[1]
    span = (at, at) if at else (1, max(len(lines), 1))
    return Excerpt(id=path, path=path, lines=span, text=value.sentence, document=value.source)
