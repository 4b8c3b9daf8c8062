"""A note's sentences checked against the passage they summarize, without the LLM.

A small model turns "a reservation is not required" into "requires a reservation": the
same words, the opposite meaning, and a reader trusts the note. So each sentence of a note
is matched to the passage sentences that share most of its content words; when every one
of them says those words with the opposite polarity (one of the two negates them, the other
does not), the note's sentence is replaced by the closest passage sentence. A wrong match costs only
style: the sentence put in is the document's, which is true by definition.

Negation is the one piece of a language this needs (`NEGATIONS` below, English).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gam_desktop.engine.ingest.context import prose_sentences
from gam_desktop.engine.textutil import STOPWORDS, stem

# The words that negate what a clause says (English); "n't" ends a word of its own.
NEGATIONS = frozenset("not no never none nothing nobody neither nor cannot without".split())
TOKEN = re.compile(r"[^\W_]+(?:n['’]t)?", re.UNICODE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
MIN_SHARED = 4  # content words a note sentence and its passage sentence share, at least
MIN_COVERED = 0.7  # of the note sentence's words of the passage's prose, in one sentence
SCOPE = 3  # words after a negation that it negates ("cannot be enabled")


@dataclass(frozen=True)
class Inversion:
    """A note sentence whose closest passage sentence says it with the opposite polarity."""

    said: str  # the note's sentence
    source: str  # the passage's sentence that replaces it


def is_negation(token: str) -> bool:
    token = token.lower()
    return token in NEGATIONS or token.endswith(("n't", "n’t"))


def tokens(sentence: str) -> list[str]:
    return TOKEN.findall(sentence)


def terms(sentence: str) -> set[str]:
    """The content words of a sentence, stemmed ("requires" is "required"), numbers among
    them ("3 minutes"), negations and stopwords left out."""
    words = (t.lower() for t in tokens(sentence) if not is_negation(t))
    return {stem(w) for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def negated(sentence: str, shared: set[str]) -> tuple[set[str], set[str]]:
    """The `shared` words that `sentence` says only under a negation: each negation scopes
    the first shared word in the few words after it ("is not required", "no reservation";
    "not without a permit" is two, and cancels). Returned: the words negated every time
    they are said, and the words never negated. A negation of something else ("the alarm
    never rings; it only blinks", "a no-show at the meeting") leaves the shared words be."""
    raw = tokens(sentence)
    words = [stem(w.lower()) for w in raw]
    scopes = [0] * len(words)  # how many negations scope each word
    for i, token in enumerate(raw):
        if is_negation(token):
            after = range(i + 1, min(i + 1 + SCOPE, len(words)))
            scoped = next((j for j in after if words[j] in shared), None)
            if scoped is not None:
                scopes[scoped] += 1
    said: dict[str, list[bool]] = {}
    for word, count in zip(words, scopes, strict=True):
        if word in shared:
            said.setdefault(word, []).append(count % 2 == 1)
    return {word for word, negations in said.items() if all(negations)}, {
        word for word, negations in said.items() if not any(negations)
    }


def disagree(said: str, source: str, shared: set[str]) -> bool:
    """Whether one sentence negates a shared word wherever it says it and the other never
    does ("requires a reservation" against "a reservation is not required")."""
    negated_said, plain_said = negated(said, shared)
    negated_source, plain_source = negated(source, shared)
    return bool(negated_said & plain_source or negated_source & plain_said)


def sentences(text: str) -> list[str]:
    """The sentences of a note's text, as written: each line (a list item) on its own."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [s for line in lines if line for s in SENTENCE_END.split(line) if s]


def inversions(note: str, passage: str) -> list[Inversion]:
    """The sentences of `note` that invert what the passage says: every passage sentence
    that restates it (most of its content words) disagrees with it on a negation."""
    found: list[Inversion] = []
    sources = [(s, terms(s)) for s in prose_sentences(passage)]
    vocabulary = set().union(*(words for _s, words in sources))
    for said in sentences(note):
        own = terms(said) & vocabulary  # a heading's or the title's words are no restating
        close = [
            (len(own & words), source, own & words)
            for source, words in sources
            if len(own & words) >= max(MIN_SHARED, MIN_COVERED * len(own))
        ]
        if close and all(disagree(said, source, shared) for _n, source, shared in close):
            best = max(close, key=lambda match: match[0])[1]
            found.append(Inversion(said=said, source=best))
    return found


def faithful(note: str, passage: str) -> str:
    """`note` with every sentence that inverts its passage sentence replaced by that
    sentence; the note unchanged (spacing included) when none does."""
    found = inversions(note, passage)
    if not found:
        return note
    for inversion in found:  # in place: the note's paragraphs and lists stay
        written = re.compile(r"\s+".join(re.escape(word) for word in inversion.said.split()))
        found_at = written.search(note)
        if found_at:
            note = note[: found_at.start()] + inversion.source + note[found_at.end() :]
    return note
