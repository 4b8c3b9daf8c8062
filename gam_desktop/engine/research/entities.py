"""The things a question lists ("at Brindlewave, Osprine, Quillfern and Tallowmere", "the
releases 3.0, 3.1 and 4.0"), each made a sub-question of its own.

Why: a small model plans "compare X at A, B, C and D" as one sub-question, whose search
finds the look-alike documents of one or two of them and whose integration answers for
all four with one of their numbers. One sub-question per listed name searches each
one's own documents (`evidence.gather` keeps to the memories about the names a question
gives) and asks the integrator about that one alone. Done in code, not left to the
planner, so it holds with any model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gam_desktop.engine.ask.evidence import mentions
from gam_desktop.engine.research.models import SubQuestion

_WORD = r"[A-Z][\w'’-]*[A-Za-z0-9]"
_VERSION = r"v?\d+(?:\.\d+)+"
_ITEM = rf"(?:{_WORD}(?:[ \t]+{_WORD})*(?:[ \t]+{_VERSION})?|{_VERSION})"
_SEPARATOR = r"(?:[ \t]*,[ \t]*(?:and[ \t]+)?|[ \t]+(?:and|through|to)[ \t]+)"
LISTED = re.compile(rf"(?<!\w)(?<!\d\.){_ITEM}(?:{_SEPARATOR}{_ITEM})+(?!\w|\.\d)")
VERSION_ONLY = re.compile(rf"{_VERSION}")
PRODUCT_BEFORE = re.compile(rf"({_WORD})(?:[ \t]+[a-z]+)?[ \t]*$")  # "Lumenvault releases"
LEADING_VERB = re.compile(r"^(?:compare|contrast)\s+", re.IGNORECASE)
# "How did the backup interval change across …": asked of one version, a value, not a
# change. Matched on the words before the list, greedily: the last verb is the change
HOW_IT_CHANGED = re.compile(
    r"^\s*how (?:did|has|have|does|do) (?P<what>.+) "
    r"(?:chang|gr[eo]w|shr[iu]nk|evolv|develop|increas|decreas)\w*\b",
    re.IGNORECASE,
)
MAX_ITEMS = 6


@dataclass(frozen=True)
class NamedList:
    start: int
    end: int
    items: list[str]  # as the question spells them ("Juniper and Ash", "3.1")
    names: list[str]  # what each is called alone ("Lumenvault 3.1"): its search keyword


def named_list(question: str) -> NamedList | None:
    """The longest list of two or more names or versions in `question`, if any."""
    best = max(LISTED.finditer(question), key=lambda m: len(m.group()), default=None)
    if best is None:
        return None
    items = _split(best.group())
    if not 2 <= len(set(items)) <= MAX_ITEMS:
        return None
    product = _product(question[: best.start()], items)
    names = [
        f"{product} {item}" if product and VERSION_ONLY.fullmatch(item) else item for item in items
    ]
    return NamedList(best.start(), best.end(), items, names)


def split_by_entity(question: str, subs: list[SubQuestion]) -> list[SubQuestion]:
    """The plan with one sub-question per name the question lists, ahead of the planner's
    sub-questions that are about none of them; unchanged when the question lists none or
    the planner already asked about each one alone."""
    listed = named_list(question)
    if listed is None:
        return subs
    about = [[n for n in listed.names if _said(n, sub.question)] for sub in subs]
    if all(any(len(a) == 1 and a[0] == name for a in about) for name in listed.names):
        return subs
    own = [
        SubQuestion(
            question=_alone(question, listed, item, name),
            keywords=[_keyword(name)],
        )
        for item, name in zip(listed.items, listed.names, strict=True)
    ]
    others = [sub for sub, names in zip(subs, about, strict=True) if not names]
    return [*own, *others]


def _split(span: str) -> list[str]:
    """ "A, B and C" → A, B, C; with an Oxford comma ("A, B and C, and D") an "and" without
    a comma belongs to a name."""
    if re.search(r",[ \t]*and[ \t]", span):
        parts = re.split(r"[ \t]*,[ \t]*(?:and[ \t]+)?", span)
    else:
        parts = re.split(r"[ \t]*,[ \t]*|[ \t]+(?:and|through|to)[ \t]+", span)
    return [p.strip() for p in parts if p.strip()]


def _product(before: str, items: list[str]) -> str:
    """What bare versions are versions of: the name one of the items carries ("Lumenvault
    3.0 through 3.1"), or the name just before the list ("Lumenvault releases 3.0, …")."""
    for item in items:
        version = VERSION_ONLY.search(item)
        if version and version.start() > 0:
            return item[: version.start()].strip()
    found = PRODUCT_BEFORE.search(before)
    return found.group(1) if found else ""


def _alone(question: str, listed: NamedList, item: str, name: str) -> str:
    """The question about `item` alone: the list replaced by it ("Compare" dropped); a
    question of how something changed across the list asks what it was at `item` ("How
    did it change in 3.0?" got "it changed" from small models, and no figure)."""
    changed = HOW_IT_CHANGED.match(question[: listed.start])
    if changed:
        rest = question[listed.end :].strip(" ?.")
        return f"What was {changed.group('what')} in {name}{' ' + rest if rest else ''}?"
    before = question[: listed.start]
    if VERSION_ONLY.fullmatch(item) and not PRODUCT_BEFORE.search(before):
        item = name  # "from 3.1" alone says of what
    text = before + item + question[listed.end :]
    text = LEADING_VERB.sub("", text.strip())
    return text[:1].upper() + text[1:]


def _keyword(name: str) -> str:
    """What to grep for: a version alone ("3.1"; the product's name is in every look-alike),
    else the name."""
    version = VERSION_ONLY.search(name)
    return version.group() if version else name


def _said(name: str, text: str) -> bool:
    return mentions(text, [_keyword(name).lower()]) > 0
