"""What a fact claims, read without a model: who it is about and which of their
single-valued properties (home, workplace, a favourite, a pet) it sets.

A small model asked to reconcile "The user moved to Braga." with five neighbours
replaced all five, or none; it never saw that "lives in Porto" is the same property.
Two statements about the same subject and property, with different values, are an
update; one that says the property no longer holds is a retraction. Reconciliation
uses these as proposals beside the model's decisions (`learn.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FIRST_PERSON = [
    (re.compile(r"^(i'm|i am)\b", re.I), "the user is"),
    (re.compile(r"^i've\b", re.I), "the user has"),
    (re.compile(r"^i\b", re.I), "the user"),
    (re.compile(r"\bmy\b", re.I), "the user's"),
]
_NEGATION = re.compile(r"\b(no longer|not|never|anymore|any more)\b|n't\b", re.I)
# Words that say when or how surely, not what: "I now work…", "is still a chef".
_FILLER = re.compile(
    r"\b(now|still|actually|currently|recently|also|just|really|finally|these days|"
    r"nowadays|last (week|weekend|month|year)|this (week|month|year))\b",
    re.I,
)
_AUXILIARY = re.compile(r"\b(do|does|did)\b", re.I)  # "does not live": what is left of it
_ARTICLES = {"a", "an", "the", "called", "named", "some", "my", "his", "her", "their", "new"}
# Single-valued properties, by the verbs that state them.
_HOME = r"live|lives|lived|living|moved|moves|relocated|resides|reside"
_WORK = r"work|works|worked|working|employed"
_HAVE = r"has|have|had|owns|own|owned|adopted|got"
_BE = r"is|are|was|were"
_VERB = re.compile(rf"\b(?:({_HOME})|({_WORK})|({_HAVE})|({_BE}))\b", re.I)
_PLACE = re.compile(r"\bin [A-Z][\w-]+")  # "a chef in Lisbon": where they are
_EMPLOYER = re.compile(r"\b(at|for|in)\b", re.I)
_WORD = re.compile(r"[\w'-]+")


@dataclass(frozen=True)
class Claim:
    subject: frozenset[str]  # its words, lowercased ("user", "brother", "tomas")
    names: frozenset[str]  # those that are proper names ("tomas")
    properties: frozenset[str]  # "home", "work", "has:cat", "be:chef", "be"
    negated: bool

    def same_subject(self, other: Claim) -> bool:
        """The same words, or one adds only a name ("the user's brother" and "the user's
        brother Tomas"); "the user" is not "the user's brother"."""
        small, large = sorted((self.subject, other.subject), key=len)
        extra = large - small
        return small <= large and extra <= (self.names | other.names)

    def shared(self, other: Claim) -> set[str]:
        """The properties both set, when they are about the same subject."""
        return set(self.properties & other.properties) if self.same_subject(other) else set()


def claim(statement: str) -> Claim | None:
    """The subject and properties of `statement`, or None when it sets none that this
    knows to be single-valued ("The user likes jazz." may add a second taste)."""
    text = " ".join(statement.strip().rstrip(".!").split())
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    negated = bool(_NEGATION.search(text))
    text = _NEGATION.sub(" ", text)
    text = " ".join(_FILLER.sub(" ", _AUXILIARY.sub(" ", text) if negated else text).split())
    verb = _VERB.search(text)
    if verb is None:
        return None
    subject_text, rest = text[: verb.start()], text[verb.end() :]
    words = [w.lower().removesuffix("'s") for w in _WORD.findall(subject_text)]
    subject = frozenset(w for w in words if w not in _ARTICLES)
    if not subject:
        return None
    names = frozenset(
        w.lower() for w in _WORD.findall(subject_text) if w[:1].isupper() and w.lower() != "the"
    )
    properties = _properties(verb, subject_text, words, names, rest)
    return Claim(subject, names, frozenset(properties), negated) if properties else None


def _properties(
    verb: re.Match[str], subject_text: str, words: list[str], names: frozenset[str], rest: str
) -> set[str]:
    """The properties a statement sets, from its verb and what follows it."""
    home, work, have, _be = verb.groups()
    properties: set[str] = set()
    if home:
        properties.add("home")
    elif work:  # the role and the employer are two properties: "as a nurse", "at Braga hospital"
        properties |= {"work:as"} if re.search(r"\bas\b", rest, re.I) else set()
        properties |= {"work:at"} if _EMPLOYER.search(rest) else set()
        properties |= set() if properties else {"work"}
    elif have:
        head = _head(rest)
        if head:
            properties.add(f"has:{head}")
    elif "'s " in subject_text.lower() and _is_attribute(words, names):
        properties.add("be")  # "the user's favourite book is …": one value at a time
    else:
        head = _head(rest)
        if head:
            properties.add(f"be:{head}")
    if not (home or work or have) and _PLACE.search(rest):
        properties.add("home")  # "is a chef in Lisbon" says where, as "moved to Paris" does
    return properties


def _head(rest: str) -> str | None:
    """The first word of the object that is not an article ("a cat called Pimenta" → cat)."""
    for word in map(str, _WORD.findall(rest.lower())):
        if word not in _ARTICLES and word not in {"to", "in", "at", "as", "with", "for"}:
            return word
    return None


def _is_attribute(words: list[str], names: frozenset[str]) -> bool:
    """ "the user's favourite book", "Anne's birthday": a property of someone, not someone
    ("the user's brother Tomas")."""
    return bool(words) and words[-1] not in names | PEOPLE


PEOPLE = frozenset(
    {"user", "brother", "sister", "mother", "father", "friend", "wife", "husband", "partner",
     "son", "daughter", "boss", "colleague", "manager", "landlord", "neighbour", "neighbor"}
)  # fmt: skip
