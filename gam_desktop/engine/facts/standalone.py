"""A fact says what it is about on its own.

A small model splits "Our book club meets at a bookshop called Larkspur; they stay open
late on Wednesdays." into two facts, and the second, "They stay open late on Wednesdays.",
no longer says who stays open: read later beside other facts it answers a question about
anyone's hours, and when the club changes venue nothing ties it to the one replaced. A
statement that opens with a pronoun (its referent left behind in the message) is therefore
learned as the user's own sentence that holds it, with the sentence before when that one
does not say what its pronoun stands for either ("More room, and they open late."); the
turn's other facts it says whole are not learned beside it (a later change would replace
one of the two and leave the other current). The same holds for a clause the model copied
out of the middle of the user's sentence: "the pick is a Corliss 7." cut from "I'm buying
a touring bike; the pick is a Corliss 7." no longer says what the pick is for, and "Night
Ferry was too long." cut from "The novel is out as Paper Moons: Night Ferry was too long."
reads as if Night Ferry were still the title.
Language only: which words are pronouns and where a clause starts, never a subject.
"""

from __future__ import annotations

import re

from gam_desktop.engine.facts.grounded import names_and_numbers
from gam_desktop.engine.facts.matching import terms

# A third-person pronoun or demonstrative opening a statement: its referent is elsewhere.
_OPENS_WITH_PRONOUN = re.compile(
    r"^\W*(?:they|them|their|it|its|he|she|his|her|this|that|these|those)\b(?!-)",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:they|them|their|it|its|he|she|his|her)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HELD = 0.6  # the share of a statement's words a sentence must write to be where it is said
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_CLAUSE_MARK = re.compile(r"(?:[,;:\u2013\u2014]|\s-)\s*$")  # what a clause after the first follows
_LONGEST = 40  # words: a longer sentence holds too much to be one fact


def opens_with_pronoun(statement: str) -> bool:
    return bool(_OPENS_WITH_PRONOUN.match(statement))


def standalone(statement: str, told: str) -> str:
    """`statement`, or, when it opens with a pronoun or is a clause copied from the middle
    of a sentence of `told` (the user's words), that sentence, with the sentence before when
    that one opens with a pronoun too or holds one and names nothing; `statement` when no
    sentence says most of its words."""
    sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(told.strip()) if s.strip()]
    cut = next((i for i, s in enumerate(sentences) if _clause_of(statement, s)), None)
    if cut is not None:
        return _with_referent(sentences, cut)
    if not opens_with_pronoun(statement):
        return statement
    words = terms(statement)
    if not words or not sentences:
        return statement
    shared = [len(words & terms(s)) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: shared[i])
    if shared[best] < _HELD * len(words):
        return statement
    return _with_referent(sentences, best)


def _with_referent(sentences: list[str], best: int) -> str:
    said = sentences[best]
    if best > 0 and (opens_with_pronoun(said) or _unanchored(said)):
        said = f"{sentences[best - 1]} {said}"
    return said


def _clause_of(statement: str, sentence: str) -> bool:
    """Whether `statement` is a later clause of `sentence` word for word: it starts after a
    comma, semicolon, colon or dash of it, not where the sentence starts."""
    words = _WORDS.findall(statement.lower())
    low = sentence.lower()
    if not words or len(_WORDS.findall(low)) > _LONGEST:
        return False
    return any(
        _CLAUSE_MARK.search(low[: match.start()])
        and _WORDS.findall(low[match.start() :])[: len(words)] == words
        for match in _WORDS.finditer(low)
    )


def said_by(statement: str, others: list[str]) -> bool:
    """Whether another of `others` (the turn's facts) writes every word of `statement`:
    learned beside it, a later change would replace one and leave the other current."""
    words = terms(statement)
    return bool(words) and any(words <= terms(o) and o != statement for o in others)


def _unanchored(sentence: str) -> bool:
    """A pronoun, and no name or number it could stand for."""
    return bool(_PRONOUN.search(sentence)) and not names_and_numbers(sentence)
