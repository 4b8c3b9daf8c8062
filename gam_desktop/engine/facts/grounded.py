"""A fact says what the user's words say, not what a small model adds to them.

Many of the facts a 1.5B model learns are not the user's: a name from the prompt's
example ("The user's sister Anne fixed the bike" for "Spokewise fixed the bike"), an
inference ("which implies she is interested in…"), another fact restated under a turn that
said nothing of it, and our own prompt's markers copied into the statement ("(subject: the
user)", "(N1)"). A statement is kept only when it is grounded in its sources (the turn's
own words, and for an update the fact it replaces): every name and number it writes is
written there, and at most one of its words is not, unless most are.
"""

from __future__ import annotations

import re

from gam_desktop.engine.facts.matching import terms

COVERED = 0.6  # the share of a statement's words its sources must write (one may be new)
# Our prompts' markers, which a small model copies into a statement.
_MARKERS = re.compile(r"\s*\((?:subject:[^)]*|[NF]\d{1,2})\)", re.IGNORECASE)
_NAME_OR_NUMBER = re.compile(r"(?<![\w'’.-])([A-Z][\w'’-]*|\d[\w.:/-]*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+)\W*$")
_WORD = re.compile(r"[^\W_]+")


def without_markers(statement: str) -> str:
    return " ".join(_MARKERS.sub("", statement).split())


def names_and_numbers(text: str) -> set[str]:
    """The words `text` writes with a capital where no sentence starts, and its numbers,
    lowercased ("Anne", "Spokewise", "9:45"); "I" is no name."""
    found = set()
    for match in _NAME_OR_NUMBER.finditer(text):
        word = re.sub(r"['’]s?$", "", match.group(1)).rstrip(".,:/-")
        if word and (word[0].isdigit() or not _SENTENCE_START.search(text[: match.start()])):
            found.add(word.lower())
    return found - {"i"}


def grounded(statement: str, sources: str) -> bool:
    """Whether `sources` write every name and number of `statement`, and all of its words
    but one (or most of them)."""
    written = set(_WORD.findall(sources.lower()))
    if any(not set(_WORD.findall(name)) <= written for name in names_and_numbers(statement)):
        return False
    said = terms(statement)
    new = said - terms(sources)
    return len(new) <= 1 or len(new) <= (1 - COVERED) * len(said)
