"""Memories a plan filed under a folder that does not name them, moved to the one that does.

A small model names its folders well ("tallowmere_analytics", "saltcellar_kitchen") and
then assigns the chunk numbers to them carelessly: a Tallowmere memory in the kitchen's
folder, a field report among kitchen procedures. A memory's title names what it is about
(memorize puts the document's company, product or author in it), so it is checked against
the folders' names and descriptions, each word weighted by how few folders have it
("quillfern" tells more than "policy", which four folders share). A memory moves only when
one other folder names it more than twice as well as its own: a model's grouping by topic,
where folder and memory share a word or two, stands. Memories no folder names at all, not
even by a word of their tldr (eight release notes the model put among field reports),
get folders of their own, grouped as the build groups without a model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from gam_desktop.engine.build.grouping import group_memories
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.store.naming import unique_name
from gam_desktop.engine.textutil import STOPWORDS, WORD

BETTER = 2.0  # how many times better another folder must name a memory to take it


def _words(text: str) -> set[str]:
    words = {w.lower() for w in WORD.findall(text.replace("_", " "))}
    return {w for w in words if len(w) > 2 and w not in STOPWORDS}


def memory_words(memory: MemorizedChunk, tldr: bool = False) -> set[str]:
    """What a memory is about by name: its title and its document's file name (and with
    `tldr`, its tldr)."""
    source = str(memory.metadata.get("source") or "").rsplit(".", 1)[0]
    return _words(f"{memory.title} {source} {memory.tldr if tldr else ''}")


def _leaf_words(plan: DirectoryNode) -> list[tuple[DirectoryNode, set[str]]]:
    """Each leaf with the words of its path's names and of its and its parents' descriptions."""
    found: list[tuple[DirectoryNode, set[str]]] = []

    def visit(node: DirectoryNode, above: set[str]) -> None:
        words = above | _words(f"{node.name} {node.description}")
        if not node.children:
            found.append((node, words))
        for child in node.children:
            visit(child, words)

    for child in plan.children:
        visit(child, set())
    return found


def weights(leaf_words: Sequence[set[str]]) -> dict[str, float]:
    """Each word's weight: how few of the folders have it."""
    spread = Counter(w for words in leaf_words for w in words)
    return {w: math.log(1 + len(leaf_words) / n) for w, n in spread.items()}


def better_leaf(
    memory: MemorizedChunk, leaf_words: Sequence[set[str]], weight: dict[str, float], home: int
) -> int | None:
    """The one leaf naming `memory` more than twice as well as its `home` leaf, if any."""
    wanted = memory_words(memory)
    scores = [sum(weight[w] for w in wanted & words) for words in leaf_words]
    best = max(range(len(scores)), key=scores.__getitem__)
    unique = sum(1 for s in scores if s == scores[best]) == 1
    if unique and best != home and scores[best] > BETTER * scores[home]:
        return best
    return None


def refile(plan: DirectoryNode, memories: Sequence[MemorizedChunk]) -> tuple[DirectoryNode, int]:
    """`plan` with each misfiled memory moved to the leaf naming it best, and memories no
    leaf names in folders of their own; how many moved."""
    leaves = _leaf_words(plan)
    if len(leaves) < 2:
        return plan, 0
    weight = weights([words for _, words in leaves])
    home = {i: n for n, (leaf, _) in enumerate(leaves) for i in leaf.chunk_indices}
    moved: dict[int, int] = {}
    for memory in memories:
        if memory.index in home:
            better = better_leaf(memory, [w for _, w in leaves], weight, home[memory.index])
            if better is not None:
                moved[memory.index] = better
    orphans = [
        m
        for m in memories
        if m.index in home
        and m.index not in moved
        and not any(memory_words(m, tldr=True) & words for _, words in leaves)
    ]
    if len(orphans) < 2 or 2 * len(orphans) > len(home):
        # one alone makes no folder; and a plan whose folders name few of its memories
        # ("work", "personal") groups by what the model knows of them, not by name
        orphans = []
    if not moved and not orphans:
        return plan, 0
    leaving = {m.index for m in orphans}
    refiled = [
        [i for i in leaf.chunk_indices if moved.get(i, n) == n and i not in leaving]
        + [i for i, target in moved.items() if target == n]
        for n, (leaf, _) in enumerate(leaves)
    ]
    by_leaf = {id(leaf): indices for (leaf, _), indices in zip(leaves, refiled, strict=True)}
    refiled_plan = _with_indices(plan, by_leaf)
    if orphans:
        taken = [child.name for child in refiled_plan.children]
        added = []
        for folder in group_memories(orphans).children:
            added.append(folder.model_copy(update={"name": unique_name(folder.name, taken)}))
            taken.append(added[-1].name)
        refiled_plan = refiled_plan.model_copy(
            update={"children": [*refiled_plan.children, *added]}
        )
    return refiled_plan, len(moved) + len(orphans)


def _with_indices(node: DirectoryNode, by_leaf: dict[int, list[int]]) -> DirectoryNode:
    if not node.children:
        return node.model_copy(update={"chunk_indices": by_leaf.get(id(node), node.chunk_indices)})
    children = [_with_indices(child, by_leaf) for child in node.children]
    return node.model_copy(update={"children": children})


def refile_placements(
    folders: dict[str, str], placements: dict[int, str], memories: Sequence[MemorizedChunk]
) -> dict[int, str]:
    """`placements` (index -> folder path) with each memory the model put into an existing
    leaf folder not naming it moved to the one that does; `folders` maps the existing leaf
    folders' paths to the descriptions of the folder and those above it."""
    paths = list(folders)
    if len(paths) < 2:
        return placements
    leaf_words = [_words(f"{path.replace('/', ' ')} {folders[path]}") for path in paths]
    weight = weights(leaf_words)
    refiled = dict(placements)
    for memory in memories:
        placed = placements.get(memory.index)
        if placed in folders:
            better = better_leaf(memory, leaf_words, weight, paths.index(placed))
            if better is not None:
                refiled[memory.index] = paths[better]
    return refiled
