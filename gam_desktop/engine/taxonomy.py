"""Validating and normalising the LLM's taxonomy plans (spec section 14).

A plan is checked for missing, duplicate and unknown chunk indices, parents that
hold chunks, names that are not usable folder names, sibling collisions and
depth. The errors are phrased so that they can be sent back to the model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from gam_desktop.engine.models import DirectoryNode
from gam_desktop.engine.naming import sanitize_name
from gam_desktop.engine.prompts import MAX_DEPTH


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
    names = [sanitize_name(c.name, fallback="") for c in node.children]
    if "" in names:
        errors.append(f"a subdirectory of '{node.name}' has an empty or invalid name")
    clashes = sorted(n for n, k in Counter(names).items() if n and k > 1)
    if clashes:
        errors.append(f"'{node.name}' has subdirectories with the same name: {clashes}")
    for child in node.children:
        _check_nodes(child, depth + 1, max_depth, errors)


def normalize_plan(plan: DirectoryNode, base: str = "") -> DirectoryNode:
    """Sanitized names, paths relative to the memory root, empty leaves dropped."""
    children = []
    for child in plan.children:
        name = sanitize_name(child.name, fallback="topic")
        path = f"{base}/{name}" if base else name
        normalized = normalize_plan(child.model_copy(update={"name": name}), path)
        if normalized.children or normalized.chunk_indices:
            children.append(normalized.model_copy(update={"path": path}))
    return plan.model_copy(update={"path": base, "children": children})


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
    A valid first plan with soft problems is re-asked once; the next valid plan wins, and
    the first one is kept should the re-ask go wrong."""
    error: str | None = None
    history: list[str] = []
    last_invalid = None
    first_valid = None
    for attempt in range(attempts):
        plan = ask(error)
        if plan is None:
            history.append("the model gave no usable plan")
            error = "the reply was not a DirectoryNode JSON object"
            continue
        problems = validate_plan(plan, expected)
        if not problems:
            soft = soft_problems(plan, expected) if attempt == 0 else []
            if not soft:
                return plan, history, None
            first_valid = plan
            problems = soft
        elif first_valid is not None:
            return first_valid, history, None
        error = "; ".join(problems)
        history.append(error)
        last_invalid = plan
    return first_valid, history, None if first_valid else last_invalid


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
                description="Other memories.",
                chunk_indices=own,
            )
        )
        own = []
    return node.model_copy(update={"children": children, "chunk_indices": own})


def _drop_empty(node: DirectoryNode) -> DirectoryNode:
    children = [_drop_empty(c) for c in node.children]
    children = [c for c in children if c.children or c.chunk_indices]
    return node.model_copy(update={"children": children})


def flat_fallback(groups: Sequence[tuple[str, list[int]]], description: str) -> DirectoryNode:
    """One level of folders, one per group (e.g. per source document): no LLM needed."""
    children = [
        DirectoryNode(
            name=sanitize_name(name, fallback="memories"),
            description=f"Memories from {name}.",
            chunk_indices=indices,
        )
        for name, indices in groups
        if indices
    ]
    merged: dict[str, DirectoryNode] = {}
    for child in children:  # two sources can sanitize to one name
        if child.name in merged:
            merged[child.name].chunk_indices.extend(child.chunk_indices)
        else:
            merged[child.name] = child
    return DirectoryNode(name="root", description=description, children=list(merged.values()))
