"""Find: one box over the memory tree. What is typed there filters the tree by title and
path at once (the matching memories, with their folders), and searches the text of the
memory (BM25, through `Workflow.search`, on a task thread) a moment later: the files found
are listed under the tree, each with its title, its folder and a snippet with the words
marked. Choosing one (a click, the arrow keys) opens it in the preview (its original
text, when the words were found there), and the tree highlights it. Enter opens the first
match, Down goes to the tree (to the hits when no title matches), Escape clears the box.

Both follow the memory: after any change the titles are read again and the search is run
again. Only the latest search runs (the one before it is cancelled), and an answer about
another memory, or about an older query, is dropped. The window calls `focus_filter`
(Ctrl+F) and `follow(path, original)` with whatever the preview shows.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QKeyEvent, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import Changes, Found, MemoryFolder, plural
from gam_desktop.gui import theme
from gam_desktop.gui.accessible import name_clear_button
from gam_desktop.gui.overview import is_overview, overview_name
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.tree_panel import MAX_MATCHES, MemoryTree
from gam_desktop.gui.workers import Task

PATH_ROLE = Qt.ItemDataRole.UserRole
ORIGINAL_ROLE = Qt.ItemDataRole.UserRole + 1
HTML_ROLE = Qt.ItemDataRole.UserRole + 2
SEARCH_DELAY_MS = 250  # typing pauses this long before the text is searched
FILTER_DELAY_MS = 80  # ...and this long before the tree is narrowed (10,000 memories)
LIMIT = 30  # files listed


class FindBox(QLineEdit):
    """The find box: Down leaves it for the tree below it (for the hits when the filter
    leaves the tree empty: `FindPanel._down`), Escape clears it (then leaves it)."""

    down = Signal()
    escaped = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Down:
            self.down.emit()
        elif event.key() == Qt.Key.Key_Escape:
            if self.text():
                self.clear()
            else:
                self.escaped.emit()
        else:
            super().keyPressEvent(event)


class FindPanel(QWidget):
    """Signals: opened(path, original) when a search hit is chosen (`original`: the words
    were found in the memory's original wording, so show that)."""

    opened = Signal(str, bool)

    def __init__(self, tree: MemoryTree, session: MemorySession) -> None:
        super().__init__()
        self.tree = tree
        self.session = session
        self.shown: str | None = None  # what the preview shows
        self.shown_original = False  # ...and whether it shows its original text
        self.found: list[Found] = []
        self._root: Path | None = None
        self._generation = 0  # of the search under way: older answers are dropped
        self._search: Task | None = None  # the search under way: cancelled by the next
        self._titles_generation = 0  # of the titles read under way: older ones are dropped
        self._titles_task: Task | None = None
        self._titles_fresh = False
        self._titles_loading = False
        self._titles_again = False  # the memory changed while the titles were being read
        self._quiet = False
        self.box = FindBox()
        self.box.setPlaceholderText("Find by title, path or text")
        self.box.setAccessibleName("Find in this memory")
        name_clear_button(self.box, "Clear the find box")
        self.box.setToolTip(
            "Filters the tree by title and path, and searches the text of the memory "
            "(Enter opens the first match, Down goes to the tree, or to the text's matches "
            "when no title matches)"
        )
        self.box.textChanged.connect(self._typed)
        self.box.returnPressed.connect(self.open_first)
        self.box.down.connect(self._down)
        self.box.escaped.connect(self.tree.setFocus)
        self.note = QLabel()
        self.note.setObjectName("findNote")
        self.note.setWordWrap(True)
        self.note.hide()
        self.hits_title = QLabel()
        self.hits_title.setObjectName("findHitsTitle")
        self.hits_title.setWordWrap(True)
        self.hits = QListWidget()
        self.hits.setObjectName("findHits")
        self.hits.setAccessibleName("Found in the text")
        self.hits.setWordWrap(True)
        self.hits.setUniformItemSizes(False)
        self.hits.setResizeMode(QListView.ResizeMode.Adjust)
        self.hits.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.hits.setItemDelegate(HitDelegate(self.hits))
        self.hits.currentItemChanged.connect(self._moved_to)
        self.hits.itemClicked.connect(self._open_hit)
        self.hits.itemActivated.connect(self._open_hit)
        self.results = QWidget()
        results = QVBoxLayout(self.results)
        results.setContentsMargins(0, 4, 0, 0)
        self.hits_title.setContentsMargins(4, 0, 4, 0)
        self.note.setContentsMargins(4, 0, 4, 0)
        results.setSpacing(2)
        results.addWidget(self.hits_title)
        results.addWidget(self.hits, 1)
        self.results.hide()
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(tree)
        self.split.addWidget(self.results)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.box)
        layout.addWidget(self.note)
        layout.addWidget(self.split, 1)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SEARCH_DELAY_MS)
        self.timer.timeout.connect(self.search)
        self.filter_timer = QTimer(self)
        self.filter_timer.setSingleShot(True)
        self.filter_timer.setInterval(FILTER_DELAY_MS)
        self.filter_timer.timeout.connect(self._filter)
        tree.refreshed.connect(self._say_matches)
        session.opened.connect(self.memory_opened)
        session.memory_changed.connect(self.memory_changed)

    # -- what the window calls ------------------------------------------------------------

    def focus_filter(self) -> None:
        """Ctrl+F: to the box, its text selected (typing replaces it)."""
        self.box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.box.selectAll()

    def follow(self, path: str | None, original: bool = False) -> None:
        """The preview shows `path` (None: nothing; with `original`, its original text):
        highlight it in the tree and among the hits, without opening it again."""
        self.shown, self.shown_original = path, original
        self.tree.select_path(path)
        self._select_hit()

    def _select_hit(self) -> None:
        """The hit of the file on show selected, if it is one."""
        row = next((i for i, hit in enumerate(self.found) if hit.path == self.shown), None)
        self._quiet = True
        try:
            if row is None:
                self.hits.setCurrentRow(-1)
            else:
                self.hits.setCurrentRow(row)
        finally:
            self._quiet = False

    def memory_opened(self, root: Path, _folder: MemoryFolder) -> None:
        """Another memory starts with an empty box; the same one again keeps it. Either
        way the titles are read again (a read under way is dropped: it may be another
        memory's)."""
        self._drop_titles()
        if root != self._root:
            self._root = root
            self.box.blockSignals(True)  # the tree starts unfiltered by itself
            self.box.clear()
            self.box.blockSignals(False)
            self._no_results()
            return
        self._typed(self.box.text(), again=True)

    def memory_changed(self, _changes: Changes) -> None:
        """Titles and texts may have changed: read them again, search again."""
        self._titles_fresh = False
        if self.box.text().strip():
            self._typed(self.box.text(), again=True)

    def open_first(self) -> None:
        """Enter: the first memory the filter shows, else the first file found."""
        self._filter()
        item = self.tree.first_match() if self.tree.filtered else None
        if item is not None:
            self.tree.setCurrentItem(item)  # the tree opens it, as a click would
        elif self.hits.count():
            first = self.hits.item(0)
            self.hits.setCurrentItem(first)
            self._open_hit(first)

    # -- filtering and searching ----------------------------------------------------------

    def _typed(self, text: str, again: bool = False) -> None:
        query = text.strip()
        if query and not self._titles_fresh:
            self._load_titles()
        if not query:
            self._filter()
            self._no_results()
            return
        self.filter_timer.start()
        self._show_results(True)
        if not again:
            self.hits_title.setText("Searching the text…")
        self.timer.start()

    def _filter(self) -> None:
        """Narrow the tree to what the box holds (now, if it was waiting)."""
        self.filter_timer.stop()
        self.tree.set_filter(self.box.text())

    def _no_results(self) -> None:
        self.timer.stop()
        self._cancel_search()  # a search under way is no longer wanted
        self.found = []
        # Quietly: the list, emptied, makes other hits current on its way, and each would
        # open in the preview (Escape showed an unrelated memory, issue 39).
        self._quiet = True
        try:
            self.hits.clear()
        finally:
            self._quiet = False
        self._show_results(False)

    def search(self) -> None:
        """Search the text for what the box holds, on a task thread."""
        query = self.box.text().strip()
        if not query:
            return
        if self.session.workflow is None:
            self.hits_title.setText("Open a memory to search it.")
            return
        self._cancel_search()
        generation, workflow = self._generation, self.session.task_workflow()
        self._search = self.session.operations.tasks.start(
            "find",
            lambda _w, _c: workflow.search(query, LIMIT),
            on_success=lambda found: self._found(generation, query, found),
            on_failure=lambda error: self._failed(generation, error),
            cancel=workflow.cancel,
        )

    def _cancel_search(self) -> None:
        """The search under way is no longer wanted: it stops at its next step, and its
        answer (if it has one already) is dropped."""
        self._generation += 1
        if self._search is not None:
            self._search.cancel.cancel()
            self._search = None

    def _found(self, generation: int, query: str, found: list[Found]) -> None:
        if generation != self._generation:
            return
        self._search = None
        self.found = found
        self._quiet = True
        try:
            self.hits.clear()
            for hit in found:
                item = QListWidgetItem(f"{_title(hit)}: {hit.snippet}")  # what a reader says
                item.setData(PATH_ROLE, hit.path)
                item.setData(ORIGINAL_ROLE, hit.original)
                item.setData(HTML_ROLE, hit_html(hit))
                item.setToolTip(hit.path + (" (its original text)" if hit.original else ""))
                self.hits.addItem(item)
        finally:
            self._quiet = False
        if len(found) >= LIMIT:  # there may be more: these are the best
            self.hits_title.setText(f"In the text: the {len(found)} best matches")
        elif found:
            self.hits_title.setText(f"In the text: {plural(len(found), 'file')}")
        else:
            self.hits_title.setText(f"Nothing in the text matches “{query}”.")
        self._select_hit()

    def _failed(self, generation: int, error: Exception) -> None:
        if generation == self._generation:
            self._search = None
            self.hits_title.setText(f"The search failed: {error}")

    def _load_titles(self) -> None:
        """The titles of every memory (the tree reads them lazily), on a task thread; one
        read at a time (the memory changing meanwhile reads them again once it is done)."""
        if self.session.workflow is None:
            return
        if self._titles_loading:
            self._titles_again = True
            return
        self._titles_loading, self._titles_again = True, False
        generation, workflow = self._titles_generation, self.session.task_workflow()
        self._titles_task = self.session.operations.tasks.start(
            "titles",
            lambda _w, _c: workflow.titles(),
            on_success=lambda titles: self._titles_read(generation, titles),
            on_failure=lambda _error: self._titles_read(generation, None),
            cancel=workflow.cancel,
        )

    def _drop_titles(self) -> None:
        """Forget the titles and any read of them under way (its answer is dropped)."""
        self._titles_generation += 1
        if self._titles_task is not None:
            self._titles_task.cancel.cancel()
            self._titles_task = None
        self._titles_fresh = self._titles_loading = self._titles_again = False

    def _titles_read(self, generation: int, titles: dict[str, str] | None) -> None:
        if generation != self._titles_generation:
            return  # asked before another memory was opened: not this one's
        self._titles_loading, self._titles_task = False, None
        if self._titles_again:
            self._load_titles()
            return
        if titles is not None:
            self._titles_fresh = True
            self.tree.set_filter(self.box.text(), titles)

    def _say_matches(self) -> None:
        if self.tree.filtered and self.tree.topLevelItemCount() == 0:
            text = "No title or path matches."
        elif self.tree.capped:
            text = (
                f"The first {MAX_MATCHES:,} of {self.tree.match_count:,} matches are listed "
                "— type more to narrow."
            )
        else:
            text = ""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def _show_results(self, shown: bool) -> None:
        self.results.setVisible(shown)

    # -- choosing a hit -------------------------------------------------------------------

    def _moved_to(self, current: QListWidgetItem | None, _previous: object = None) -> None:
        if not self._quiet and current is not None:
            self._open_hit(current)

    def _open_hit(self, item: QListWidgetItem) -> None:
        """Show a hit, in the text its words were found in (the memory or its original),
        unless exactly that is on show already."""
        path, original = item.data(PATH_ROLE), bool(item.data(ORIGINAL_ROLE))
        if path and (path, original) != (self.shown, self.shown_original):
            self.opened.emit(path, original)

    def _down(self) -> None:
        """Down from the box: into the tree, below it, on its first match if nothing there
        is selected; into the hits when the filter leaves the tree empty and the text has
        matches (nothing in the tree to go to)."""
        self._filter()
        if self.tree.topLevelItemCount() == 0 and self.hits.count():
            self.hits.setFocus(Qt.FocusReason.TabFocusReason)
            if self.hits.currentRow() < 0:
                self.hits.setCurrentRow(0)  # opens it, as the arrow keys do
            return
        self.tree.setFocus(Qt.FocusReason.TabFocusReason)
        if self.tree.currentItem() is None:
            first = self.tree.first_match() or self.tree.topLevelItem(0)
            if first is not None:
                self.tree.setCurrentItem(first)


def _title(hit: Found) -> str:
    """A hit's title: a memory's own, a README's overview name (as the tree says it)."""
    return overview_name(hit.path) if is_overview(hit.path) else hit.title.replace("_", " ")


def hit_html(hit: Found) -> str:
    """A hit as the list draws it: its title, its folder (and whether the words are in its
    original wording), and the snippet with the query's words in bold."""
    snippet, parts, at = hit.snippet, [], 0
    for start, end in hit.marks:
        parts.append(html.escape(snippet[at:start]))
        parts.append(f"<b>{html.escape(snippet[start:end])}</b>")
        at = end
    parts.append(html.escape(snippet[at:]))
    folder = hit.path.rsplit("/", 1)[0] if "/" in hit.path else "the memory's top"
    where = html.escape(folder) + (" · in its original text" if hit.original else "")
    return (
        f"<div><b>{html.escape(_title(hit))}</b></div>"
        f'<div style="color:{{muted}};font-size:small">{where}</div>'
        f"<div>{''.join(parts)}</div>"
    )


class HitDelegate(QStyledItemDelegate):
    """Draws a hit's HTML (title, folder, snippet with marks), wrapped to the list's width,
    in the theme's colours (selected: the selection's)."""

    PAD = 6

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        rect = opt.rect
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        colour = palette.color(role)
        document = self._document(index, rect.width(), colour.name() if selected else _muted())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, colour)
        painter.save()
        painter.translate(rect.left() + self.PAD, rect.top() + self.PAD // 2)
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        view = self.parent()
        width = view.viewport().width() if isinstance(view, QListWidget) else 240
        document = self._document(index, width, _muted())
        return QSize(width, int(document.size().height()) + self.PAD)

    def _document(
        self, index: QModelIndex | QPersistentModelIndex, width: int, muted: str
    ) -> QTextDocument:
        document = QTextDocument()
        view = self.parent()
        if isinstance(view, QWidget):
            document.setDefaultFont(view.font())
        document.setDocumentMargin(0)
        text = str(index.data(HTML_ROLE) or "")
        document.setHtml(text.replace("{muted}", muted))
        document.setTextWidth(max(40, width - 2 * self.PAD))
        return document


def _muted() -> str:
    app = QApplication.instance()
    return theme.colours(app)["muted"] if isinstance(app, QApplication) else "#6b7280"
