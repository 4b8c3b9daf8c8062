"""The scripted research planner's sub-questions, worded as a person writes them.

One sub-question per name a question compares is the question itself with the names it
joins ("BERT and GPT-2", "Acme, Borealis or Cobalt") replaced by one of them, its verb
agreeing with one name: "When were BERT and GPT-2 released?" asks "When was BERT
released?". A request ("Compare the escalation rules of Acme Corp and Borealis Systems")
becomes a question about its object: "What do the notes say about the escalation rules of
Acme Corp?". Where the names are not one joined group, or a question compares them with one
another ("Which of BERT and GPT-2 is older?"), a question about each name alone is asked:
"What do the notes say about BERT?", its topic left to the search keywords.

General by construction: only grammar words (question words, auxiliaries, joining words)
are known here, never the words of a subject.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

# a capitalized run, with the version that follows it ("Orbit 3.1", "GPT 4.0"), or a version
NAME = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?:\s+\d+(?:\.\d+)+\b)?|\b\d+\.\d+\b")
# words a capitalized run may start with that name nothing: a question's or request's first
NOT_NAMES = {"what", "which", "how", "compare", "who", "when", "where", "why", "is", "are",
             "was", "were", "does", "do", "did", "list", "describe", "explain", "summarize",
             "tell", "show", "give", "and", "the", "at", "for", "of", "in", "i"}  # fmt: skip
# the words a question opens with (a request opens with its verb instead)
OPENERS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is",
           "are", "was", "were", "do", "does", "did", "can", "could", "will", "would",
           "should", "shall", "has", "have", "had", "may", "might", "must"}  # fmt: skip
SINGULAR = {"are": "is", "were": "was", "do": "does", "have": "has"}  # of one name, not two
# after these a joined group is the subject of the verb that follows it ("how A and B work")
SUBJECT_AFTER = {"how", "why", "when", "where", "whether", "that", "if", "what"}
# verbs that stay as they are with one name ("how A and B can …", "… escalated")
UNCHANGED = {"can", "could", "will", "would", "should", "shall", "may", "might", "must",
             "did", "was", "had", "is", "has", "does"}  # fmt: skip
JOINING = re.compile(r"(?:\s*,\s*|\s+)(?:(?:and|or|&|vs\.?|versus)\s+)?", re.I)
BEFORE_GROUP = re.compile(r"\b(?:both|either)\s+$", re.I)  # "both A and B"
COMPARING = re.compile(
    r"(?:\b(?:between|among|amongst)|\b(?:which|who|whom)(?:\s+one)?\s+of)\s*$", re.I
)
ABOUT = "What do the notes say about "


class Named(NamedTuple):
    start: int
    end: int
    name: str


def occurrences(text: str) -> list[Named]:
    """Where `text` gives a name: capitalized runs (without a question's first word),
    versions."""
    found = []
    for match in NAME.finditer(text):
        words = list(re.finditer(r"\S+", match.group()))
        while words and words[0].group().lower() in NOT_NAMES:
            words.pop(0)
        if words:
            name = " ".join(w.group() for w in words)
            found.append(Named(match.start() + words[0].start(), match.end(), name))
    return found


def names(text: str) -> list[str]:
    """The names a text gives: capitalized runs (not a question's first word), versions."""
    return list(dict.fromkeys(n.name for n in occurrences(text)))


def group(clause: str) -> tuple[int, int] | None:
    """Where the clause joins all its names into one group ("A, B and C"): None when they
    stand apart ("A … compared with B") or the clause compares them with one another."""
    found = occurrences(clause)
    if not found:
        return None
    for before, after in itertools.pairwise(found):
        if not JOINING.fullmatch(clause[before.end : after.start]):
            return None
    start = found[0].start
    if COMPARING.search(clause[:start]):
        return None
    both = BEFORE_GROUP.search(clause[:start])
    end = found[-1].end
    end += clause[end : end + 1] == "."  # the last name's abbreviation ("Wren Inc.")
    return (both.start() if both else start), end


def third_person(verb: str) -> str:
    """ "handle" → "handles", "go" → "goes", "apply" → "applies", "are" → "is"."""
    lower = verb.lower()
    if lower in SINGULAR:
        return SINGULAR[lower]
    if lower in UNCHANGED or lower.endswith(("ed", "s")) or not lower.isalpha():
        return verb
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return verb[:-1] + "ies"
    if lower.endswith(("x", "z", "ch", "sh", "o")):
        return verb + "es"
    return verb + "s"


def for_one(clause: str, span: tuple[int, int], name: str) -> str:
    """The clause asking of `name` alone where it asked of the group at `span`: the verb
    before the group (asked: "were A and B …") or after it ("how A and B handle …") made
    to agree, and what follows the group's clause (", and say why") left out."""
    before, after = clause[: span[0]], clause[span[1] :].split(",")[0]
    words = before.split()
    if words and words[-1].lower() in SINGULAR:
        words[-1] = SINGULAR[words[-1].lower()]
    head = (" ".join(words) + " ") if words else ""
    tail = after.split(maxsplit=1)
    if tail and (not words or words[-1].lower() in SUBJECT_AFTER) and tail[0].islower():
        tail[0] = third_person(tail[0])
    return asked(f"{head}{name} {' '.join(tail)}")


def asked(clause: str) -> str:
    """The clause as a question: a request ("Compare …", "List …") asks what the notes say
    about its object; a question keeps its words, with its question mark."""
    text = " ".join(clause.split()).strip(" ?.!,")
    first, _, rest = text.partition(" ")
    if first.lower() not in OPENERS and not any(n.start == 0 for n in occurrences(text)):
        rest = re.sub(r"^(?:me|us)\s+(?:about\s+)?", "", rest, flags=re.I)
        text = ABOUT + rest if rest else text
    return text[:1].upper() + text[1:] + "?"


def per_name(clause: str, wanted: list[str]) -> list[str]:
    """A sub-question of the clause for each of `wanted` (names of the question)."""
    span = group(clause)
    if span is None:
        return [f"{ABOUT}{name}?" for name in wanted]
    return [for_one(clause, span, name) for name in wanted]
