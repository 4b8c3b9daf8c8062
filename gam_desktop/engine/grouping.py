"""Folders without the LLM: memories clustered by the text of their documents.

The deterministic taxonomy for when the model gives no usable plan, or twice one that
organizes nothing. Documents are the units (a document's memories stay together unless
there are more of them than a folder should hold); units are compared by TF-IDF cosine
over their memories' titles, tldrs, texts and source names, merged by average linkage,
and the merge tree is cut where similarity drops most: look-alike documents (the same
headings, other names and numbers) share far more words with each other than with
anything else, so each family lands in one folder. A cluster larger than a folder
becomes a parent whose subfolders are found the same way. Folder names are a cluster's
distinctive terms (or the document's name, for a folder holding one whole document);
descriptions come from its memories.

Pure Python: average linkage is cubic in the number of units, so above MAX_UNITS the
first split is a k-means (linear) and average linkage works inside its clusters.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from gam_desktop.engine.describing import (
    GENERIC_WORDS,
    describe_contents,
    is_generic_name,
)
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.naming import sanitize_name, unique_name
from gam_desktop.engine.prompts import MAX_DEPTH
from gam_desktop.engine.textutil import STOPWORDS, WORD

MAX_FOLDER = 7  # memories a folder should hold at most (the organize prompt asks 3-7)
TARGET_FOLDER = 5
MAX_FOLDERS = 10  # folders per level
MAX_UNITS = 120  # average linkage above this would take seconds
SIZE_PENALTY = 0.1  # evens out the merges when similarities barely differ
KMEANS_ROUNDS = 8
NAME_TERMS = 2

Vector = dict[str, float]


@dataclass
class Unit:
    """Memories that go into one folder together: one document, or one memory of a
    document too large for a folder."""

    members: list[MemorizedChunk]
    source: str = ""  # set when the unit is a whole document


@dataclass
class Corpus:
    """Each memory's terms and the terms' inverse document frequency over all memories."""

    terms: dict[int, Counter[str]]
    idf: dict[str, float]
    spelling: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, memories: Sequence[MemorizedChunk]) -> Corpus:
        terms: dict[int, Counter[str]] = {}
        surface: dict[str, Counter[str]] = {}
        for memory in memories:
            tokens = _tokens(memory_text(memory))
            terms[memory.index] = Counter(t.lower() for t in tokens)
            for token in tokens:
                surface.setdefault(token.lower(), Counter())[token] += 1
        df = Counter(t for counts in terms.values() for t in counts)
        n = max(1, len(memories))
        idf = {t: math.log(1 + n / d) for t, d in df.items()}
        spelling = {t: forms.most_common(1)[0][0] for t, forms in surface.items()}
        return cls(terms, idf, spelling)

    def vector(self, members: Sequence[MemorizedChunk]) -> Vector:
        counts: Counter[str] = Counter()
        for memory in members:
            counts.update(self.terms[memory.index])
        weights = {t: (1 + math.log(c)) * self.idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}


def memory_text(memory: MemorizedChunk) -> str:
    """What a memory is about: its title, tldr, text and the name of its document."""
    source = str(memory.metadata.get("source") or "")
    return " ".join([memory.title.replace("_", " "), memory.tldr, memory.memory, _stem(source)])


def _stem(source: str) -> str:
    stem, dot, ext = source.rpartition(".")
    return (stem if dot and 0 < len(ext) <= 4 else source).replace("_", " ")


def _tokens(text: str) -> list[str]:
    return [
        w
        for w in WORD.findall(text)
        if len(w) > 1 and not w.isdigit() and w.lower() not in STOPWORDS
    ]


def cosine(a: Vector, b: Vector) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


# -- units and clusters ----------------------------------------------------------------


def document_units(memories: Sequence[MemorizedChunk]) -> list[Unit]:
    """One unit per document, in order of first appearance; a document with more
    memories than a folder holds, and a memory without a source, stand alone."""
    by_source: dict[str, list[MemorizedChunk]] = {}
    units: list[Unit] = []
    for memory in memories:
        source = str(memory.metadata.get("source") or "")
        if not source:
            units.append(Unit([memory]))
        elif source not in by_source:
            by_source[source] = [memory]
            units.append(Unit(by_source[source], source))
        else:
            by_source[source].append(memory)
    return [piece for unit in units for piece in _split_large(unit)]


def _split_large(unit: Unit) -> list[Unit]:
    if len(unit.members) <= MAX_FOLDER:
        return [unit]
    return [Unit([memory]) for memory in unit.members]


def agglomerate(vectors: Sequence[Vector], sizes: Sequence[int]) -> list[tuple[int, int, float]]:
    """Average-linkage merges as (cluster, cluster, similarity); cluster i < len(vectors)
    is unit i, the t-th merge makes cluster len(vectors) + t. Among near-equal
    similarities the smaller merge wins, so texts without structure split evenly."""
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


def best_cut(merges: Sequence[tuple[int, int, float]], sizes: Sequence[int], least: int) -> int:
    """How many clusters to keep: where the next merge would drop similarity the most, at
    least `least` and at most MAX_FOLDERS. On a tie (texts without structure), the cut
    with fewest clusters too large for a folder, then the one nearest the target size."""
    count, sims = len(sizes), [s for _, _, s in merges]

    def gap(k: int) -> float:
        applied = sims[count - k - 1] if k < count else 1.0
        following = sims[count - k] if k > 1 else 0.0
        return applied - following

    oversized = _oversized_by_cut(merges, sizes)
    target = min(MAX_FOLDERS, max(1.0, sum(sizes) / TARGET_FOLDER))
    choices = range(max(1, least), min(count, MAX_FOLDERS) + 1)
    return max(choices, key=lambda k: (round(gap(k), 2), -oversized[k], -abs(math.log(k / target))))


def _oversized_by_cut(merges: Sequence[tuple[int, int, float]], sizes: Sequence[int]) -> list[int]:
    """For each number of clusters k, how many clusters then hold more than a folder."""
    size = dict(enumerate(sizes))
    over = sum(1 for n in sizes if n > MAX_FOLDER)
    by_k = [0] * (len(sizes) + 1)
    by_k[len(sizes)] = over
    for step, (a, b, _s) in enumerate(merges):
        over -= (size[a] > MAX_FOLDER) + (size[b] > MAX_FOLDER)
        size[len(sizes) + step] = merged = size.pop(a) + size.pop(b)
        over += merged > MAX_FOLDER
        by_k[len(sizes) - step - 1] = over
    return by_k


def cut(
    merges: Sequence[tuple[int, int, float]], units: Sequence[Unit], k: int
) -> list[list[Unit]]:
    """The clusters left after all but the last k-1 merges, in document order."""
    members: dict[int, list[int]] = {i: [i] for i in range(len(units))}
    for step, (a, b, _s) in enumerate(merges[: len(units) - k]):
        members[len(units) + step] = members.pop(a) + members.pop(b)
    groups = sorted(members.values(), key=min)
    return [[units[i] for i in sorted(group)] for group in groups]


def kmeans(units: Sequence[Unit], corpus: Corpus, k: int) -> list[list[Unit]]:
    """Spherical k-means, seeded by farthest-first from the first unit: linear in the
    number of units, for inputs too large for average linkage."""
    vectors = [corpus.vector(u.members) for u in units]
    centres = [vectors[0]]
    while len(centres) < k:
        far = min(range(len(units)), key=lambda i: max(cosine(vectors[i], c) for c in centres))
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
    groups = [[u for u, a in zip(units, assignment, strict=True) if a == c] for c in range(k)]
    groups = [g for g in groups if g]
    if len(groups) < 2:  # all alike (one long text, repeated): even runs in reading order
        step = math.ceil(len(units) / k)
        groups = [list(units[i : i + step]) for i in range(0, len(units), step)]
    return groups


def _centroid(vectors: list[Vector]) -> Vector:
    total: Counter[str] = Counter()
    for vector in vectors:
        total.update(vector)
    norm = math.sqrt(sum(w * w for w in total.values())) or 1.0
    return {t: w / norm for t, w in total.items()}


def split_units(units: Sequence[Unit], corpus: Corpus, least: int) -> list[list[Unit]]:
    """`units` in clusters (at least `least` of them when there are that many units)."""
    if len(units) <= 1:
        return [list(units)]
    if len(units) > MAX_UNITS:
        return kmeans(units, corpus, MAX_FOLDERS)
    sizes = [len(u.members) for u in units]
    merges = agglomerate([corpus.vector(u.members) for u in units], sizes)
    return cut(merges, units, best_cut(merges, sizes, least))


# -- names and descriptions --------------------------------------------------------------


def coverage(members: Sequence[MemorizedChunk], corpus: Corpus) -> dict[str, float]:
    """The share of `members` each term occurs in."""
    found = Counter(t for m in members for t in corpus.terms[m.index])
    return {t: n / len(members) for t, n in found.items()}


def distinctive_terms(
    cluster: Sequence[MemorizedChunk],
    own: dict[str, float],
    rivals: list[dict[str, float]],
    corpus: Corpus,
) -> list[str]:
    """Terms found in more of the cluster's memories (`own` coverage) than of any
    sibling's (`rivals`), best first; the first two in reading order, as a name. None
    when the siblings say the same (one long text cut into pieces)."""
    frequency = Counter(t for m in cluster for t in corpus.terms[m.index].elements())
    labelled = Counter(t for m in cluster for t in set(_tokens(_label(m).lower())))

    def score(term: str) -> tuple[float, float, int, int]:
        contrast = own[term] - max((r.get(term, 0.0) for r in rivals), default=0.0)
        # words of titles and file names, chosen to name things, make better names
        return (round(contrast, 3), own[term], labelled[term], frequency[term])

    usable = sorted(t for t in own if len(t) > 2 and t not in GENERIC_WORDS)
    ranked = [t for t in sorted(usable, key=score, reverse=True) if score(t)[0] > 0]
    order = _reading_order(cluster[0]) if cluster else {}
    named = sorted(ranked[:NAME_TERMS], key=lambda t: order.get(t, len(order)))
    return [corpus.spelling.get(t, t) for t in named + ranked[NAME_TERMS:]]


def _label(memory: MemorizedChunk) -> str:
    return f"{memory.title.replace('_', ' ')} {_stem(str(memory.metadata.get('source') or ''))}"


def _reading_order(memory: MemorizedChunk) -> dict[str, int]:
    """Where words first occur, the document's name first: "oncall_policy", not
    "policy_oncall"."""
    text = f"{_stem(str(memory.metadata.get('source') or ''))} {memory_text(memory)}"
    words = [t.lower() for t in _tokens(text)]
    return {t: i for i, t in reversed(list(enumerate(words)))}


def folder_name(cluster: Sequence[Unit], terms: Sequence[str], corpus: Corpus) -> str:
    """A whole document's folder carries the document's name (the file the person
    added); other folders their distinctive terms, else the title of their first memory
    (pieces of one long text read in order), else their most frequent word: never a
    name that says nothing ("notes")."""
    if len(cluster) == 1 and cluster[0].source:
        name = sanitize_name(cluster[0].source, fallback="")
        if name and not is_generic_name(_stem(cluster[0].source)):
            return name
    members = [m for unit in cluster for m in unit.members]
    common = Counter(t for m in members for t in corpus.terms[m.index].elements())
    frequent = [t for t, _n in common.most_common() if len(t) > 2 and t not in GENERIC_WORDS]
    candidates = ["_".join(t.lower() for t in terms[:NAME_TERMS])]
    candidates += [m.title for m in members] + frequent[:1]
    for candidate in candidates:
        name = sanitize_name(candidate, fallback="")
        if name and not is_generic_name(name):
            return name
    return "unnamed_group"


def name_clusters(
    clusters: Sequence[Sequence[Unit]], corpus: Corpus
) -> list[tuple[str, list[str]]]:
    """(folder name, distinctive terms) per cluster; names unique among siblings."""
    members = [[m for u in c for m in u.members] for c in clusters]
    shares = [coverage(m, corpus) for m in members]
    named: list[tuple[str, list[str]]] = []
    taken: list[str] = []
    for i, cluster in enumerate(clusters):
        terms = distinctive_terms(members[i], shares[i], shares[:i] + shares[i + 1 :], corpus)
        name = unique_name(folder_name(cluster, terms, corpus), taken)
        taken.append(name)
        named.append((name, terms))
    return named


# -- the plan ----------------------------------------------------------------------------


def group_memories(memories: Sequence[MemorizedChunk]) -> DirectoryNode:
    """A valid taxonomy plan of `memories` made without the LLM."""
    corpus = Corpus.of(memories)
    children = folders_for(document_units(memories), corpus, depth=1)
    description = describe_contents([(c.name, _count(c)) for c in children], [])
    return DirectoryNode(name="root", description=description, children=children)


def folders_for(units: Sequence[Unit], corpus: Corpus, depth: int) -> list[DirectoryNode]:
    total = sum(len(u.members) for u in units)
    if len(units) == 1 and total > MAX_FOLDER:  # one unit too big for a folder: its memories
        units = [Unit([m]) for m in units[0].members]
    clusters = split_units(units, corpus, least=2 if total > MAX_FOLDER else 1)
    nodes = []
    for cluster, (name, terms) in zip(clusters, name_clusters(clusters, corpus), strict=True):
        nodes.append(_folder(cluster, name, terms, corpus, depth))
    return nodes


def _folder(
    cluster: list[Unit], name: str, terms: list[str], corpus: Corpus, depth: int
) -> DirectoryNode:
    members = [m for u in cluster for m in u.members]
    if len(members) > MAX_FOLDER and depth < MAX_DEPTH:
        children = folders_for(cluster, corpus, depth + 1)
        description = describe_contents(
            [(c.name, _count(c)) for c in children], [], terms=terms[:3] or None
        )
        return DirectoryNode(name=name, description=description, children=children)
    description = describe_contents(
        [], [m.title for m in members], [m.tldr for m in members], terms=terms[:3] or None
    )
    return DirectoryNode(
        name=name, description=description, chunk_indices=[m.index for m in members]
    )


def _count(node: DirectoryNode) -> int:
    return sum(len(leaf.chunk_indices) for leaf in node.leaves())
