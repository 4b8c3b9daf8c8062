"""Checks of a claim against the other documents the run read: the look-alikes it may be
about instead of its own.

The 1.5B model wrote "Both Brindlewave and Osprine pay an engineer $150 …" from the
Tallowmere policy, and "Lumenvault 3.0 changed the retention to 30 days" from the first
release's notes, which only set it. The first names documents it does not cite, which its
excerpt never names; the second tells of a change in a document with no earlier one in
the memory to change from, whose statement of the value says no change. Both are
dropped, with the reason, for the report's list of what was left out.
"""

from __future__ import annotations

import re

from gam_desktop.engine.ask.evidence import figures
from gam_desktop.engine.ask.paragraphs import statements
from gam_desktop.engine.research.models import Claim
from gam_desktop.engine.research.steps import (
    CHANGED,
    NAME_WORD,
    UNCHANGED,
    WHICH_CHANGED,
    name_words,
)

VERSION = re.compile(r"^v?\d+(?:\.\d+)+$")
# How a statement tells of a change: "(was 60)", "up from 30 days", "now 15 minutes".
CHANGE_SAID = re.compile(
    rf"{CHANGED.pattern}|\b(?:from|was|were|previously|formerly|now|new|up|down|instead|than|"
    r"compared|earlier|before)\b",
    re.IGNORECASE,
)


def checked_against_family(
    claims: list[Claim], documents: set[str], question: str = ""
) -> tuple[list[Claim], list[str]]:
    """The claims that hold against the run's other `documents`, and, as words for the
    report, those that do not: naming another document that they do not cite and that
    their excerpts never name, or telling of a change in the first of a family of versions
    that says none (asked which ones changed something, every claim tells of a change: the
    first release's "Retention: 30 days" answers nothing)."""
    asked = WHICH_CHANGED.search(question) is not None
    kept: list[Claim] = []
    dropped: list[str] = []
    for claim in claims:
        own = {s.document for s in claim.sources if s.document}
        unsaid = _named_unsaid(claim, own, documents - own)
        if own and unsaid:
            dropped.append(f"{claim.text} (it names {', '.join(unsaid)}, which it does not cite)")
        elif own and _change_in_a_first(claim, own, documents, asked):
            dropped.append(f"{claim.text} (its source is the first release: nothing changed)")
        else:
            kept.append(claim)
    return kept, dropped


def _named_unsaid(claim: Claim, own: set[str], others: set[str]) -> list[str]:
    """The documents of `others` that `claim` names by a word of their name its sources'
    names lack ("brindlewave", "3.2", "varga"), where its excerpts never say that word:
    "Both Brindlewave and Osprine pay $55", citing only the Osprine policy, is a guess;
    "3.0 clients must upgrade to 3.2", from the 4.0 notes saying so, is what they say."""
    said = set(NAME_WORD.findall(claim.text.casefold()))
    shown = set(NAME_WORD.findall(" ".join(s.text for s in claim.sources).casefold()))
    ours = set().union(*map(name_words, own)) if own else set()
    return sorted(
        other
        for other in others
        if (telling := name_words(other) - ours) & said and not telling & said & shown
    )


def _change_in_a_first(claim: Claim, own: set[str], documents: set[str], asked: bool) -> bool:
    """Whether `claim` tells of a change ("changed the retention to 30 days", or anything,
    `asked` which ones changed) in sources that are all the earliest version of their
    family among `documents`, and every statement of theirs giving its figures says no
    change."""
    told = CHANGED.search(UNCHANGED.sub(" ", claim.text)) or (
        asked and not UNCHANGED.search(claim.text)
    )
    if not told:
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
    own_versions = {w for document in own for w in name_words(document) if VERSION.match(w)}
    return bool(stating) and not any(
        CHANGE_SAID.search(item) or _versions(item) - own_versions for item in stating
    )  # "30 days (14 days in 2.6)": a change from a release the memory lacks


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


def _versions(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.]*\d)", text))


def _version(document: str) -> tuple[int, ...] | None:
    found = [w for w in name_words(document) if VERSION.match(w)]
    if len(found) != 1:
        return None
    return tuple(int(part) for part in found[0].lstrip("v").split("."))
