"""Checks of a claim against the other documents the run read: the look-alikes it may be
about instead of its own.

The 1.5B model wrote "Both Brindlewave and Osprine pay an engineer $150 …" from the
Tallowmere policy, and "Lumenvault 3.0 changed the retention to 30 days" from the first
release's notes, which only set it. The first names only other documents than its source;
the second tells of a change in a document with no earlier one in the memory to change
from, whose statement of the value says no change. Both are dropped, with the reason, for
the report's list of what was left out.
"""

from __future__ import annotations

import re

from gam_desktop.engine.ask.evidence import figures
from gam_desktop.engine.ask.paragraphs import statements
from gam_desktop.engine.research.models import Claim
from gam_desktop.engine.research.steps import CHANGED, NAME_WORD, UNCHANGED, name_words

VERSION = re.compile(r"^v?\d+(?:\.\d+)+$")
# How a statement tells of a change: "(was 60)", "up from 30 days", "now 15 minutes".
CHANGE_SAID = re.compile(
    rf"{CHANGED.pattern}|\b(?:from|was|were|previously|formerly|now|new|up|down|instead)\b",
    re.IGNORECASE,
)


def checked_against_family(
    claims: list[Claim], documents: set[str]
) -> tuple[list[Claim], list[str]]:
    """The claims that hold against the run's other `documents`, and, as words for the
    report, those that do not: naming only other documents than their sources, or telling
    of a change in the first of a family of versions that says none."""
    kept: list[Claim] = []
    dropped: list[str] = []
    for claim in claims:
        own = {s.document for s in claim.sources if s.document}
        others = documents - own
        if own and others and _names_only(claim.text, others, own):
            named = ", ".join(sorted(d for d in others if _names_any(claim.text, {d}, own)))
            dropped.append(f"{claim.text} (it names {named}, not its source)")
        elif own and _change_in_a_first(claim, own, documents):
            dropped.append(f"{claim.text} (its source is the first release: nothing changed)")
        else:
            kept.append(claim)
    return kept, dropped


def _names_only(text: str, others: set[str], own: set[str]) -> bool:
    """Whether `text` names one of `others` and none of `own`, each by a word of its name
    the other side's names lack ("brindlewave", "3.2", "varga")."""
    return _names_any(text, others, own) and not _names_any(text, own, others)


def _names_any(text: str, documents: set[str], rivals: set[str]) -> bool:
    said = set(NAME_WORD.findall(text.casefold()))
    shared = set().union(*map(name_words, rivals)) if rivals else set()
    return any(said & (name_words(d) - shared) for d in documents)


def _change_in_a_first(claim: Claim, own: set[str], documents: set[str]) -> bool:
    """Whether `claim` tells of a change ("changed the retention to 30 days") in sources
    that are all the earliest version of their family among `documents`, and every
    statement of theirs giving its figures says no change."""
    if not CHANGED.search(UNCHANGED.sub(" ", claim.text)):
        return False
    if not all(_first_of_family(document, documents) for document in own):
        return False
    found = figures(claim.text)
    stating = [
        item
        for source in claim.sources
        for heading, item in statements(source.text)
        if found & figures(item)
    ]
    return bool(stating) and not any(CHANGE_SAID.search(item) for item in stating)


def _first_of_family(document: str, documents: set[str]) -> bool:
    """Whether `document` has a version in its name lower than every other document of
    its family (the same name but the version) in `documents`, and there is one."""
    version = _version(document)
    if version is None:
        return False
    family = name_words(document) - {w for w in name_words(document) if VERSION.match(w)}
    earlier = []
    for other in documents - {document}:
        theirs = _version(other)
        words = name_words(other)
        if theirs is not None and words - {w for w in words if VERSION.match(w)} == family:
            earlier.append(theirs < version)
    return bool(earlier) and not any(earlier)


def _version(document: str) -> tuple[int, ...] | None:
    found = [w for w in name_words(document) if VERSION.match(w)]
    if len(found) != 1:
        return None
    return tuple(int(part) for part in found[0].lstrip("v").split("."))
