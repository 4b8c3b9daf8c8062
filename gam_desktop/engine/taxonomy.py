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


class TaxonomyError(ValueError):
    pass


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


def plan_with_retries(
    ask: Callable[[str | None], DirectoryNode | None], expected: set[int], attempts: int = 3
) -> tuple[DirectoryNode | None, list[str]]:
    """Ask for a plan, re-asking with the specific errors; None when every try failed."""
    error: str | None = None
    history: list[str] = []
    for _ in range(attempts):
        plan = ask(error)
        if plan is None:
            history.append("the model gave no usable plan")
            error = "the reply was not a DirectoryNode JSON object"
            continue
        problems = validate_plan(plan, expected)
        if not problems:
            return plan, history
        error = "; ".join(problems)
        history.append(error)
    return None, history


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
