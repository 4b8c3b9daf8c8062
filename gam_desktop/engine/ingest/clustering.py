"""Clusters sized for folders: average linkage and k-means over sparse vectors.

Pure Python (no numpy: a few hundred vectors take well under a second). Average linkage
finds the natural families of a small set: the merge tree is cut where similarity drops
most, so look-alike documents, which share far more words with each other than with
anything else, stay together. It is cubic in the number of items; larger sets get a
k-means first, which is linear.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

MIN_FOLDER, MAX_FOLDER = 3, 7  # memories a folder should hold (the organize prompt asks 3-7)
TARGET_FOLDER = 5
MAX_FOLDERS = 10  # folders per level
SIZE_PENALTY = 0.1  # evens out the merges when similarities barely differ
SMOOTHING = 0.05  # keeps ratios of near-zero similarities (noise) from looking like steps
KMEANS_ROUNDS = 8

Vector = dict[str, float]
Merge = tuple[int, int, float]


def cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def agglomerate(vectors: Sequence[Vector], sizes: Sequence[int]) -> list[Merge]:
    """Average-linkage merges as (cluster, cluster, similarity): cluster i < len(vectors)
    is item i (holding sizes[i] memories), the t-th merge makes cluster len(vectors) + t.
    Among near-equal similarities the smaller merge wins, so texts without structure
    split evenly."""
    count = len(vectors)
    total = max(1, sum(sizes))
    units = {i: 1 for i in range(count)}
    size = {i: sizes[i] for i in range(count)}
    sim = {
        (i, j): cosine(vectors[i], vectors[j]) for i in range(count) for j in range(i + 1, count)
    }
    merges = []
    for new in range(count, 2 * count - 1):
        a, b = max(sim, key=lambda p: sim[p] - SIZE_PENALTY * (size[p[0]] + size[p[1]]) / total)
        merges.append((a, b, sim[(a, b)]))
        for c in units:
            if c not in (a, b):
                linked = units[a] * _get(sim, a, c) + units[b] * _get(sim, b, c)
                sim[(c, new)] = linked / (units[a] + units[b])
        sim = {p: s for p, s in sim.items() if a not in p and b not in p}
        units[new], size[new] = units.pop(a) + units.pop(b), size.pop(a) + size.pop(b)
    return merges


def _get(sim: dict[tuple[int, int], float], a: int, b: int) -> float:
    return sim[(a, b)] if (a, b) in sim else sim[(b, a)]


def best_cut(merges: Sequence[Merge], sizes: Sequence[int], least: int) -> int:
    """How many clusters to keep: where the next merge would drop similarity the most
    (by ratio: 0.13 to 0.02 is a bigger step than 0.43 to 0.32), at
    least `least` and at most MAX_FOLDERS. On a tie (texts without structure), the cut
    with most memories in clusters of a good folder's size, then the one nearest the
    target size."""
    count, sims = len(sizes), [s for _, _, s in merges]

    def drop(k: int) -> float:  # relative: weakly knit families still beat noise near 0
        applied = sims[count - k - 1] if k < count else 1.0
        following = sims[count - k] if k > 1 else 0.0
        return math.log((applied + SMOOTHING) / (following + SMOOTHING))

    well_sized = _well_sized_by_cut(merges, sizes)
    target = min(MAX_FOLDERS, max(1.0, sum(sizes) / TARGET_FOLDER))
    choices = range(max(1, least), min(count, MAX_FOLDERS) + 1)
    return max(
        choices, key=lambda k: (round(drop(k), 1), well_sized[k], -abs(math.log(k / target)))
    )


def _well_sized_by_cut(merges: Sequence[Merge], sizes: Sequence[int]) -> list[int]:
    """For each number of clusters k, how many memories then sit in a cluster that makes
    a good folder (MIN_FOLDER to MAX_FOLDER memories)."""

    def good(n: int) -> int:
        return n if MIN_FOLDER <= n <= MAX_FOLDER else 0

    size = dict(enumerate(sizes))
    held = sum(good(n) for n in sizes)
    by_k = [0] * (len(sizes) + 1)
    by_k[len(sizes)] = held
    for step, (a, b, _s) in enumerate(merges):
        held -= good(size[a]) + good(size[b])
        size[len(sizes) + step] = merged = size.pop(a) + size.pop(b)
        held += good(merged)
        by_k[len(sizes) - step - 1] = held
    return by_k


def cut(merges: Sequence[Merge], count: int, k: int) -> list[list[int]]:
    """The clusters (item positions) left after all but the last k-1 merges, in order."""
    members: dict[int, list[int]] = {i: [i] for i in range(count)}
    for step, (a, b, _s) in enumerate(merges[: count - k]):
        members[count + step] = members.pop(a) + members.pop(b)
    return [sorted(group) for group in sorted(members.values(), key=min)]


def kmeans(vectors: Sequence[Vector], k: int) -> list[list[int]]:
    """Spherical k-means (item positions per cluster), seeded by farthest-first from the
    first item. Items all alike fall into even runs in their order instead."""
    centres = [vectors[0]]
    while len(centres) < k:
        far = min(range(len(vectors)), key=lambda i: max(cosine(vectors[i], c) for c in centres))
        centres.append(vectors[far])
    assignment: list[int] = []
    for _round in range(KMEANS_ROUNDS):
        new = [max(range(len(centres)), key=lambda c: cosine(v, centres[c])) for v in vectors]
        if new == assignment:
            break
        assignment = new
        centres = [
            _centroid([v for v, a in zip(vectors, new, strict=True) if a == c]) for c in range(k)
        ]
    groups = [[i for i, a in enumerate(assignment) if a == c] for c in range(k)]
    groups = [g for g in groups if g]
    if len(groups) < 2:
        step = math.ceil(len(vectors) / k)
        groups = [list(range(i, min(i + step, len(vectors)))) for i in range(0, len(vectors), step)]
    return groups


def _centroid(vectors: list[Vector]) -> Vector:
    total: Counter[str] = Counter()
    for vector in vectors:
        total.update(vector)
    norm = math.sqrt(sum(w * w for w in total.values())) or 1.0
    return {t: w / norm for t, w in total.items()}
