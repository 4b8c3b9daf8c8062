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
    pool = list(documents)
    families: list[Family] = []
    while True:
        best = _best_candidate(pool, words, similarity)
        if best is None:
            return families
        families.append(best)
        pool = [d for d in pool if d not in best.documents]


def _best_candidate(
    pool: list[str], words: dict[str, list[str]], similarity: Callable[[str, str], float]
) -> Family | None:
    """The coherent family of most members (then most alike) among the pool's documents."""
    candidates = []
    for word in dict.fromkeys(w for d in pool for w in words[d]):
        members = [d for d in pool if word in words[d]]
        if len(members) < 2:
            continue
        inside, outside = _cohesion(members, pool, similarity)
        if inside > 0 and (outside is None or inside >= COHERENCE * outside):
            candidates.append((len(members), inside, members))
    if not candidates:
        return None
    _count, _inside, members = max(candidates, key=lambda c: (c[0], c[1]))
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
