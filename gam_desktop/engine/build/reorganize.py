"""Planning the reorganization of one directory into subdirectories.

The directory's memories (title and tldr from their front matter) are re-planned
by the LLM like a small build; the plan becomes a ReorganizeOperation of moves,
plus README updates for every directory whose contents change.
"""

from __future__ import annotations

from gam_desktop.engine.build.planning import plan_taxonomy
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk, ReorganizeOperation
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.store.naming import fit_stem, unique_name
from gam_desktop.engine.store.readmes import dir_at, ensure_dir, find_dir, stage_readmes


class ReorganizeError(GamError, ValueError):
    title = "The folder could not be reorganized"


def hoist(node: DirectoryNode) -> DirectoryNode:
    """`node`'s subtree with paths made relative to `node` itself."""
    prefix = f"{node.path}/"
    return node.model_copy(
        update={"path": "", "children": [_strip(child, prefix) for child in node.children]}
    )


def _strip(node: DirectoryNode, prefix: str) -> DirectoryNode:
    return node.model_copy(
        update={
            "path": node.path.removeprefix(prefix),
            "children": [_strip(c, prefix) for c in node.children],
        }
    )


def _memories_in(
    folder: MemoryFolder, directory: DirView
) -> tuple[list[MemorizedChunk], list[str]]:
    """The directory's memories (indices are positions in the returned file names), with
    their texts: should the LLM's plan fail, they are grouped by what they say."""
    fronts = folder.read_fronts(directory)
    names = list(directory.files)
    memories = []
    for i, name in enumerate(names):
        front = fronts.get(name, {})
        memories.append(
            MemorizedChunk(
                index=i,
                title=str(front.get("title", name.removesuffix(".md"))),
                tldr=str(front.get("tldr", "")),
                memory=_body(folder, directory.child_path(name)),
                metadata={"source": front.get("source", "")},
            )
        )
    return memories, names


def _body(folder: MemoryFolder, rel: str) -> str:
    path = folder.root / rel
    if not folder.readable(path):  # a link out of the memory counts as absent
        return ""
    return parse_memory(path.read_text(encoding="utf-8", errors="replace")).body


def plan_reorganization(
    folder: MemoryFolder, llm: LLM, path: str, cancel: CancelToken
) -> tuple[ReorganizeOperation, ChangeSet, DirView]:
    root = folder.load_view()
    directory = find_dir(root, path)
    if directory is None:
        raise ReorganizeError(f"no directory '{path}' in the memory")
    operation, changes = ReorganizeOperation(directory=path), ChangeSet()
    if len(directory.files) < 2:
        return operation, changes, root
    memories, names = _memories_in(folder, directory)
    plan, _warnings = plan_taxonomy(llm, memories, cancel, scope=path or "/")
    while len(plan.children) == 1 and plan.children[0].children:
        plan = hoist(plan.children[0])  # "ml/ml/x" helps nobody: drop a lone wrapper folder
    if len(plan.leaves()) < 2:
        return operation, changes, root  # nothing sensible to split into
    changed = {path}
    for node in plan.walk()[1:]:
        sub_path = directory.child_path(node.path)
        sub, created = ensure_dir(root, sub_path)
        operation.new_directories += created
        if created:
            sub.description = node.description
        changed.add(sub_path)
    for leaf in plan.leaves():
        target = dir_at(root, directory.child_path(leaf.path)) if leaf.path else directory
        for i in leaf.chunk_indices:
            if target is directory:
                continue
            old_name = names[i]
            stem = fit_stem(old_name.removesuffix(".md"), target.path)
            new_name = unique_name(stem, [*target.files], ".md")
            target.files[new_name] = directory.files.pop(old_name)
            operation.moved_files.append(
                (directory.child_path(old_name), target.child_path(new_name))
            )
    stage_readmes(changes, root, changed)
    changes.moves = list(operation.moved_files)
    return operation, changes, root
