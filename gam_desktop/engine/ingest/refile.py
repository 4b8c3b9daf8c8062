"""Memories a plan filed under a folder that does not name them, moved to the one that does.

A small model names its folders well ("acme_refunds", "riverside_garage") and then
assigns the chunk numbers to them carelessly: one company's memory in another's folder, a
manual among meeting minutes. A memory's title names what it is about (memorize puts the
document's company, product or author in it), so it is checked against the folders' names
and descriptions, each word weighted by how few folders have it (a company's name tells
more than "policy", which many folders share).

A memory moves only when its title holds every word of another folder's own name, its
title does not name its own folder, and that folder names it more than twice as well as
its own: a model's grouping by topic ("comparisons", "baking"), by project or by part of
a manual stands. Memories their folder does not name by any word, not even of their
document's file name or their tldr (a manual's notes the model put among meeting minutes),
get folders of their own, grouped as the build groups without a model, when two or more
come from one document.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gam_desktop.engine.ingest.grouping import group_memories
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.store.naming import sanitize_folder_name, unique_name
from gam_desktop.engine.textutil import STOPWORDS, WORD

BETTER = 2.0  # how many times better another folder must name a memory to take it


def _words(text: str) -> set[str]:
    """Lower-case words of two letters or more ("go", "hr"), plurals folded ("reports")."""
    words = {w.lower() for w in WORD.findall(text.replace("_", " "))}
    return {_singular(w) for w in words if len(w) > 1 and w not in STOPWORDS}


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def title_words(memory: MemorizedChunk) -> set[str]:
    return _words(memory.title)


def named_words(memory: MemorizedChunk) -> set[str]:
    """Everything that could name a memory: its title, its document's file name, its tldr."""
    source = str(memory.metadata.get("source") or "").rsplit(".", 1)[0]
    return _words(f"{memory.title} {source} {memory.tldr}")


@dataclass(frozen=True)
class Folder:
    """A leaf folder as refiling sees it: its own name's words and all the words naming
    it (its path's names, its and its parents' descriptions)."""

    name: set[str]
    words: set[str]


def folder_of(path: str, descriptions: str) -> Folder:
    name = path.rsplit("/", 1)[-1]
    return Folder(_words(name), _words(f"{path.replace('/', ' ')} {descriptions}"))


class Refiler:
    """Finds, for one memory, the one folder naming it far better than its own."""

    def __init__(self, folders: Sequence[Folder]) -> None:
        self.folders = list(folders)
        spread = Counter(w for folder in self.folders for w in folder.words)
        self.weight = {w: math.log(1 + len(self.folders) / n) for w, n in spread.items()}

    def better(self, memory: MemorizedChunk, home: int) -> int | None:
        wanted = title_words(memory)
        own = self.folders[home]
        if own.name and own.name <= wanted:  # its title names its own folder: it stays
            return None
        scores = [sum(self.weight[w] for w in wanted & f.words) for f in self.folders]
        best = max(range(len(scores)), key=scores.__getitem__)
        if best == home or sum(1 for s in scores if s == scores[best]) > 1:
            return None
        target = self.folders[best]
        if target.name and target.name <= wanted and scores[best] > BETTER * scores[home]:
            return best
        return None


def refile(plan: DirectoryNode, memories: Sequence[MemorizedChunk]) -> tuple[DirectoryNode, int]:
    """`plan` with each misfiled memory moved to the leaf naming it, and memories no leaf
    names in folders of their own; how many moved."""
    leaves = _leaves(plan)
    if len(leaves) < 2:
        return plan, 0
    refiler = Refiler([folder for _, folder in leaves])
    home = {i: n for n, (leaf, _) in enumerate(leaves) for i in leaf.chunk_indices}
    moved: dict[int, int] = {}
    for memory in memories:
        if memory.index in home:
            better = refiler.better(memory, home[memory.index])
            if better is not None:
                moved[memory.index] = better
    kept = [m for m in memories if m.index in home and m.index not in moved]
    orphans = _orphans(kept, [leaves[home[m.index]][1] for m in kept], len(home))
    if not moved and not orphans:
        return plan, 0
    leaving = {m.index for m in orphans}
    by_leaf = {
        id(leaf): [i for i in leaf.chunk_indices if moved.get(i, n) == n and i not in leaving]
        + [i for i, target in moved.items() if target == n]
        for n, (leaf, _) in enumerate(leaves)
    }
    refiled = _with_indices(plan, by_leaf)
    if orphans:
        taken = [sanitize_folder_name(child.name) for child in refiled.children]
        added = []
        for folder in group_memories(orphans).children:
            name = unique_name(sanitize_folder_name(folder.name), taken)
            added.append(folder.model_copy(update={"name": name}))
            taken.append(name)
        refiled = refiled.model_copy(update={"children": [*refiled.children, *added]})
    return refiled, len(moved) + len(orphans)


def _orphans(
    memories: Sequence[MemorizedChunk], folders: Sequence[Folder], total: int
) -> list[MemorizedChunk]:
    """The memories their folder (`folders`, one for each) names by no word, two or more of
    one document's; none when that is more than half the memories (the folders are named by
    what the model knows of their contents, "work", "personal", not by names)."""
    unnamed = [m for m, f in zip(memories, folders, strict=True) if not named_words(m) & f.words]
    documents = Counter(str(m.metadata.get("source") or "") for m in unnamed)
    orphans = [
        m for m in unnamed if m.metadata.get("source") and documents[m.metadata["source"]] > 1
    ]
    return orphans if 2 * len(unnamed) <= total else []


def _leaves(plan: DirectoryNode) -> list[tuple[DirectoryNode, Folder]]:
    """Each leaf, with the descriptions of it and the folders above it."""
    found: list[tuple[DirectoryNode, Folder]] = []

    def visit(node: DirectoryNode, path: str, above: str) -> None:
        described = f"{above} {node.description}"
        if not node.children:
            found.append((node, folder_of(path, described)))
        for child in node.children:
            visit(child, f"{path}/{child.name}", described)

    for child in plan.children:
        visit(child, child.name, "")
    return found


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
    refiler = Refiler([folder_of(path, folders[path]) for path in paths])
    refiled = dict(placements)
    for memory in memories:
        placed = placements.get(memory.index)
        if placed in folders:
            better = refiler.better(memory, paths.index(placed))
            if better is not None:
                refiled[memory.index] = paths[better]
    return refiled
