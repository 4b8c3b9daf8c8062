"""The scripted server's research model: a planner, an integrator and a reviewer.

Deliberately naive where a small model is: the planner plans only the question's first
clause ("…; and at Borealis?" is left to the reviewer to notice), one sub-question per name
it compares, worded as a person would (sub_questions.py); the integrator takes the sentence
of each excerpt about the sub-question's name that shares most words with it, and quotes it;
the reviewer asks again for a name of the question that no sub-question asked about. The
"made_up_source" fault adds a claim citing a file that does not exist, as a model inventing
a citation would; the "other_figure" fault answers with the first figure of the excerpt,
whatever it is the figure of, as the 1.5B model answered a backup interval with the file
size limit above it; the "other_name" fault gives each claim to another name of the question
than the one its excerpt is about; the "repeated" fault gives each claim three times, as the
1.5B model repeated one in a reply.
"""

from __future__ import annotations

import re
from typing import Any

from gam_desktop.engine.retrieval.words import query_terms, tokenize
from gam_desktop.engine.textutil import keywords
from gam_desktop.selfcheck.sub_questions import ABOUT, NOT_NAMES, asked, names, per_name

EXCERPT = re.compile(  # "[E3] (from <label>)", then its text up to the next excerpt
    r"^\[(E\d+)\] \(from ([^\n]*)\)\n(.*?)(?=\n\n\[E\d+\] \(from |\Z)", re.M | re.S
)


def _field(user: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", user, re.MULTILINE)
    return found.group(1).strip() if found else ""


def topic(clause: str) -> str:
    """The words of a clause that are not its names: "escalation time"."""
    clause = clause.removeprefix(ABOUT)  # the planner's own words are no topic
    named = {w.lower() for n in names(clause) for w in n.split()}
    words = [w for w in keywords(clause, 8) if w not in named and w not in NOT_NAMES]
    return " ".join(words) or "policy"


def plan(user: str) -> dict[str, Any]:
    question = _field(user, "QUESTION")
    clause = re.split(r";|\bAlso\b", question)[0]
    found = names(clause)
    if len(found) >= 2:
        subject = topic(clause).split()  # searched for, whatever the wording asks
        subs = [
            {"question": sub, "keywords": [name, *subject], "folders": ["/"]}
            for name, sub in zip(found, per_name(clause, found), strict=True)
        ]
    else:
        subs = [{"question": asked(clause), "keywords": found, "folders": ["/"]}]
    return {"sub_questions": subs}


def integrate_made_up(user: str) -> dict[str, Any]:
    return integrate(user, made_up=True)


def integrate_other_figure(user: str) -> dict[str, Any]:
    for excerpt_id, _document, text in EXCERPT.findall(user):
        for line in text.splitlines():
            figure = re.search(r"(?<![\w.])\d{2,}(?![\w.])(?:\s*[A-Za-z]+)?", line)
            if figure is not None:
                claim = f"The {topic(_field(user, 'SUB-QUESTION'))} is {figure.group()}."
                return {"claims": [{"text": claim, "sources": [excerpt_id], "quotes": [line]}]}
    return {"claims": []}


def integrate_repeated(user: str) -> dict[str, Any]:
    return {"claims": [claim for claim in integrate(user)["claims"] for _ in range(3)]}


def integrate_other_name(user: str) -> dict[str, Any]:
    """Each claim of `integrate` given to another name of the question than its own."""
    others = [
        n for n in names(_field(user, "QUESTION")) if n not in names(_field(user, "SUB-QUESTION"))
    ]
    claims = integrate(user)["claims"]
    for claim in claims:
        claim["text"] = (
            f"{others[0] if others else 'Someone else'}: {claim['text'].split(': ', 1)[-1]}"
        )
    return {"claims": claims}


def integrate(user: str, made_up: bool = False) -> dict[str, Any]:
    sub = _field(user, "SUB-QUESTION")
    wanted = names(sub)
    named = set(tokenize(" ".join(wanted)))
    terms = set(query_terms(sub.removeprefix(ABOUT))) - named  # not the planner's own words
    if not terms:  # "What do the notes say about BERT?": the question says about what
        terms = set(query_terms(topic(_field(user, "QUESTION")))) - named
    found = []
    for excerpt_id, document, text in EXCERPT.findall(user):
        about = f"{document} {text}".lower()
        name = next((n for n in wanted if n.lower() in about or n.split()[0].lower() in about), "")
        if wanted and not name:
            continue
        sentences = [
            s.strip()
            for s in re.split(r"(?<=[.!?])\s+|\n+", text)
            if s.strip() and not s.lstrip().startswith("#")  # not the heading the window kept
        ]
        # the sentence sharing most words with the sub-question; one with a figure on a tie
        scored = [(len(terms & set(tokenize(s))), bool(re.search(r"\d", s)), s) for s in sentences]
        best = max(scored, default=(0, False, ""))
        if best[0] == 0:
            continue
        claim = f"{name}: {best[2]}" if name else best[2]
        found.append((best[:2], {"text": claim, "sources": [excerpt_id], "quotes": [best[2]]}))
    found.sort(key=lambda pair: pair[0], reverse=True)  # the two best, best first
    claims = [claim for _, claim in found[:2]]
    if made_up:
        claims.append(
            {"text": "The policy was last reviewed in spring.", "sources": ["notes/invented.md"]}
        )
    return {"claims": claims}


def reflect(user: str) -> dict[str, Any]:
    question = _field(user, "QUESTION")
    so_far = " ".join(re.findall(r"^Sub-question: (.*)$", user, re.MULTILINE)).lower()
    missing = [n for n in names(question) if n.lower() not in so_far]
    if not missing:
        return {"enough": True, "new_requests": []}
    clause = re.split(r";|\bAlso\b", question)[0]
    return {"enough": False, "new_requests": per_name(clause, missing)}
