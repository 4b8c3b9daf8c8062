"""Which of the cited files an answer actually rests on.

A small model cites by habit: every passage it was shown ("[1]-[8]"), or the first one,
while its sentence names another document ("Lumenvault 4.0 …" citing the 3.1 notes).
Look-alike documents differ in their names (the company, the version, the author), so
the answer's own words say which documents it is about: those are its sources. When it
names none, the files stating other figures than its own are not. Nothing here asks the model again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from gam_desktop.engine.ask.evidence import Passage, figures
from gam_desktop.engine.ask.words import query_terms, tokenize
from gam_desktop.engine.textutil import STOPWORDS

IDENTIFIER = re.compile(r"\b[A-Za-z]\w*(?:[._]\w+)+\b")  # a setting: retention.days, keep_days
NAME_TOKEN = re.compile(r"\d+(?:\.\d+)+|[^\W_]+")


def name_tokens(document: str) -> set[str]:
    """The words and version numbers of a document's name ("Lumenvault 4.0 release notes")."""
    tokens = NAME_TOKEN.findall(document.lower())
    return {t for t in tokens if (len(t) > 1 or t.isdigit()) and t not in STOPWORDS}


def _says(text: str, token: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(token)}(?:'?s)?(?![\w]|\.\d)", text))


def named_documents(answer: str, documents: list[str]) -> list[str]:
    """The `documents` the answer names by what only their name has among them: "4.0"
    among four Lumenvault releases, "Osprine" among four on-call policies (never
    "oncall", which all four share)."""
    distinct = list(dict.fromkeys(d for d in documents if d))
    if len(distinct) < 2:
        return []
    counts = Counter(t for d in distinct for t in name_tokens(d))
    text = answer.lower()
    return [d for d in distinct if any(counts[t] == 1 and _says(text, t) for t in name_tokens(d))]


def supporting(
    answer: str,
    question: str,
    sources: list[str],
    passages: list[Passage],
    document_of: Callable[[str], str],  # "" for a file that is not from a document
    text_of: Callable[[str], str],
) -> list[str]:
    """The `sources` (memory paths) `answer` rests on, given the `passages` the model was
    shown: the ones whose document it names, with a shown passage of each named document
    it did not cite; else, when none of them states its figures and identifiers, the
    shown passages that do; else all but those stating other figures than the answer's;
    and with no figure to go by, those about what it says."""
    of_source = {s: document_of(s) for s in sources}
    of_passage = {p.memory: document_of(p.memory) for p in passages}
    named = set(named_documents(answer, [*of_source.values(), *of_passage.values()]))
    if named:
        kept = [s for s in sources if not of_source[s] or of_source[s] in named]
        covered = {of_source[s] for s in kept}
        for memory, document in of_passage.items():
            if document in named and document not in covered:
                kept.append(memory)
                covered.add(document)
        return kept
    stating = _of_asked_document(
        answer, question, [*sources, *of_passage], {**of_passage, **of_source}, text_of
    )
    if stating:
        return stating
    markers = evidence_markers(answer, question)
    if not markers:
        return about_it(answer, sources, text_of)
    found = {s: markers_in(markers, text_of(s)) for s in dict.fromkeys([*sources, *of_passage])}
    if not any(found[s] for s in sources):
        # What it states is in none of its citations: the passages that state it are its
        # sources ("90 days" cited from the 3.2 notes, stated by the 4.0 notes).
        most = max(len(found[m]) for m in of_passage) if of_passage else 0
        return [m for m in of_passage if most and len(found[m]) == most] or sources
    # A source stating other numbers than the answer's is the look-alike it did not use.
    return [s for s in sources if found[s] or not figures(text_of(s))]


BARE_NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w]|[.,]\d)")


def _of_asked_document(
    answer: str,
    question: str,
    files: list[str],
    document_of: dict[str, str],
    text_of: Callable[[str], str],
) -> list[str]:
    """The files of the document the question names that state every number of an answer
    naming none ("The answer is: 4." asked of Lumenvault 3.1, cited from the 4.0 notes the
    model was also shown): what it rests on, though it cited the look-alike. Single digits
    count here, the asked document telling them apart."""
    asked = set(named_documents(question, list(document_of.values())))
    numbers = set(BARE_NUMBER.findall(answer)) - set(BARE_NUMBER.findall(question))
    if not asked or not numbers:
        return []
    return [
        f
        for f in dict.fromkeys(files)
        if document_of.get(f) in asked
        and numbers <= set(BARE_NUMBER.findall(text_of(f).replace("**", "")))
    ]


def evidence_markers(answer: str, question: str) -> set[str]:
    """What tells an answer's source apart: its figures and its identifiers
    (`schedule.interval_minutes`, keep_days) that the question does not give."""
    identifiers = {i.lower() for i in IDENTIFIER.findall(answer)}
    return (
        (figures(answer) | identifiers)
        - figures(question)
        - {i.lower() for i in IDENTIFIER.findall(question)}
    )


def markers_in(markers: set[str], text: str) -> set[str]:
    lower = text.lower()
    return {m for m in markers if m in figures(text) or (not m.isdigit() and m in lower)}


def about_it(answer: str, sources: list[str], text_of: Callable[[str], str]) -> list[str]:
    """The `sources` about what the answer says: those holding two thirds as many of its
    words as the one holding most (a kitchen procedure cited for an on-call answer shares
    "must", "within" and "minutes" with it, and nothing else), and those saying a part of
    it the others do not."""
    said = set(query_terms(answer))
    if len(said) < 3:  # "Yes.": nothing to tell them apart by
        return sources
    held = {s: said & set(tokenize(text_of(s))) for s in sources}
    most = max(map(len, held.values()), default=0)
    if not most:
        return sources
    kept = [s for s in sources if 3 * len(held[s]) >= 2 * most]
    covered = set().union(*(held[s] for s in kept))
    # A source of a part of the answer no kept one says ("… never carry the pager") stays.
    return [s for s in sources if s in kept or len(held[s] - covered) >= 2]
