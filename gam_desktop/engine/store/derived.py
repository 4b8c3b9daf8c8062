"""Rewriting derived files (READMEs, .gam_meta.json) from what the folder holds.

Used after a rollback whose READMEs were also changed by later operations: the
memories are the truth, so the contents lists and counts are recomputed from them,
keeping each README's title and LLM-written description. No LLM call.
"""

from __future__ import annotations

from gam_desktop.engine.models import META_FILE, GamMeta
from gam_desktop.engine.store.changeset import Applied, ChangeSet
from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.markdown import README
from gam_desktop.engine.store.readmes import find_dir, stage_meta, stage_readmes


def regenerate(folder: MemoryFolder, paths: list[str]) -> Applied:
    """Rewrite the READMEs and meta file among `paths` from the memories on disk."""
    root = folder.load_view()
    changes = ChangeSet()
    readme_dirs = []
    for path in paths:
        if path.rsplit("/", 1)[-1] != README:
            continue
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        node = find_dir(root, directory)
        if node is None or (not node.files and not node.subdirs and directory):
            changes.deletes.append(path)  # the folder it described is gone
            continue
        folder.read_fronts(node)
        readme_dirs.append(directory)
    stage_readmes(changes, root, readme_dirs)
    if META_FILE in paths:
        recount_meta(folder, root, changes)
    return changes.apply(folder.root)


def regenerate_all(folder: MemoryFolder) -> None:
    """Every folder's README and the meta file recomputed from the memories on disk (after
    a crash: a folder may lack its README, the counts may be stale). No LLM."""
    root = folder.load_view()
    paths = [f"{d.path}/{README}" if d.path else README for d in root.walk()]
    regenerate(folder, [*paths, META_FILE])


def recount_meta(folder: MemoryFolder, root: DirView, changes: ChangeSet) -> None:
    try:
        meta = folder.read_meta() or GamMeta()
    except ValueError:  # broken (conflict markers after a crash): counts are recomputed anyway
        meta = GamMeta()
    sources: list[str] = []
    for node in root.walk():
        for front in folder.read_fronts(node).values():
            if front.get("source") and front["source"] not in sources:
                sources.append(str(front["source"]))
    meta.source_files = sources
    stage_meta(changes, meta, root, [], meta.model_used, meta.chunk_config)
