"""The memory tree: folders with their memory counts, memories by title, loaded lazily
(a folder is read when it is opened; at first only the top level and every folder's count).

It follows the selection: moving through it (mouse or keys) opens the item in the preview,
and whatever the preview shows (a chat source, a search hit, a file followed after a move)
is the item highlighted here, kept highlighted when the tree reloads after a change. A
filter (set by the find box) narrows it to the items whose title or path holds every word
typed, with their parent folders (and the item opened while it is on: a search hit); it
filters the tree already read (read again only when the memory changed) and lists the
first MAX_MATCHES matches. A folder shows its overview in the preview, or itself when it
has none (made by hand). Right-click an item to open it in the person's editor, show it
in the file manager, or reorganize a folder.

A name wider than the tree is cut in its middle ("Neural Con…networks"), where its start
and its end (a note's subject, a folder's count) stay readable, and every item's tooltip
starts with its whole name: cut at the end, look-alike names ("Overview of trans…") could
not be told apart or read in full at 800 px.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QUrl, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStyle, QTreeWidget, QTreeWidgetItem

from gam_desktop.engine.api import README, RESEARCH_DIR, Changes, DirView, MemoryFolder
from gam_desktop.gui.overview import is_overview, overview_name

PATH_ROLE = Qt.ItemDataRole.UserRole
IS_DIR_ROLE = Qt.ItemDataRole.UserRole + 1
_PLACEHOLDER = "…"
MAX_MATCHES = 500  # the filter lists this many matches at most (type more to narrow)
RESEARCH_LABEL = "Research reports"


class MemoryTree(QTreeWidget):
    """Signals: opened(path) for a memory or README the person moved to; reorganize_requested
    (folder path), edit_requested(path), reveal_requested(path) from the context menu;
    refreshed() after the items were made again (a change, a filter)."""

    opened = Signal(str)
    reorganize_requested = Signal(str)
    edit_requested = Signal(str)
    reveal_requested = Signal(str)
    refreshed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderHidden(True)
        self.setUniformRowHeights(True)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # its start and end both read
        self.setAccessibleName("Memory tree")
        self.setAccessibleDescription(
            "The arrow keys show each item in the preview; the menu key opens its actions"
        )
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemExpanded.connect(self._populate)
        self.currentItemChanged.connect(self._moved_to)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        self.folder: MemoryFolder | None = None
        self.view: DirView | None = None
        self.research: DirView | None = None  # the saved research reports, listed apart
        self.shown: str | None = None  # the file on show (the preview's), highlighted here
        self._item_path: str | None = None  # the highlighted item's own path (a folder's)
        self._words: list[str] = []  # the filter: every word in an item's title or path
        self._titles: dict[str, str] = {}  # titles by path, for filtering unread folders
        self._listing: list[_Entry] | None = None  # what the filter looks in (this view's)
        self._items: dict[str, QTreeWidgetItem] = {}  # the items made, by path
        self.match_count = 0  # how many items the filter matched (more than listed: capped)
        self.capped = False  # the filter matched more than MAX_MATCHES: the first are listed
        self._expanded_before: list[str] = []  # folders open before the filter narrowed it
        self._gone_open: list[str] = []  # folders open when a change removed them (a rollback)
        self._keep: str | None = None  # opened while filtered (a hit): listed though hidden
        self._quiet = False  # selecting for the preview, or rebuilding: not the person
        style = self.style()
        self._dir_icon = style.standardIcon(QStyle.StandardPixmap.SP_DirIcon)
        self._file_icon = style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)

    # -- what is shown --------------------------------------------------------------------

    def show_folder(self, folder: MemoryFolder | None) -> None:
        """A memory was opened: another one starts unfiltered, with nothing selected; the
        same one again (its settings saved) keeps its filter, folders and selection."""
        if folder is None or self.folder is None or folder.root != self.folder.root:
            self.shown = self._item_path = None
            self._words, self._titles, self._expanded_before = [], {}, []
            self._gone_open = []
        self.folder = folder
        self.refresh(reload=True)

    def memory_changed(self, changes: Changes) -> None:
        """Counts and titles may have changed anywhere above a changed file: read the
        folder again (the folders open stay open, the item on show stays highlighted)."""
        if not changes.empty:
            self.refresh(reload=True)

    def refresh(self, expanded: list[str] | None = None, reload: bool = False) -> None:
        """Make the items again: from the folder read again with `reload` (or when it was
        not read yet), else from the view already read (the filter changed)."""
        expanded = self._expanded_paths() if expanded is None else expanded
        # A folder a rollback removed opens again when the rollback is undone: it came back
        # collapsed, whatever the person had opened in it.
        expanded = expanded + [path for path in self._gone_open if path not in expanded]
        self._quiet = True
        self.match_count, self.capped = 0, False
        try:
            self.clear()
            self._items = {}
            if self.folder is None or not self.folder.root.is_dir():
                self.view, self._listing = None, None
                return
            if reload or self.view is None:
                # Folders are read when opened; the filter reads the whole tree (once).
                self.view, self._listing = self.folder.shallow_view(), None
                self.research = self.folder.research_view()
            everything = self._whole_view() if self._words else None
            if everything is not None:
                shown, whole = self._matching(everything)
                self._fill_filtered(self.invisibleRootItem(), everything, shown, whole, top=True)
            elif self.view is not None:
                self._fill(self.invisibleRootItem(), self.view, top=True)
            for path in sorted(expanded, key=len):
                item = self.item_at(path)
                if item is not None and item.data(0, IS_DIR_ROLE):
                    item.setExpanded(True)
            self._gone_open = [path for path in expanded if path not in self._items]
            self._highlight()
        finally:
            self._quiet = False
            self.refreshed.emit()

    def memory_count(self) -> int:
        return self.view.memory_count() if self.view else 0

    def item_at(self, path: str) -> QTreeWidgetItem | None:
        """The item of `path` (populating folders on the way), or None."""
        parts = path.split("/")
        for i in range(1, len(parts)):
            folder = self._items.get("/".join(parts[:i]))
            if folder is None:
                return None
            if _unpopulated(folder):
                self._populate(folder)
        return self._items.get(path)

    # -- the selection follows the preview ------------------------------------------------

    def select_path(self, path: str | None) -> None:
        """Highlight the item of the file on show (a folder for its README), without opening
        it again; nothing when it is not in the tree (a conversation, a fact, gone)."""
        opened, self.shown = path != self.shown, path
        current = self.currentItem()
        if path is not None and current is not None and _target(current) == path:
            self._item_path = current.data(0, PATH_ROLE)
            return
        self._item_path = _item_path_of(path) if path is not None else None
        if opened and path is not None and self._hidden(path):
            self._keep = self._item_path  # opened while filtered (a search hit): listed too
            self.refresh()
            return
        self._quiet = True
        try:
            self._highlight()
        finally:
            self._quiet = False

    def _hidden(self, path: str) -> bool:
        """Whether the filter hides `path`, an item of the tree."""
        return bool(self._words) and self._find(path) is None and self._in_view(path)

    def _highlight(self) -> None:
        item = self._find(self.shown) if self.shown is not None else None
        if item is None:
            self.setCurrentIndex(QModelIndex())  # no current item
            self.clearSelection()
            return
        parent = item.parent()
        while parent is not None:
            parent.setExpanded(True)
            parent = parent.parent()
        self.setCurrentItem(item)
        self.scrollToItem(item)

    def _find(self, path: str | None) -> QTreeWidgetItem | None:
        """The item to highlight for `path`: the one the person chose (a folder or its
        Overview item for a README), else the folder of a README, else the file's."""
        if path is None:
            return None
        if self._item_path is not None:
            item = self.item_at(self._item_path)
            if item is not None and _target(item) == path:
                return item
        folder = path.removesuffix(f"/{README}") if path.endswith(f"/{README}") else None
        if folder:
            item = self.item_at(folder)
            if item is not None and item.data(0, IS_DIR_ROLE):
                return item
        return self.item_at(path)

    def _moved_to(self, current: QTreeWidgetItem | None, _previous: object = None) -> None:
        """The person moved the selection (a click, the arrow keys): show that item."""
        if not self._quiet and current is not None:
            self._open(current)

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self._open(item)

    def _open(self, item: QTreeWidgetItem) -> None:
        target = _target(item)
        if target is None:
            return
        self._item_path = item.data(0, PATH_ROLE)
        if target != self.shown:  # a click on the item already shown opens nothing again
            self.opened.emit(target)

    # -- the filter -----------------------------------------------------------------------

    def set_filter(self, text: str, titles: Mapping[str, str] | None = None) -> None:
        """Show only the items whose title or path holds every word of `text` (any case),
        with their folders; "" shows everything again, folders open as they were."""
        words = text.lower().split()
        if titles is not None:
            self._titles, self._listing = dict(titles), None
        if words == self._words and titles is None:
            return
        if words and not self._words:
            self._expanded_before = self._expanded_paths()
        if words != self._words:
            self._keep = None
        was_filtered, self._words = bool(self._words), words
        self.refresh(self._expanded_before if was_filtered and not words else None)

    @property
    def filtered(self) -> bool:
        return bool(self._words)

    def matches(self) -> list[str]:
        """The paths of the items the filter shows (every item when there is none)."""
        paths, stack = [], [self.invisibleRootItem()]
        while stack:
            for child in _children(stack.pop()):
                if child.data(0, PATH_ROLE) is not None:
                    paths.append(child.data(0, PATH_ROLE))
                    stack.append(child)
        return paths

    def first_match(self) -> QTreeWidgetItem | None:
        """The first memory the filter shows."""
        stack = list(reversed(list(_children(self.invisibleRootItem()))))
        while stack:
            item = stack.pop()
            if item.data(0, IS_DIR_ROLE) is False and not is_overview(item.data(0, PATH_ROLE)):
                return item
            if not _unpopulated(item):
                stack.extend(reversed(list(_children(item))))
        return None

    def _matching(self, view: DirView) -> tuple[set[str], set[str]]:
        """(the paths to show: the first MAX_MATCHES matching memories and folders, their
        folders, and the item opened while the filter was on; the matching folders, shown
        whole, what they hold not looked at). Counts every match in `match_count`."""
        shown: set[str] = set()
        whole: set[str] = set()
        if self._listing is None:  # once per view and titles, not at every keystroke
            self._listing = _listing(view, self._titles)
        listing = self._listing
        found: range | list[int] = range(len(listing))  # holding every word, word by word
        for word in self._words:
            found = [at for at in found if word in listing[at].text]
        inside = 0  # the entries up to here are in a folder matched (listed whole)
        for at in found:
            if at < inside:
                continue
            entry = listing[at]
            self.match_count += 1
            if self.match_count <= MAX_MATCHES:
                _with_folders(shown, entry.path)
                if entry.folder:
                    whole.add(entry.path)
            inside = entry.after
        self.capped = self.match_count > MAX_MATCHES
        if self._keep is not None and self._in_view(self._keep):
            _with_folders(shown, self._keep)
            if self._node(self._keep) is not None:  # a folder opened: listed whole
                whole.add(self._keep)
        return shown, whole

    def _in_view(self, path: str) -> bool:
        """Whether `path` is a folder or memory of the tree (not a conversation, a fact)."""
        node = self.view
        parts = _item_path_of(path).split("/") if path else []
        for i, part in enumerate(parts):
            if node is None:
                return False
            if i == len(parts) - 1 and (part in node.files or part == README):
                return True
            node = node.subdirs.get(part)
        return node is not None

    # -- building the items ---------------------------------------------------------------

    def _fill(self, parent: QTreeWidgetItem, node: DirView, top: bool = False) -> None:
        if top and (self._shown().root / README).is_file():
            self._file_item(parent, README, overview_name(README))
        for sub in node.subdirs.values():
            self._dir_item(parent, sub, lazy=True)
        if top and self.research is not None:  # (the document tree leaves research/ out)
            self._research_item(parent, self.research)
        if node.files:
            fronts = self._shown().read_fronts(node)
            titles = {
                name: str(fronts.get(name, {}).get("title") or name.removesuffix(".md"))
                for name in node.files
            }
            labels = told_apart(titles, fronts)
            for name in node.files:
                item = self._file_item(parent, node.child_path(name), labels[name])
                _describe(item, labels[name], str(fronts.get(name, {}).get("tldr", "")))

    def _fill_filtered(
        self,
        parent: QTreeWidgetItem,
        node: DirView,
        shown: set[str],
        whole: set[str],
        top: bool = False,
    ) -> int:
        """The items the filter keeps; returns how many memories of `node` it shows."""
        count = 0
        if top and README in shown:
            self._file_item(parent, README, overview_name(README))
        for sub in node.subdirs.values():
            if sub.path in whole:
                self._dir_item(parent, sub, lazy=True)
                count += sub.memory_count()
            elif sub.path in shown:
                item = self._dir_item(parent, sub, lazy=False)
                readme = f"{sub.path}/{README}"
                if readme in shown:
                    self._file_item(item, readme, overview_name(readme))
                inside = self._fill_filtered(item, sub, shown, whole)
                item.setText(
                    0, f"{sub.path.rsplit('/', 1)[-1]}  ({inside} of {sub.memory_count()})"
                )
                item.setExpanded(True)
                count += inside
        listed = [name for name in node.files if node.child_path(name) in shown]
        titles = {
            name: self._titles.get(node.child_path(name)) or name.removesuffix(".md")
            for name in listed
        }
        labels = told_apart(titles, {})
        if any(labels[n] != titles[n].replace("_", " ") for n in listed):  # pages, as unfiltered
            labels = told_apart(titles, self._shown().read_fronts(node))
        for name in listed:
            path = node.child_path(name)
            _describe(self._file_item(parent, path, labels[name]), labels[name], path)
            count += 1
        return count

    def _dir_item(self, parent: QTreeWidgetItem, sub: DirView, lazy: bool) -> QTreeWidgetItem:
        name = sub.path.rsplit("/", 1)[-1]
        item = self._items[sub.path] = QTreeWidgetItem(parent, [f"{name}  ({sub.memory_count()})"])
        item.setIcon(0, self._dir_icon)
        item.setData(0, PATH_ROLE, sub.path)
        item.setData(0, IS_DIR_ROLE, True)
        _describe(item, name, sub.description or sub.path)
        if lazy:
            QTreeWidgetItem(item, [_PLACEHOLDER])
        return item

    def _research_item(self, parent: QTreeWidgetItem, research: DirView) -> None:
        """The saved research reports, after the documents' folders: only Find reached
        them (issue 39)."""
        item = self._dir_item(parent, research, lazy=True)
        item.setText(0, f"{RESEARCH_LABEL}  ({len(research.files)})")
        _describe(item, RESEARCH_LABEL, f"Saved from the chat ({RESEARCH_DIR}/)")

    def _file_item(self, parent: QTreeWidgetItem, path: str, label: str) -> QTreeWidgetItem:
        item = self._items[path] = QTreeWidgetItem(parent, [label])
        item.setIcon(0, self._file_icon)
        item.setData(0, PATH_ROLE, path)
        item.setData(0, IS_DIR_ROLE, False)
        _describe(item, label)
        return item

    def _populate(self, item: QTreeWidgetItem) -> None:
        if not _unpopulated(item):
            return
        item.takeChild(0)
        node = self._node(item.data(0, PATH_ROLE))
        if node is not None:
            readme = f"{node.path}/{README}"
            if (self._shown().root / readme).is_file():
                self._file_item(item, readme, overview_name(readme))
            self._fill(item, node)

    def _shown(self) -> MemoryFolder:
        """The folder on show: there is one whenever the tree has items."""
        if self.folder is None:
            raise LookupError("no memory folder is shown in the tree")
        return self.folder

    def _node(self, path: str) -> DirView | None:
        """The view of the folder `path`, its contents read now if they were not yet."""
        if path == RESEARCH_DIR:
            return self.research
        node = self.view
        for part in path.split("/") if path else []:
            child = node.subdirs.get(part) if node else None
            if node is not None and child is not None and child.total is not None:
                child = self._shown().shallow_view(child.path)
                if child is None:  # gone meanwhile: the next change reloads the tree
                    return None
                node.subdirs[part] = child
            node = child
        return node

    def _whole_view(self) -> DirView | None:
        """The whole tree read (the filter looks in every folder)."""
        if self.view is not None and any(d.total is not None for d in self.view.walk()):
            self.view, self._listing = self._shown().load_view(), None
        return self.view

    def _expanded_paths(self) -> list[str]:
        paths, stack = [], [self.invisibleRootItem()]
        while stack:
            item = stack.pop()
            for child in _children(item):
                if child.isExpanded():
                    paths.append(child.data(0, PATH_ROLE))
                    stack.append(child)
        return paths

    # -- the context menu -----------------------------------------------------------------

    def menu_for(self, item: QTreeWidgetItem) -> QMenu | None:
        """What can be done with an item: open it in the person's editor (a folder: its
        overview), show it in the file manager, reorganize a folder."""
        path = item.data(0, PATH_ROLE)
        if path is None:
            return None
        is_dir = bool(item.data(0, IS_DIR_ROLE))
        menu = QMenu(self)
        readme = f"{path}/{README}"
        editable = not is_dir or (self.folder is not None and (self.folder.root / readme).is_file())
        edit = QAction("Open overview in &editor" if is_dir else "Open in &editor", menu)
        edit.setToolTip("Open it in your own editor; the change is recorded in the history")
        edit.setEnabled(editable)
        edit.triggered.connect(lambda: self.edit_requested.emit(readme if is_dir else path))
        menu.addAction(edit)
        reveal = QAction("Show in &folder", menu)
        reveal.triggered.connect(lambda: self.reveal_requested.emit(path))
        menu.addAction(reveal)
        if is_dir and path != RESEARCH_DIR:  # reports are not the taxonomy's to move
            menu.addSeparator()
            reorganize = QAction("&Reorganize this folder…", menu)
            reorganize.triggered.connect(lambda: self.reorganize_requested.emit(path))
            menu.addAction(reorganize)
        return menu

    def _menu(self, position) -> None:
        item = self.itemAt(position)
        menu = self.menu_for(item) if item is not None else None
        if menu is not None:
            menu.exec(self.viewport().mapToGlobal(position))


def reveal(file: Path, open_url: Callable[[QUrl], object]) -> None:
    """Show `file` in the file manager: selected in its folder where the platform can
    (Explorer, Finder), else its folder opened (a folder: itself)."""
    if sys.platform == "win32" and file.exists():
        subprocess.Popen(["explorer", f"/select,{os.path.normpath(file)}"])
    elif sys.platform == "darwin" and file.exists():
        subprocess.Popen(["open", "-R", str(file)])
    else:
        open_url(QUrl.fromLocalFile(str(file if file.is_dir() else file.parent)))


def told_apart(
    titles: Mapping[str, str], fronts: Mapping[str, Mapping[str, Any]]
) -> dict[str, str]:
    """Each note's label in its folder (by file name): its title; where notes of the folder
    share a title (they looked identical in the tree), what tells them apart after it:
    their pages when each has pages of its own, else the file's name."""
    labels = {name: title.replace("_", " ") for name, title in titles.items()}
    same: dict[str, list[str]] = {}
    for name, label in labels.items():
        same.setdefault(" ".join(label.casefold().split()), []).append(name)
    for names in same.values():
        if len(names) < 2:
            continue
        pages = {name: _pages(fronts.get(name, {})) for name in names}
        by_pages = all(pages.values()) and len(set(pages.values())) == len(names)
        for name in names:
            labels[name] += f"  · {pages[name] if by_pages else name.removesuffix('.md')}"
    return labels


def _pages(front: Mapping[str, Any]) -> str:
    """ "page 4", "pages 2–3" from a note's front matter ("" without pages)."""
    pages = front.get("pages")
    if not isinstance(pages, list) or len(pages) != 2:
        return ""
    first, last = pages
    return f"page {first}" if first == last else f"pages {first}–{last}"


def _describe(item: QTreeWidgetItem, name: str, more: str = "") -> None:
    """The item's tooltip: its whole name (the tree may show it cut), then what else there
    is to say of it (a note's summary, a folder's description or path) unless that is the
    name again."""
    more = more.strip()
    item.setToolTip(0, name if more in ("", name) else f"{name}\n{more}")


def _target(item: QTreeWidgetItem) -> str | None:
    """The file an item shows in the preview: a memory, a README, a folder's README (the
    preview shows the folder itself when it has none)."""
    path = item.data(0, PATH_ROLE)
    if path is None or path == RESEARCH_DIR:  # the reports' folder: no overview to show
        return None
    return f"{path}/{README}" if item.data(0, IS_DIR_ROLE) else path


def _item_path_of(path: str | None) -> str:
    """The item a file on show is listed as by default: a README's folder, else itself."""
    if path is None:
        return ""
    return path.removesuffix(f"/{README}") if path.endswith(f"/{README}") else path


@dataclass(frozen=True)
class _Entry:
    """A folder or memory as the filter sees it: `text` is what a word is looked for in
    (title and path, lower case, "_" also as spaces); `after` is the index of the entry
    after it and everything it holds."""

    path: str
    text: str
    folder: bool
    after: int


def _listing(view: DirView, titles: Mapping[str, str]) -> list[_Entry]:
    """Every folder and memory of `view`, in the tree's order (a folder before what it
    holds: its folders, then its memories)."""
    listing: list[_Entry] = []

    def text(title: str, path: str) -> str:
        lower = f"{title} {path}".lower()
        return f"{lower} {lower.replace('_', ' ')}"

    def add(node: DirView) -> None:
        for name, sub in node.subdirs.items():
            at = len(listing)
            listing.append(_Entry(sub.path, "", True, 0))  # its place, filled in below
            add(sub)
            listing[at] = _Entry(
                sub.path, text(f"{name} {sub.title}", sub.path), True, len(listing)
            )
        for name in node.files:
            path = node.child_path(name)
            listing.append(
                _Entry(path, text(titles.get(path, name), path), False, len(listing) + 1)
            )

    add(view)
    return listing


def _with_folders(paths: set[str], path: str) -> None:
    """Add `path` to `paths`, with every folder above it."""
    parts = path.split("/")
    paths.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))


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
