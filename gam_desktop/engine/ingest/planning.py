"""The LLM's decisions about structure: taxonomy plans, placements, descriptions.

Each function makes as few calls as it can (one plan per build, one placement
call per batch of chunks, one description call per batch of directories) and
each has a deterministic answer for when the model keeps failing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from gam_desktop.engine.ingest.grouping import group_memories
from gam_desktop.engine.ingest.prompts import (
    DescriptionBatch,
    PlacementPlan,
    TaxonomyPlan,
    describe_messages,
    organize_messages,
    place_messages,
)
from gam_desktop.engine.ingest.refile import refile, refile_placements
from gam_desktop.engine.ingest.resume import NO_RESULTS, StageResults
from gam_desktop.engine.ingest.taxonomy import (
    degenerate_problems,
    hoist_lone_folder,
    normalize_plan,
    plan_with_retries,
    repair_plan,
)
from gam_desktop.engine.llm import LLM, LLMCallFailed
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.describing import is_empty_description
from gam_desktop.engine.store.folder import DirView
from gam_desktop.engine.store.markdown import humanize
from gam_desktop.engine.store.naming import sanitize_folder_name
from gam_desktop.engine.textutil import WORD

log = logging.getLogger(__name__)
PLACEMENT_BATCH = 40
DESCRIBE_BATCH = 12


def plan_taxonomy(
    llm: LLM,
    memories: Sequence[MemorizedChunk],
    cancel: CancelToken,
    scope: str | None = None,
) -> tuple[DirectoryNode, list[str]]:
    """A validated, normalized plan for `memories` (indices as given); warnings on fallback.
    A plan that organizes nothing (one folder for most memories, folders named "topic")
    is re-asked once; then the memories are grouped by text similarity instead."""
    items = [(m.index, m.title, m.tldr) for m in memories]

    def ask(error: str | None) -> DirectoryNode | None:
        try:
            plan = llm.structured(
                organize_messages(items, error, scope),
                TaxonomyPlan,
                stage="organize",
                cancel=cancel,
                max_tokens=300 + 40 * len(items),
            )
        except LLMCallFailed as exc:
            log.warning("taxonomy plan failed: %s", exc)
            return None
        return hoist_lone_folder(plan.to_tree())

    expected = {m.index for m in memories}
    plan, problems, last_invalid = plan_with_retries(ask, expected)
    if plan is not None:
        return normalize_plan(_refiled(plan, memories)), []
    by_index = {m.index: m for m in memories}
    repaired = last_invalid and repair_plan(
        last_invalid, expected, lambda i, leaves: best_leaf_for(by_index[i], leaves)
    )
    # A mended plan keeps the model's folders, unless mending left one folder holding most
    # memories: for a re-plan that moves nothing; for memories of several documents (a
    # small model's "everything in meeting_notes/") the grouping by document and text
    # does better. One document's memories in one folder are re-planned by the threshold
    # reorganization instead.
    several_documents = len({m.metadata.get("source") for m in memories}) > 1
    mended_into_nothing = repaired and _moves_nothing(repaired, expected)
    if repaired and not (mended_into_nothing and (scope or several_documents)):
        warning = (
            "the LLM's taxonomy needed repairs after 3 tries "
            f"({problems[-1]}); its folders were kept"
        )
        return normalize_plan(_refiled(repaired, memories)), [warning]
    warning = (
        "the LLM gave no usable taxonomy; notes were grouped by source document and "
        f"text similarity instead ({problems[-1] if problems else 'no reply'})"
    )
    return normalize_plan(group_memories(memories)), [warning]


def _refiled(plan: DirectoryNode, memories: Sequence[MemorizedChunk]) -> DirectoryNode:
    refiled, moved = refile(plan, memories)
    if moved:
        log.info("moved %d memories the plan filed under folders not naming them", moved)
    return refiled


def _moves_nothing(plan: DirectoryNode, expected: set[int]) -> bool:
    return len(plan.leaves()) < 2 or bool(degenerate_problems(plan, expected))


def best_leaf_for(memory: MemorizedChunk, leaves: list[DirectoryNode]) -> int:
    """The leaf sharing most words with the memory; the smallest leaf on a tie."""
    wanted = _words(f"{memory.title.replace('_', ' ')} {memory.tldr}")
    return max(
        range(len(leaves)),
        key=lambda i: (
            len(wanted & _words(f"{leaves[i].name.replace('_', ' ')} {leaves[i].description}")),
            -len(leaves[i].chunk_indices),
        ),
    )


def structure_lines(view: DirView) -> str:
    lines = []
    for node in view.walk():
        kind = "leaf" if not node.subdirs else "parent"
        desc = " ".join(node.description.split())[:160] or "(no description)"
        lines.append(f"- {node.path or '/'} ({kind}, {len(node.files)} memories): {desc}")
    return "\n".join(lines)


def place_memories(
    llm: LLM, view: DirView, memories: Sequence[MemorizedChunk], cancel: CancelToken
) -> dict[int, tuple[str, str]]:
    """index -> (directory path, description if the directory is new)."""
    structure = structure_lines(view)
    placements: dict[int, tuple[str, str]] = {}
    for start in range(0, len(memories), PLACEMENT_BATCH):
        batch = memories[start : start + PLACEMENT_BATCH]
        try:
            plan = llm.structured(
                place_messages(structure, [(m.index, m.title, m.tldr) for m in batch]),
                PlacementPlan,
                stage="place",
                max_tokens=100 + 40 * len(batch),
                cancel=cancel,
            )
            wanted = {m.index for m in batch}
            for p in plan.placements:
                if p.index in wanted and p.index not in placements:
                    path = normalize_dir_path(p.directory)
                    placements[p.index] = (path, _informative(p.description, path))
        except LLMCallFailed as exc:
            log.warning("placement failed; using word overlap instead: %s", exc)
    for memory in memories:
        if memory.index not in placements or placements[memory.index][0] is None:
            placements[memory.index] = (best_leaf_by_words(view, memory), "")
    refiled = refile_placements(
        _leaf_descriptions(view), {i: path for i, (path, _) in placements.items()}, memories
    )
    for index, path in refiled.items():
        if path != placements[index][0]:  # moved into an existing folder: its own description
            placements[index] = (path, "")
    return placements


def _leaf_descriptions(view: DirView) -> dict[str, str]:
    """Each leaf folder's path -> its description and those of the folders above it."""
    described = {node.path: node.description for node in view.walk()}
    return {
        node.path: " ".join(
            described.get("/".join(node.path.split("/")[:i]), "")
            for i in range(1, node.path.count("/") + 2)
        )
        for node in view.walk()
        if node.path and not node.subdirs
    }


def normalize_dir_path(raw: str) -> str:
    """An LLM-given path made safe: sanitized components, no '..', no leading '/'."""
    parts = [p for p in re.split(r"[/\\]+", raw or "") if p and p not in (".", "..")]
    return "/".join(sanitize_folder_name(p) for p in parts[:3])


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text) if len(w) > 2}


def best_leaf_by_words(view: DirView, memory: MemorizedChunk) -> str:
    wanted = _words(f"{memory.title.replace('_', ' ')} {memory.tldr}")
    best, best_score = "", 0
    for node in view.walk():
        if node.subdirs or not node.path:
            continue
        score = len(wanted & _words(f"{node.path.replace('_', ' ')} {node.description}"))
        if score > best_score:
            best, best_score = node.path, score
    if best:
        return best
    return sanitize_folder_name(memory.metadata.get("source", "").rsplit(".", 1)[0], "inbox")


def _informative(description: str, path: str) -> str:
    """The description, or "" when it only repeats the folder's name ("Memories about x"):
    the README then describes the folder from its memories."""
    name = path.rsplit("/", 1)[-1]
    return "" if is_empty_description(description, name) else description.strip()


def describe_directories(
    llm: LLM,
    listings: dict[str, str],
    cancel: CancelToken,
    results: StageResults = NO_RESULTS,
) -> dict[str, tuple[str, str]]:
    """path -> (title, description) for directories whose contents changed; a batch
    `results` kept from an earlier run of the same step costs no call."""
    described: dict[str, tuple[str, str]] = {}
    paths = list(listings)
    for start in range(0, len(paths), DESCRIBE_BATCH):
        batch = {p: listings[p] for p in paths[start : start + DESCRIBE_BATCH]}
        try:
            reply = results.structured(
                llm,
                describe_messages(batch),
                DescriptionBatch,
                stage="describe",
                cancel=cancel,
                max_tokens=100 + 150 * len(batch),
            )
        except LLMCallFailed as exc:
            log.warning("README descriptions failed; keeping the previous ones: %s", exc)
            continue
        for item in reply.directories:
            path = "" if item.path.strip("/ ") in ("", "root") else normalize_dir_path(item.path)
            if path in batch and _informative(item.description, path):
                described[path] = (
                    item.title.strip() or humanize(path.rsplit("/", 1)[-1]),
                    item.description.strip(),
                )
    return described
