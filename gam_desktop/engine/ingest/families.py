"""Families of documents: look-alikes and parts of one subject, found by name and content.

People name related files alike: `north-pricing.md` and `south-pricing.md`,
`guide-2.0.md` and `guide-2.1.md`, `widget-setup.md` and `widget-repair.md`. A
word shared by several file names (numbers aside: they are what differs) proposes a
family; it is kept when its members' contents are more alike among themselves than with
the other documents, so two unrelated files that both say "notes" or "draft" are not
grouped. Nothing here knows a subject: only file names and shared vocabulary.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from gam_desktop.engine.store.describing import GENERIC_WORDS
from gam_desktop.engine.textutil import STOPWORDS

NAME_PART = re.compile(r"[\s_\-+,;()\[\]]+")  # dots stay: "11.12" and "v2.1" are one part
MIN_WORD = 2
COHERENCE = 1.5  # inside a family, contents at least this much more alike than outside


@dataclass(frozen=True)
class Family:
    documents: tuple[str, ...]  # in the order given
    shared: tuple[str, ...]  # the name words all members have, in reading order


def name_parts(document: str) -> list[str]:
    """A file name's parts, lowercase, its extension left out."""
    path = PurePath(document)
    stem = path.stem if 0 < len(path.suffix) <= 5 else path.name
    return [p.strip(".") for p in NAME_PART.split(stem.lower()) if p.strip(".")]


def name_words(document: str, known: Collection[str] = ()) -> list[str]:
    """The parts of a name that can name a family: words, not numbers, not empty words,
    not already said by the folder above (`known`)."""
    return [
        p
        for p in name_parts(document)
        if len(p) >= MIN_WORD
        and any(c.isalpha() for c in p)
        and not any(c.isdigit() for c in p)
        and p not in STOPWORDS | GENERIC_WORDS
        and p not in known
    ]


def find_families(
    documents: Sequence[str],
    similarity: Callable[[str, str], float],
    known: Collection[str] = (),
) -> list[Family]:
    """Families of two or more `documents` (each in one at most), largest first: the
    documents sharing a name word whose contents hang together (`similarity`)."""
    words = {d: name_words(d, known) for d in documents}
    shelves = _shelf_words(list(documents), words, similarity)
    words = {d: [w for w in found if w not in shelves] for d, found in words.items()}
    pool = list(documents)
    families: list[Family] = []
    while True:
        best = _best_candidate(pool, words, similarity)
        if best is None:
            return families
        families.append(best)
        pool = [d for d in pool if d not in best.documents]


def _shelf_words(
    pool: list[str], words: dict[str, list[str]], similarity: Callable[[str, str], float]
) -> set[str]:
    """The name words whose documents are made of two or more smaller families: a shelf,
    not a family. Such a word says what the whole collection is ("north-2023-minutes",
    "south-2024-minutes", …: "minutes"), so, like the folder's own name, it tells nothing
    apart; the families on the shelf are the ones to keep."""
    found = {
        word: set(members) for word, (members, _) in _candidates(pool, words, similarity).items()
    }
    shelves = set()
    for word, members in found.items():
        inside = [m for m in found.values() if len(m) < len(members) and m <= members]
        if any(a.isdisjoint(b) for a, b in itertools.combinations(inside, 2)):
            shelves.add(word)
    return shelves


def _candidates(
    pool: list[str], words: dict[str, list[str]], similarity: Callable[[str, str], float]
) -> dict[str, tuple[list[str], float]]:
    """Each name word of two or more documents whose contents hang together: its members
    and how alike they are."""
    found = {}
    for word in dict.fromkeys(w for d in pool for w in words[d]):
        members = [d for d in pool if word in words[d]]
        if len(members) < 2:
            continue
        inside, outside = _cohesion(members, pool, similarity)
        if inside > 0 and (outside is None or inside >= COHERENCE * outside):
            found[word] = (members, inside)
    return found


def _best_candidate(
    pool: list[str], words: dict[str, list[str]], similarity: Callable[[str, str], float]
) -> Family | None:
    """The coherent family of most members (then most alike) among the pool's documents."""
    found = _candidates(pool, words, similarity)
    if not found:
        return None
    members, _inside = max(found.values(), key=lambda c: (len(c[0]), c[1]))
    shared = [w for w in words[members[0]] if all(w in words[d] for d in members)]
    return Family(tuple(members), tuple(shared))


def _cohesion(
    members: list[str], pool: list[str], similarity: Callable[[str, str], float]
) -> tuple[float, float | None]:
    """The members' mean similarity among themselves, and with the rest of the pool (None
    when there is no rest: a family of everything has nothing to stand out from)."""
    inside = statistics.mean(similarity(a, b) for a, b in itertools.combinations(members, 2))
    rest = [d for d in pool if d not in members]
    if not rest:
        return inside, None
    return inside, statistics.mean(similarity(a, b) for a in members for b in rest)
