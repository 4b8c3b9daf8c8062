"""What a consistent memory looks like, checked without an LLM (the crash matrix's oracle).

Every folder holding memories has a README listing exactly its entries, the meta file's
counts match the files, every memory's original text exists, and git (when present)
has nothing uncommitted and a sound object store.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.markdown import README, parse_readme


def problems(root: Path, git: bool = True) -> list[str]:
    """Every way the memory at `root` is inconsistent (empty when it is sound)."""
    folder = MemoryFolder(root)
    if not folder.is_memory():
        return ["no .gam_meta.json"]
    view = folder.load_view()
    found = [p for node in view.walk() for p in _folder_problems(folder, node)]
    found += _meta_problems(folder, view)
    return found + (_git_problems(root) if git else [])


def _folder_problems(folder: MemoryFolder, node: DirView) -> list[str]:
    """A folder's README lists exactly its entries; each memory's original text exists."""
    readme = folder.root / node.path / README
    if not readme.is_file():
        return [f"{node.path or '/'}: no README.md"]
    found = []
    entries = parse_readme(readme.read_text()).entries
    listed = {e.split("**")[1].rstrip("/") for e in entries if "**" in e}
    actual = {*node.subdirs, *(n.removesuffix(".md") for n in node.files)}
    if listed != actual and not (not actual and not listed):
        found.append(f"{node.path or '/'}: README lists {sorted(listed)}, holds {sorted(actual)}")
    for front in folder.read_fronts(node).values():
        if not folder.source_path(str(front.get("source_hash"))).is_file():
            found.append(f"{node.path}/{front.get('title')}: source text missing")
    return found


def _meta_problems(folder: MemoryFolder, view: DirView) -> list[str]:
    meta = json.loads(folder.meta_path.read_text())
    found = []
    if meta["total_chunks"] != view.memory_count():
        found.append(
            f"meta counts {meta['total_chunks']} memories, folder holds {view.memory_count()}"
        )
    if meta["total_directories"] != len(view.walk()) - 1:
        found.append(
            f"meta counts {meta['total_directories']} folders, folder holds {len(view.walk()) - 1}"
        )
    return found


def _git_problems(root: Path) -> list[str]:
    found = []
    status = _git(root, "status", "--porcelain")
    if status.strip():
        found.append(f"uncommitted: {status.strip()[:200]}")
    fsck = subprocess.run(
        ["git", "fsck", "--no-progress"], cwd=root, capture_output=True, text=True
    )
    if fsck.returncode != 0:
        found.append(f"git fsck: {fsck.stderr.strip()[:200]}")
    return found


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout
