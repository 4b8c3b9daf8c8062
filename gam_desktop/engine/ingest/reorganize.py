"""Planning the reorganization of one directory into subdirectories.

The directory's memories (title and tldr from their front matter) are re-planned
by the LLM like a small build; the plan becomes a ReorganizeOperation of moves. Staging
it (the moves, plus README updates for every directory whose contents change) is a
step of its own, so that a plan shown to the person is applied as it was shown, without
asking the LLM again.
"""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.ingest.planning import plan_taxonomy
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.models import DirectoryNode, MemorizedChunk, ReorganizeOperation
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import PERSONAL_DIRS, DirView, MemoryFolder
from gam_desktop.engine.store.links import is_private
from gam_desktop.engine.store.markdown import README, parse_memory
from gam_desktop.engine.store.naming import fit_stem, sanitize_name, unique_name
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
                # as a file is named: the plan and its fallback read titles as slugs
                title=sanitize_name(str(front.get("title") or name.removesuffix(".md"))),
                shown_title=str(front.get("title") or ""),
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
) -> ReorganizeOperation:
    """The LLM's plan for `path`'s memories, as moves into new subfolders (none when the
    folder holds fewer than two memories or the plan would not split it)."""
    root = folder.load_view()
    directory = find_dir(root, path)
    if directory is None:
        raise ReorganizeError(f"no directory '{path}' in the memory")
    operation = ReorganizeOperation(directory=path)
    if len(directory.files) < 2:
        return operation
    memories, names = _memories_in(folder, directory)
    plan, _warnings = plan_taxonomy(llm, memories, cancel, scope=path or "/")
    while len(plan.children) == 1 and plan.children[0].children:
        plan = hoist(plan.children[0])  # "ml/ml/x" helps nobody: drop a lone wrapper folder
    if len(plan.leaves()) < 2:
        return operation  # nothing sensible to split into
    for node in plan.walk()[1:]:
        sub, created = ensure_dir(root, directory.child_path(node.path))
        operation.new_directories += created
        if created:
            operation.descriptions[sub.path] = node.description
    for leaf in plan.leaves():
        target = dir_at(root, directory.child_path(leaf.path)) if leaf.path else directory
        for i in leaf.chunk_indices:
            if target is directory:
                operation.kept_files.append(directory.child_path(names[i]))
                continue
            stem = fit_stem(names[i].removesuffix(".md"), target.path)
            new_name = unique_name(stem, [*target.files], ".md")
            target.files[new_name] = None
            operation.moved_files.append(
                (directory.child_path(names[i]), target.child_path(new_name))
            )
    return operation


def stage_reorganization(
    folder: MemoryFolder, operation: ReorganizeOperation
) -> tuple[ChangeSet, DirView]:
    """The moves and README updates that carry out `operation` in the folder as it is now,
    and the folder's view afterwards. A folder changed since the plan was made (a memory
    gone, a name taken) is refused rather than half reorganized."""
    check_plan(folder.root, operation)
    root = folder.load_view()
    directory = find_dir(root, operation.directory)
    if directory is None:
        raise ReorganizeError(f"no directory '{operation.directory}' in the memory")
    folder.read_fronts(directory)  # the tldrs the READMEs list, carried along with the moves
    changed = {operation.directory}
    for path in operation.new_directories:
        new_dir, _ = ensure_dir(root, path)
        new_dir.description = operation.descriptions.get(path, "")
        changed |= _with_parents(path, operation.directory)
    for old, new in operation.moved_files:
        source, target = find_dir(root, _parent(old)), find_dir(root, _parent(new))
        old_name, new_name = _name(old), _name(new)
        if source is None or target is None or old_name not in source.files:
            raise ReorganizeError(f"{old} is gone since the plan was made{_PLAN_AGAIN}")
        if new_name in target.files:
            raise ReorganizeError(f"{new} exists since the plan was made{_PLAN_AGAIN}")
        target.files[new_name] = source.files.pop(old_name)
        if old_name in source.origins:
            target.origins[new_name] = source.origins.pop(old_name)
        changed |= _with_parents(target.path, operation.directory)
    changes = ChangeSet()
    stage_readmes(changes, root, changed)
    changes.moves = list(operation.moved_files)
    return changes, root


_PLAN_AGAIN = "; reorganize the folder again for a new plan"


def check_plan(root: Path, operation: ReorganizeOperation) -> None:
    """Refuse a plan that would write anywhere but the memory's document tree. The LLM's
    plans name sanitized folders, but `Workflow.reorganize(plan=…)` takes any plan (one
    kept in a file, a caller's own): a move into `.git/hooks/post-commit` would install a
    program git runs. Every path is checked before anything is staged, so a refused plan
    changes nothing."""
    folders = [operation.directory, *operation.new_directories, *operation.descriptions]
    for path in folders:
        if path:  # "": the memory's top folder
            _check_path(root, path, "folder")
    for path in [p for move in operation.moved_files for p in move] + operation.kept_files:
        _check_path(root, path, "note")
        if not path.endswith(".md") or _name(path) == README:
            raise _bad_plan(path, "only notes (Markdown files other than README.md) move")
    for path in operation.deleted_files:
        _check_path(root, path, "note")


def _check_path(root: Path, path: str, kind: str) -> None:
    """`path` is a plain relative path of the document tree, reached through no link."""
    parts = path.replace("\\", "/").split("/")  # a backslash separates on Windows
    if not parts[0] or ":" in parts[0]:  # "/etc/x", "C:/x", "\\\\server\\x"
        raise _bad_plan(path, f"a {kind} of the memory is named by a path relative to it")
    if any(part in ("", ".", "..") for part in parts):
        raise _bad_plan(path, "it holds an empty, '.' or '..' part")
    if any(part.startswith(".") for part in parts):  # .git, .gam, and what the tree hides
        raise _bad_plan(path, "names starting with '.' (.git, .gam) are not the memory's")
    if parts[0] in PERSONAL_DIRS:
        raise _bad_plan(path, f"{parts[0]}/ holds what you said and saved, not documents' notes")
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            where = current.relative_to(root).as_posix()
            raise _bad_plan(path, f"'{where}' is a link, and nothing is written through links")
    if is_private(root, root.joinpath(*parts)):  # another name of .git (GIT~1 on Windows)
        raise _bad_plan(path, "nothing of a plan goes into .git or .gam")


def _bad_plan(path: str, why: str) -> ReorganizeError:
    return ReorganizeError(
        f"the plan cannot be applied: '{path}' is not a place in the memory's folders ({why}); "
        "nothing was changed"
    )


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _with_parents(path: str, top: str) -> set[str]:
    """`path` and the folders above it, up to `top`: their READMEs list what changed."""
    found = {path}
    while path and path != top:
        path = _parent(path)
        found.add(path)
    return found


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
