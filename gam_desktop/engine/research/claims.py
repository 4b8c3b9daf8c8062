"""A research claim is checked the way the answering pipeline checks an answer
(answering's checks): the model gives each claim with the sentences it rests on, copied from
the excerpts it cites; the sentences must be the excerpts' own (`QuotesInSources`), the
identifiers the claim is about must be named by their sources (`AboutWhatIsAsked`), a name
of another source it was shown must not be given to this one's sentence (`NamedInSources`),
and the claim's numbers and most of its words must be its sentences' (`AnswerFromQuotes`).
A claim failing a check is left out of the report, with the reason; one holding keeps its
sentences and the excerpts they come from. Nothing here knows a subject."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from gam_desktop.engine import answering
from gam_desktop.engine.answering import (
    FUNCTION_WORDS,
    MONTHS,
    Check,
    Draft,
    Finding,
    Passage,
    Support,
    holds,
    identifiers,
)
from gam_desktop.engine.research.models import Claim, ClaimReply, Excerpt, Quote
from gam_desktop.engine.retrieval import query_terms, tokenize

EXCERPT_ID = re.compile(r"^\[?\s*E\s*(\d+)\s*\]?$", re.IGNORECASE)
INLINE_ID = re.compile(r"\s*[\[(]\s*(E\d+(?:\s*[,;]\s*E\d+)*)\s*[\])]", re.IGNORECASE)
NAME = re.compile(r"[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*")  # a run of capitalized words
CAPITALIZED = re.compile(r"(?<![\w-])[A-Z][\w'’.-]*\w")
POSSESSIVE = re.compile(r"['’]s\b")
STARTS = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")  # what comes before a sentence's first word
NAME_WORD = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+")  # "widget_2.1_guide.md": widget, 2.1, guide, md


def names(text: str) -> list[str]:
    """The names `text` gives, lowercased: runs of capitalized words without a sentence's
    first word (any word is capitalized there), function words or months."""
    found = []
    for run in NAME.finditer(text):
        parts = POSSESSIVE.sub("", run.group()).split()[
            1 if STARTS.search(text[: run.start()]) else 0 :
        ]
        kept = [w for w in parts if w.lower() not in FUNCTION_WORDS and w.lower() not in MONTHS]
        if kept:
            found.append(" ".join(kept).lower())
    return list(dict.fromkeys(found))


def name_words(text: str) -> set[str]:
    return set(NAME_WORD.findall(text.casefold()))


class AboutWhatIsAsked:
    """The identifiers a claim is about ("2.1", "utf-8": those of the question it writes,
    else all its sub-question's) are named by the passages of its sentences: answering's
    check, asked of them. A look-alike's sentence answers of another version."""

    name = answering.AboutWhatIsAsked.name

    def __init__(self, sub_question: str) -> None:
        self.sub_question = sub_question

    def check(self, draft: Draft) -> Finding | None:
        asked = identifiers(draft.question)
        about = {a for a in asked if holds(draft.answer, a)} or identifiers(self.sub_question)
        return answering.AboutWhatIsAsked().check(replace(draft, question=" ".join(sorted(about))))


class NamedInSources:
    """A claim gives no name of another source it was shown that the passages of its own
    sentences never write: a look-alike's sentence given to another look-alike ("Both B and
    C …" from A's document) says what no source says."""

    name = "named in its sources"

    def check(self, draft: Draft) -> Finding | None:
        own = set().union(
            *(name_words(f"{s.passage.label}\n{s.passage.text}") for s in draft.support)
        )
        others = set().union(*(name_words(p.document or p.memory) for p in draft.passages)) - own
        unsaid = [w for w in CAPITALIZED.findall(draft.answer) if name_words(w) & others]
        if not unsaid:
            return None
        return Finding(self.name, f"its sources do not name {', '.join(unsaid)}")


class SaidBySentences:
    """Most of a claim's words, the question's among them, are its sentences' (as search
    stems them): a figure given of another thing than its sentence gives it of ("the
    deposit is 20 euros" of "Late fee: 20 euros") says words its sentence does not."""

    name = "said by its sentences"

    def check(self, draft: Draft) -> Finding | None:
        terms = {t for t in query_terms(draft.answer) if not t.isdigit()}
        said = set(tokenize("\n".join(s.said for s in draft.support)))
        if len(terms & said) >= answering.ANSWER_OVERLAP * len(terms):
            return None
        return Finding(self.name, f"its sentences do not say {', '.join(sorted(terms - said))}")


def claim_checks(sub_question: str) -> tuple[Check, ...]:
    """The checks of a claim, in order (answering's, with those above for a claim)."""
    return (
        answering.Abstained(),
        answering.QuotesInSources(),
        AboutWhatIsAsked(sub_question),
        NamedInSources(),
        answering.AnswerFromQuotes(),
        SaidBySentences(),
    )


def check_claims(
    claims: list[ClaimReply],
    question: str,
    sub_question: str,
    shown: list[Excerpt],
    run: dict[str, Excerpt],
    rules: Sequence[Check] | None = None,
) -> tuple[list[Claim], list[str]]:
    """The claims that hold, each with its sentences and their excerpts, and the rest as
    words for the report (the claim and why). `shown` are the excerpts the model was given
    for `sub_question`; `run` every excerpt of the run, by id (what a claim may cite)."""
    rules = claim_checks(sub_question) if rules is None else rules
    kept: list[Claim] = []
    dropped: list[str] = []
    for claim in map(_cited_inline, claims):
        cited = [run.get(_id(s)) for s in claim.sources]
        failed = [s for s, e in zip(claim.sources, cited, strict=True) if e is None]
        excerpts = {e.id: e for e in [*shown, *(e for e in cited if e is not None)]}
        passages = [_passage(e) for e in excerpts.values()]
        first = next((_passage(e) for e in cited if e is not None), None)
        draft = Draft(
            question=f"{sub_question}\n{question}",
            answer=claim.text,
            quotes=[(first.number if first else 0, q) for q in claim.quotes],
            passages=passages,
            support=[Support(first, q) for q in claim.quotes] if first else [],
        )
        held = _failing(draft, rules)
        if isinstance(held, str):
            bad = f"cited {', '.join(failed)}: not an excerpt of this run; " if failed else ""
            dropped.append(f"{claim.text} ({bad}{held})")
            continue
        quotes = [Quote(source=f"E{s.passage.number}", sentence=s.sentence) for s in held.support]
        sources = [excerpts[i] for i in dict.fromkeys(q.source for q in quotes)]
        kept.append(Claim(text=claim.text.strip(), sources=sources, quotes=quotes))
        if failed:
            dropped.append(f"a citation of “{claim.text}”: {', '.join(failed)} (not found)")
    return kept, dropped


def _failing(draft: Draft, rules: Sequence[Check]) -> Draft | str:
    """`draft` through `rules`, repaired where one repairs it; why it fails, if it does (an
    answer only the closest sentence supports is no claim)."""
    for rule in rules:
        finding = rule.check(draft)
        if finding is None:
            continue
        if finding.repaired is None or finding.repaired.from_quote:
            return finding.why or rule.name
        draft = finding.repaired
    return draft if draft.support else "no sentence of its sources says it"


def _passage(excerpt: Excerpt) -> Passage:
    number = int(excerpt.id[1:]) if excerpt.id[1:].isdigit() else 0
    return Passage(number, excerpt.path, excerpt.document, excerpt.label, excerpt.text)


def _id(cited: str) -> str:
    found = EXCERPT_ID.match(cited.strip())
    return f"E{found.group(1)}" if found else cited.strip()


def _cited_inline(claim: ClaimReply) -> ClaimReply:
    """A small model's habits: ids written into the text ("… 12 days [E2].") or several
    in one string ("E1, E3"): the text without them, each id a source of its own."""
    inline = [i for found in INLINE_ID.findall(claim.text) for i in re.split(r"[,;\s]+", found)]
    listed = [i for cited in claim.sources for i in re.split(r"[,;]\s*|\s+(?=E\d)", cited)]
    text = INLINE_ID.sub("", claim.text).strip()
    return claim.model_copy(update={"text": text or claim.text, "sources": [*listed, *inline]})
