"""Validating and normalising the LLM's taxonomy plans.

A plan is checked for missing, duplicate and unknown chunk indices, parents that
hold chunks, names that are not usable folder names, sibling collisions and
depth. The errors are phrased so that they can be sent back to the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from gam_desktop.engine.ingest.prompts import MAX_DEPTH
from gam_desktop.engine.models import DirectoryNode
from gam_desktop.engine.store.describing import is_empty_description, is_generic_name
from gam_desktop.engine.store.naming import sanitize_folder_name

CROWDED_MIN = 8  # up to 7 chunks make one good folder (the prompt asks for 3-7)
CROWDED_SHARE = 0.6  # a folder holding more than this share of the chunks organizes nothing


def validate_plan(plan: DirectoryNode, expected: set[int], max_depth: int = MAX_DEPTH) -> list[str]:
    errors: list[str] = []
    counts: Counter[int] = Counter()
    for leaf in plan.leaves():
        counts.update(leaf.chunk_indices)
    missing = sorted(expected - set(counts))
    duplicates = sorted(i for i, n in counts.items() if n > 1)
    unknown = sorted(set(counts) - expected)
    if missing:
        errors.append(f"chunk indices missing from every leaf: {missing}")
    if duplicates:
        errors.append(f"chunk indices placed in more than one leaf: {duplicates}")
    if unknown:
        errors.append(f"unknown chunk indices: {unknown}")
    _check_nodes(plan, 0, max_depth, errors)
    return errors


def _check_nodes(node: DirectoryNode, depth: int, max_depth: int, errors: list[str]) -> None:
    if node.children and node.chunk_indices:
        errors.append(f"directory '{node.name}' has both subdirectories and chunk_indices")
    if depth > max_depth:
        errors.append(f"directory '{node.name}' is deeper than {max_depth} levels")
        return
    names = [sanitize_folder_name(c.name, fallback="") for c in node.children]
    if "" in names:
        errors.append(f"a subdirectory of '{node.name}' has an empty or invalid name")
    clashes = sorted(n for n, k in Counter(names).items() if n and k > 1)
    if clashes:
        errors.append(f"'{node.name}' has subdirectories with the same name: {clashes}")
    for child in node.children:
        _check_nodes(child, depth + 1, max_depth, errors)


def normalize_plan(plan: DirectoryNode, base: str = "") -> DirectoryNode:
    """Sanitized names, paths relative to the memory root, empty leaves dropped, and
    descriptions that say nothing ("Memories about x") blanked: the README then
    describes the folder from its memories instead."""
    children = []
    for child in plan.children:
        name = sanitize_folder_name(child.name)
        path = f"{base}/{name}" if base else name
        normalized = normalize_plan(child.model_copy(update={"name": name}), path)
        if normalized.children or normalized.chunk_indices:
            children.append(normalized.model_copy(update={"path": path}))
    description = "" if is_empty_description(plan.description, plan.name) else plan.description
    return plan.model_copy(update={"path": base, "children": children, "description": description})


def hoist_lone_folder(plan: DirectoryNode) -> DirectoryNode:
    """A root whose only folder holds only folders ("topic/a", "topic/b"): the wrapper
    adds a level and a name nobody needs, so its subfolders move up."""
    while (
        len(plan.children) == 1 and plan.children[0].children and not plan.children[0].chunk_indices
    ):
        plan = plan.model_copy(update={"children": plan.children[0].children})
    return plan


def degenerate_problems(plan: DirectoryNode, expected: set[int]) -> list[str]:
    """What makes a valid plan organize nothing (seen with Qwen2.5-Coder-1.5B: one folder
    "topic" holding all 37 chunks): most chunks in one folder, or folder names made of
    empty words. Phrased for the re-ask."""
    problems = []
    generic = sorted({n.name for n in plan.walk()[1:] if is_generic_name(n.name)})
    if generic:
        problems.append(
            f"the folder names {generic} say nothing about what the folders hold; name every "
            "folder after what its chunks share (a company, product, version, person, place "
            "or subject)"
        )
    total = len(expected)
    biggest = max(plan.leaves(), key=lambda leaf: len(leaf.chunk_indices))
    held = len(biggest.chunk_indices)
    if held >= CROWDED_MIN and held > CROWDED_SHARE * total:  # 6 of 9 is a fine folder
        problems.append(
            f"the folder '{biggest.name}' holds {held} of the {total} chunks; split them into "
            "folders of 3-7 chunks that belong together, e.g. one folder per company, "
            "product, version or author they are about"
        )
    return problems


def soft_problems(plan: DirectoryNode, expected: set[int]) -> list[str]:
    """Not errors, but a plan worth one more try: small models tend to give every chunk a
    folder of its own (seen with Qwen2.5-Coder-1.5B), which makes a tree nobody can browse."""
    leaves = [leaf for leaf in plan.leaves() if leaf is not plan]
    single = sum(1 for leaf in leaves if len(leaf.chunk_indices) == 1)
    if len(expected) >= 6 and leaves and single > len(leaves) / 2:
        return [
            f"{single} of {len(leaves)} folders hold a single chunk; group related chunks "
            "into folders of 3-7"
        ]
    return []


def plan_with_retries(
    ask: Callable[[str | None], DirectoryNode | None], expected: set[int], attempts: int = 3
) -> tuple[DirectoryNode | None, list[str], DirectoryNode | None]:
    """Ask for a plan, re-asking with the specific errors. Returns (valid plan or None,
    the problems seen, the last invalid plan, which may still be worth repairing).

    A valid plan with poor structure is re-asked once, with the problem named. Single-chunk
    folders (soft problems) are still a usable tree: should the re-ask go wrong, the first
    plan is kept. A plan that organizes nothing (degenerate problems) is never kept: if the
    re-ask does no better, the result is None and the caller groups the chunks itself."""
    error: str | None = None
    history: list[str] = []
    last_invalid = None
    kept = None  # a poor but usable plan, should the re-ask go wrong
    reasked = False  # the one re-ask for structure is spent
    for _attempt in range(attempts):
        plan = ask(error)
        if plan is None:
            history.append("the model gave no usable plan")
            error = "the reply was not a DirectoryNode JSON object"
            continue
        problems = validate_plan(plan, expected)
        if not problems:
            poor = degenerate_problems(plan, expected)
            if reasked:
                history += poor
                return (None if poor else plan), history, None
            soft = soft_problems(plan, expected)
            if not poor and not soft:
                return plan, history, None
            kept, reasked, problems = (None if poor else plan), True, poor + soft
        elif reasked:  # the re-ask for structure came back broken
            history.append("; ".join(problems))
            return kept, history, None
        else:
            last_invalid = plan
        error = "; ".join(problems)
        history.append(error)
    return kept, history, None if reasked else last_invalid


def repair_plan(
    plan: DirectoryNode, expected: set[int], place: Callable[[int, list[DirectoryNode]], int]
) -> DirectoryNode | None:
    """Mend a plan a small model got almost right: unknown indices dropped, duplicates kept
    once, chunks lifted out of parents, folders deeper than MAX_DEPTH folded up, missing
    chunks placed by `place(index, leaves) -> leaf position`. None if nothing is usable."""
    seen: set[int] = set()
    root = _mend(plan, expected, seen, 0)
    leaves = [leaf for leaf in root.leaves() if leaf is not root]
    if not leaves:
        return None
    for index in sorted(expected - seen):
        leaves[place(index, leaves)].chunk_indices.append(index)
    root = _drop_empty(root)
    return root if not validate_plan(root, expected) else None


def _mend(node: DirectoryNode, expected: set[int], seen: set[int], depth: int) -> DirectoryNode:
    def keep(indices: list[int]) -> list[int]:
        kept = [i for i in dict.fromkeys(indices) if i in expected and i not in seen]
        seen.update(kept)
        return kept

    if depth >= MAX_DEPTH:  # fold everything below into this folder
        folded = [i for sub in node.walk() for i in sub.chunk_indices]
        return node.model_copy(update={"children": [], "chunk_indices": keep(folded)})
    children = [_mend(c, expected, seen, depth + 1) for c in node.children]
    own = keep(node.chunk_indices)
    if children and own:  # a parent holding chunks: give them a folder of their own
        children.append(
            DirectoryNode(
                name=f"{node.name}_general" if depth else "general",
                description="Other notes.",
                chunk_indices=own,
            )
        )
        own = []
    return node.model_copy(update={"children": children, "chunk_indices": own})


def _drop_empty(node: DirectoryNode) -> DirectoryNode:
    children = [_drop_empty(c) for c in node.children]
    children = [c for c in children if c.children or c.chunk_indices]
    return node.model_copy(update={"children": children})
