"""The memory tree: folders with their memory counts, memories by title, loaded lazily."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStyle, QTreeWidget, QTreeWidgetItem

from gam_desktop.engine.store.changes import Changes
from gam_desktop.engine.store.folder import DirView, MemoryFolder
from gam_desktop.engine.store.markdown import README

PATH_ROLE = Qt.ItemDataRole.UserRole
IS_DIR_ROLE = Qt.ItemDataRole.UserRole + 1
_PLACEHOLDER = "…"


class MemoryTree(QTreeWidget):
    """Signals: opened(path) for a memory or README, reorganize_requested(folder path)."""

    opened = Signal(str)
    reorganize_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderHidden(True)
        self.setUniformRowHeights(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemExpanded.connect(self._populate)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        self.folder: MemoryFolder | None = None
        self.view: DirView | None = None
        style = self.style()
        self._dir_icon = style.standardIcon(QStyle.StandardPixmap.SP_DirIcon)
        self._file_icon = style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)

    def show_folder(self, folder: MemoryFolder | None) -> None:
        self.folder = folder
        self.refresh()

    def memory_changed(self, changes: Changes) -> None:
        """Counts and titles may have changed anywhere above a changed file: reload (the
        folders open stay open)."""
        if not changes.empty:
            self.refresh()

    def refresh(self) -> None:
        expanded = self._expanded_paths()
        self.clear()
        if self.folder is None or not self.folder.root.is_dir():
            return
        self.view = self.folder.load_view()
        self._fill(self.invisibleRootItem(), self.view, top=True)
        for path in sorted(expanded, key=len):
            item = self.item_at(path)
            if item is not None:
                item.setExpanded(True)

    def memory_count(self) -> int:
        return self.view.memory_count() if self.view else 0

    def item_at(self, path: str) -> QTreeWidgetItem | None:
        """The item of `path` (populating folders on the way), or None."""
        item = self.invisibleRootItem()
        for part in path.split("/"):
            if _unpopulated(item):
                self._populate(item)
            found = next(
                (c for c in _children(item) if c.data(0, PATH_ROLE).rsplit("/", 1)[-1] == part),
                None,
            )
            if found is None:
                return None
            item = found
        return item

    def _expanded_paths(self) -> list[str]:
        paths, stack = [], [self.invisibleRootItem()]
        while stack:
            item = stack.pop()
            for child in _children(item):
                if child.isExpanded():
                    paths.append(child.data(0, PATH_ROLE))
                    stack.append(child)
        return paths

    def _fill(self, parent: QTreeWidgetItem, node: DirView, top: bool = False) -> None:
        if top and (self._shown().root / README).is_file():
            self._file_item(parent, README, "Overview (README)")
        for name, sub in node.subdirs.items():
            item = QTreeWidgetItem(parent, [f"{name}  ({sub.memory_count()})"])
            item.setIcon(0, self._dir_icon)
            item.setData(0, PATH_ROLE, sub.path)
            item.setData(0, IS_DIR_ROLE, True)
            item.setToolTip(0, sub.description or sub.path)
            QTreeWidgetItem(item, [_PLACEHOLDER])
        if node.files:
            fronts = self._shown().read_fronts(node)
            for name in node.files:
                title = str(fronts.get(name, {}).get("title") or name.removesuffix(".md"))
                item = self._file_item(parent, node.child_path(name), title.replace("_", " "))
                item.setToolTip(0, str(fronts.get(name, {}).get("tldr", "")))

    def _file_item(self, parent: QTreeWidgetItem, path: str, label: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [label])
        item.setIcon(0, self._file_icon)
        item.setData(0, PATH_ROLE, path)
        item.setData(0, IS_DIR_ROLE, False)
        return item

    def _populate(self, item: QTreeWidgetItem) -> None:
        if not _unpopulated(item):
            return
        item.takeChild(0)
        node = self._node(item.data(0, PATH_ROLE))
        if node is not None:
            readme = f"{node.path}/{README}"
            if (self._shown().root / readme).is_file():
                self._file_item(item, readme, "Overview (README)")
            self._fill(item, node)

    def _shown(self) -> MemoryFolder:
        """The folder on show: there is one whenever the tree has items."""
        if self.folder is None:
            raise LookupError("no memory folder is shown in the tree")
        return self.folder

    def _node(self, path: str) -> DirView | None:
        node = self.view
        for part in path.split("/") if path else []:
            node = node.subdirs.get(part) if node else None
        return node

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if path is None:
            return
        self.opened.emit(f"{path}/{README}" if item.data(0, IS_DIR_ROLE) else path)

    def _menu(self, position) -> None:
        item = self.itemAt(position)
        if item is None or not item.data(0, IS_DIR_ROLE):
            return
        menu = QMenu(self)
        action = QAction("Reorganize this folder…", menu)
        path = item.data(0, PATH_ROLE)
        action.triggered.connect(lambda: self.reorganize_requested.emit(path))
        menu.addAction(action)
        menu.exec(self.viewport().mapToGlobal(position))


def _children(item: QTreeWidgetItem) -> Iterator[QTreeWidgetItem]:
    """The item's children (child(i) is None only out of range)."""
    for i in range(item.childCount()):
        child = item.child(i)
        if child is not None:
            yield child


def _unpopulated(item: QTreeWidgetItem) -> bool:
    """A folder item that still holds only its placeholder (filled when first expanded)."""
    first = item.child(0)
    return item.childCount() == 1 and first is not None and first.text(0) == _PLACEHOLDER
