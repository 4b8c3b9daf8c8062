"""The read-only view of a memory folder (spec section 8).

Opening scans names and stat data only; a file's content is read when someone
asks for it (`content_of`, `get_node(..., load=True)`), so a 10,000-memory folder
opens in a fraction of a second and the GUI can expand folders lazily.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from gam_desktop.engine.markdown import README
from gam_desktop.engine.models import FSNode, NodeType


def _times(stat: os.stat_result) -> tuple[datetime, datetime]:
    return (datetime.fromtimestamp(stat.st_ctime, UTC), datetime.fromtimestamp(stat.st_mtime, UTC))


class GAMTree:
    def __init__(self, root: FSNode, path: Path) -> None:
        self.root = root
        self.path = path

    @classmethod
    def from_disk(cls, path: str | Path) -> GAMTree:
        folder = Path(path).resolve()
        return cls(cls._scan(folder), folder)

    @classmethod
    def _scan(cls, folder: Path) -> FSNode:
        created, updated = _times(folder.stat())
        node = FSNode(
            name=folder.name, node_type=NodeType.DIRECTORY, created_at=created, updated_at=updated
        )
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    node.children[entry.name] = cls._scan(Path(entry.path))
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    created, updated = _times(stat)
                    node.children[entry.name] = FSNode(
                        name=entry.name,
                        node_type=NodeType.FILE,
                        created_at=created,
                        updated_at=updated,
                        meta={"size": stat.st_size},
                    )
        return node

    def get_node(self, path_str: str, load: bool = False) -> FSNode | None:
        current = self.root
        for part in (p for p in path_str.split("/") if p):
            if part not in current.children:
                return None
            current = current.children[part]
        if load and current.node_type is NodeType.FILE and current.content is None:
            current.content = (self.path / path_str.strip("/")).read_text(
                encoding="utf-8", errors="replace"
            )
        return current

    def content_of(self, path_str: str) -> str | None:
        node = self.get_node(path_str, load=True)
        return node.content if node is not None else None

    def memory_count(self, node: FSNode | None = None) -> int:
        node = node or self.root
        if node.node_type is NodeType.FILE:
            return 0 if node.name == README else 1
        return sum(self.memory_count(c) for c in node.children.values())

    def tree_view(self, depth: int = 2) -> str:
        lines = [f"{self.root.name}/"]
        self._render(self.root, "", depth, lines)
        return "\n".join(lines)

    def _render(self, node: FSNode, prefix: str, depth: int, lines: list[str]) -> None:
        if depth <= 0:
            return
        children = sorted(
            node.children.values(), key=lambda c: (c.node_type is NodeType.FILE, c.name)
        )
        for i, child in enumerate(children):
            last = i == len(children) - 1
            branch = "└── " if last else "├── "
            if child.node_type is NodeType.DIRECTORY:
                lines.append(f"{prefix}{branch}{child.name}/ ({self.memory_count(child)})")
                self._render(child, prefix + ("    " if last else "│   "), depth - 1, lines)
            else:
                lines.append(f"{prefix}{branch}{child.name}")

    def get_structure_summary(self) -> str:
        """One line per top-level folder: name, memory count, its README's opening."""
        summary = []
        for name, child in self.root.children.items():
            if child.node_type is not NodeType.DIRECTORY:
                continue
            readme = self.content_of(f"{name}/{README}") if README in child.children else None
            description = " ".join((readme or "No description").split())[:200]
            summary.append(f"- {name}/ ({self.memory_count(child)} files): {description}")
        return "\n".join(summary)
