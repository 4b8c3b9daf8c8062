"""Folders without the LLM: memories clustered by the text of their documents.

The deterministic taxonomy for when the model gives no usable plan, or twice one that
organizes nothing. Documents are the units (a document's memories stay together unless
there are more of them than a folder should hold). First the families: documents whose
file names share a word and whose contents hang together (ingest/families.py:
`north-pricing.md` and `south-pricing.md`) get one folder, named by what their names
share, with a folder per document inside when they are more than a folder holds. The
other units are compared by TF-IDF cosine over their memories' titles, tldrs, texts and
source names, merged by average linkage, and the merge tree is cut where similarity drops
most. A cluster larger than a folder becomes a parent whose subfolders are found the same
way. Folder names are a cluster's distinctive terms (or the document's name, for a
folder holding one whole document); descriptions, in words, come from its memories'
titles. The clustering itself is ingest/clustering.py.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from gam_desktop.engine.ingest.clustering import (
    MAX_FOLDER,
    MAX_FOLDERS,
    Vector,
    agglomerate,
    best_cut,
    cosine,
    cut,
    kmeans,
)
from gam_desktop.engine.ingest.families import Family, find_families, name_parts, name_words
from gam_desktop.engine.ingest.prompts import MAX_DEPTH
from gam_desktop.engine.ingest.taxonomy import hoist_lone_folder
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.store.describing import (
    GENERIC_WORDS,
    describe_contents,
    is_generic_name,
)
from gam_desktop.engine.store.naming import sanitize_folder_name, unique_name
from gam_desktop.engine.textutil import STOPWORDS, WORD

MAX_UNITS = 120  # average linkage above this would take seconds
NAME_TERMS = 2


@dataclass
class Unit:
    """Memories that go into one folder together: one document, or one memory of a
    document too large for a folder."""

    members: list[MemorizedChunk]
    source: str = ""  # set when the unit is a whole document
    document: str = ""  # the document of its memories, whole or not


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
            units.append(Unit(by_source[source], source, source))
        else:
            by_source[source].append(memory)
    return [piece for unit in units for piece in _split_large(unit)]


def _split_large(unit: Unit) -> list[Unit]:
    if len(unit.members) <= MAX_FOLDER:
        return [unit]
    return [Unit([memory], document=unit.document) for memory in unit.members]


def split_units(units: Sequence[Unit], corpus: Corpus, least: int) -> list[list[Unit]]:
    """`units` in clusters (at least `least` of them when there are that many units)."""
    if len(units) <= 1:
        return [list(units)]
    vectors = [corpus.vector(u.members) for u in units]
    if len(units) > MAX_UNITS:
        groups = kmeans(vectors, MAX_FOLDERS)
    else:
        sizes = [len(u.members) for u in units]
        merges = agglomerate(vectors, sizes)
        groups = cut(merges, len(units), best_cut(merges, sizes, least))
    return [[units[i] for i in group] for group in groups]


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
    picked: list[str] = []
    for term in ranked:  # "workshop" and "shop" say one thing
        if len(picked) < NAME_TERMS and not any(term in p or p in term for p in picked):
            picked.append(term)
    order = _reading_order(cluster[0]) if cluster else {}
    named = sorted(picked, key=lambda t: order.get(t, len(order)))
    return [corpus.spelling.get(t, t) for t in named + [t for t in ranked if t not in picked]]


def _label(memory: MemorizedChunk) -> str:
    return f"{memory.title.replace('_', ' ')} {_stem(str(memory.metadata.get('source') or ''))}"


def _reading_order(memory: MemorizedChunk) -> dict[str, int]:
    """Where words first occur, the document's name first: "acme_policy", not
    "policy_acme"."""
    text = f"{_stem(str(memory.metadata.get('source') or ''))} {memory_text(memory)}"
    words = [t.lower() for t in _tokens(text)]
    return {t: i for i, t in reversed(list(enumerate(words)))}


def folder_name(
    cluster: Sequence[Unit], terms: Sequence[str], corpus: Corpus, known: Collection[str] = ()
) -> str:
    """A whole document's folder carries the document's name (the file the person
    added), less what the folder above says of its family (`known`: "north", not
    "north_pricing_sheet" under "pricing_sheet"); other folders their distinctive
    terms, else the title of their first memory (pieces of one long text read in order),
    else their most frequent word: never a name that says nothing ("notes")."""
    if len(cluster) == 1 and cluster[0].source:
        name = sanitize_folder_name(_own_name(cluster[0].source, known), fallback="")
        if name and not is_generic_name(_stem(cluster[0].source)):
            return name
    members = [m for unit in cluster for m in unit.members]
    common = Counter(t for m in members for t in corpus.terms[m.index].elements())
    frequent = [t for t, _n in common.most_common() if len(t) > 2 and t not in GENERIC_WORDS]
    candidates = ["_".join(t.lower() for t in terms[:NAME_TERMS])]
    candidates += [m.title for m in members] + frequent[:1]
    for candidate in candidates:
        name = sanitize_folder_name(candidate, fallback="")
        if name and not is_generic_name(name):
            return name
    return "unnamed_group"


def _own_name(source: str, known: Collection[str]) -> str:
    """A document's name less the family words of the folder above: "north" of
    "north-pricing-sheet" under "pricing_sheet"; a version left alone keeps the word
    before it ("guide_2_10", not "2_10"); nothing of its own, its whole name."""
    parts = name_parts(source)
    own = [p for p in parts if p not in known and p not in GENERIC_WORDS]
    if not known:
        return _stem(source)
    if not own or name_words("_".join(own)):
        return "_".join(own) or _stem(source)
    lead = parts.index(own[0])
    return "_".join(parts[lead - 1 : lead] + own)


def name_clusters(
    clusters: Sequence[Sequence[Unit]],
    corpus: Corpus,
    known: Collection[str] = (),
    taken: Sequence[str] = (),
) -> list[tuple[str, list[str]]]:
    """(folder name, distinctive terms) per cluster; names unique among siblings (and
    the `taken` ones)."""
    members = [[m for u in c for m in u.members] for c in clusters]
    shares = [coverage(m, corpus) for m in members]
    named: list[tuple[str, list[str]]] = []
    used = list(taken)
    for i, cluster in enumerate(clusters):
        terms = distinctive_terms(members[i], shares[i], shares[:i] + shares[i + 1 :], corpus)
        name = unique_name(folder_name(cluster, terms, corpus, known), used)
        used.append(name)
        named.append((name, terms))
    return named


# -- the plan ----------------------------------------------------------------------------


def group_memories(memories: Sequence[MemorizedChunk]) -> DirectoryNode:
    """A valid taxonomy plan of `memories` made without the LLM."""
    corpus = Corpus.of(memories)
    found = DirectoryNode(name="root", children=folders_for(document_units(memories), corpus, 1))
    children = hoist_lone_folder(found).children  # no "widget/" around all of it
    description = _folders_described(children)
    return DirectoryNode(name="root", description=description, children=children)


def folders_for(
    units: Sequence[Unit], corpus: Corpus, depth: int, known: Collection[str] = ()
) -> list[DirectoryNode]:
    """The folders of `units`: one per family of look-alike documents (named by what their
    names share), then the rest clustered by their text. `known`: the family words the
    folder above is named by, which tell nothing apart in here."""
    families = document_families(units, corpus, known)
    in_family = {d for family in families for d in family.documents}
    nodes = [_family_folder(family, units, corpus, depth, known) for family in families]
    nodes = _unique_names(nodes)
    rest = [u for u in units if not u.document or u.document not in in_family]
    if rest:
        nodes += _clustered(rest, corpus, depth, known, [n.name for n in nodes])
    return nodes


def _clustered(
    units: Sequence[Unit], corpus: Corpus, depth: int, known: Collection[str], taken: list[str]
) -> list[DirectoryNode]:
    total = sum(len(u.members) for u in units)
    if len(units) == 1 and total > MAX_FOLDER:  # one unit too big for a folder: its memories
        units = [Unit([m], document=units[0].document) for m in units[0].members]
    clusters = split_units(units, corpus, least=2 if total > MAX_FOLDER else 1)
    named = name_clusters(clusters, corpus, known, taken)
    return [
        _folder(cluster, name, corpus, depth, known)
        for cluster, (name, _terms) in zip(clusters, named, strict=True)
    ]


def document_families(
    units: Sequence[Unit], corpus: Corpus, known: Collection[str] = ()
) -> list[Family]:
    """The families among the units' documents, their contents compared by TF-IDF cosine."""
    by_document: dict[str, list[MemorizedChunk]] = {}
    for unit in units:
        if unit.document:
            by_document.setdefault(unit.document, []).extend(unit.members)
    if len(by_document) < 2:
        return []
    vectors = {d: corpus.vector(members) for d, members in by_document.items()}
    return find_families(list(vectors), lambda a, b: cosine(vectors[a], vectors[b]), known)


def _family_folder(
    family: Family, units: Sequence[Unit], corpus: Corpus, depth: int, known: Collection[str]
) -> DirectoryNode:
    """A family's folder, named by the words its documents' names share ("pricing_sheet"):
    one folder for all, or, when they are more than a folder holds, a folder per
    document (or group of documents) inside it."""
    cluster = [u for u in units if u.document in family.documents]
    name = sanitize_folder_name("_".join(family.shared), fallback="family")
    return _folder(cluster, name, corpus, depth, {*known, *family.shared})


def _unique_names(nodes: list[DirectoryNode]) -> list[DirectoryNode]:
    taken: list[str] = []
    for node in nodes:
        node.name = unique_name(node.name, taken)
        taken.append(node.name)
    return nodes


def _folder(
    cluster: list[Unit], name: str, corpus: Corpus, depth: int, known: Collection[str] = ()
) -> DirectoryNode:
    members = [m for u in cluster for m in u.members]
    if len(members) > MAX_FOLDER and depth < MAX_DEPTH:
        children = folders_for(cluster, corpus, depth + 1, known)
        description = _folders_described(children)
        return DirectoryNode(name=name, description=description, children=children)
    description = describe_contents(
        [],
        [m.title for m in members],
        [m.tldr for m in members],
        [str(m.metadata.get("source") or "") for m in members],
        [m.heading for m in members],
    )
    return DirectoryNode(
        name=name, description=description, chunk_indices=[m.index for m in members]
    )


def _folders_described(children: Sequence[DirectoryNode]) -> str:
    """What a folder of `children` holds, their names spelled as their descriptions write
    them."""
    return describe_contents(
        [(c.name, _count(c)) for c in children], [], [c.description for c in children]
    )


def _count(node: DirectoryNode) -> int:
    return sum(len(leaf.chunk_indices) for leaf in node.leaves())
