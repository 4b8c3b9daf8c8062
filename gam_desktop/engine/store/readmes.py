"""The derived files of a memory folder: every folder's README.md (title, description,
contents list) and `.gam_meta.json`, staged into a ChangeSet from the folder's view."""

from __future__ import annotations

from collections.abc import Iterable

from gam_desktop.engine.models import META_FILE, ChunkConfig, GamMeta, utc_now
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.describing import (
    describe_contents,
    folder_title,
    is_empty_description,
)
from gam_desktop.engine.store.folder import DirView
from gam_desktop.engine.store.markdown import (
    README,
    ReadmeEntry,
    humanize,
    render_entries,
    render_readme,
)
from gam_desktop.engine.store.naming import stored_name


def find_dir(root: DirView, path: str) -> DirView | None:
    node = root
    for part in path.split("/") if path else []:
        node = node.subdirs.get(part)  # type: ignore[assignment]
        if node is None:
            return None
    return node


def dir_at(root: DirView, path: str) -> DirView:
    """The directory at `path`, which the caller has just made or seen in the view."""
    node = find_dir(root, path)
    if node is None:
        raise LookupError(f"no directory '{path}' in the view")
    return node


def ensure_dir(root: DirView, path: str) -> tuple[DirView, list[str]]:
    """The directory at `path`, created in the view if missing (case-insensitively reused)."""
    node, created = root, []
    for part in path.split("/") if path else []:
        existing = next((n for n in node.subdirs if n.casefold() == part.casefold()), None)
        if existing is None:
            node.subdirs[part] = DirView(node.child_path(part))  # titled by stage_readmes
            created.append(node.child_path(part))
            existing = part
        node = node.subdirs[existing]
    return node, created


def ancestors(path: str) -> list[str]:
    """`path` and every directory above it, the root ("") included."""
    parts = path.split("/") if path else []
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def readme_entries(directory: DirView) -> list[ReadmeEntry]:
    entries = [
        ReadmeEntry(name, True, shown_description(sub), sub.memory_count())
        for name, sub in directory.subdirs.items()
    ]
    entries += [
        ReadmeEntry(name.removesuffix(".md"), False, tldr or "")
        for name, tldr in directory.files.items()
    ]
    return entries


def listing(directory: DirView) -> str:
    """What a directory holds, as the describe prompt and the README both show it."""
    return render_entries(readme_entries(directory))


def contents_description(directory: DirView) -> str:
    """What a directory holds, in words, from its memories' titles and tldrs and its
    subfolders: the README's description when no LLM wrote one."""
    folders = [(name, sub.memory_count()) for name, sub in directory.subdirs.items()]
    titles = [name.removesuffix(".md") for name in directory.files]
    origins = [directory.origins.get(name) for name in directory.files]
    if not all(origins):  # a note not read: its file name is all there is to go by
        return describe_contents(folders, titles, _said_in(directory))
    headings, sources = zip(*origins, strict=True) if origins else ((), ())
    return describe_contents(folders, titles, _said_in(directory), sources, headings)


def _said_in(directory: DirView) -> list[str]:
    """What a folder's README can take the spelling of names from: its notes' tldrs, its
    subfolders' titles and descriptions, its own description."""
    said = [t for t in directory.files.values() if t]
    for sub in directory.subdirs.values():
        said += [sub.title, sub.description]
    return [t for t in [*said, directory.description] if t]


def shown_description(directory: DirView) -> str:
    """The description a folder's README shows, and its parent's contents list with it:
    its own, or, when that says nothing, one from what it holds. (The parent listed the
    folder's bare name while the folder's README said what it holds, and the two disagreed
    once the folder was read back from its README.)"""
    if _said_nothing(directory.description):
        return contents_description(directory)
    return directory.description


def _said_nothing(description: str) -> bool:
    """No description, or one of those earlier versions wrote ("Memories about <name>.",
    "4 memories on a, b and c: ..."), which a person reading the README learns nothing
    from. Any other is kept: it may be a person's."""
    return is_empty_description(description)


def stage_readmes(changes: ChangeSet, root: DirView, paths: Iterable[str]) -> None:
    # the deepest first: a folder's title is spelled from its subfolders' too
    for path in sorted(set(paths), key=lambda p: (-len(ancestors(p)), p)):
        node = find_dir(root, path)
        if node is None:
            continue
        name = path.rsplit("/", 1)[-1] if path else "memory"
        if not node.title or node.title == humanize(name):  # no one titled it: its name
            node.title = folder_title(name, _said_in(node))
        title = node.title
        description = shown_description(node)
        target = f"{path}/{README}" if path else README
        changes.writes[target] = render_readme(title, description, readme_entries(node))


def stage_meta(
    changes: ChangeSet,
    previous: GamMeta | None,
    root: DirView,
    sources: Iterable[str],
    model: str,
    chunk: ChunkConfig,
) -> GamMeta:
    meta = previous.model_copy() if previous else GamMeta(chunk_config=chunk)
    meta.updated_at = utc_now()
    meta.total_chunks = root.memory_count()
    meta.total_directories = len(root.walk()) - 1
    meta.source_files = list(dict.fromkeys([*meta.source_files, *map(stored_name, sources)]))
    meta.model_used = model or meta.model_used
    changes.writes[META_FILE] = meta.model_dump_json(indent=2) + "\n"
    return meta
