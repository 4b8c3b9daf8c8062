"""The preview pane: a README or memory rendered as Markdown, its front matter as fields.
It follows what the memory changed: the file shown is reloaded when it changed, followed
when it moved, said to be gone when it went, and shown again when it comes back (an undo,
an editor that deletes and writes again); the empty memory's advice gives way to the
memory's overview once the first build is there (or to the tree, for files put there by
hand), and comes back when the memory is emptied. Opening the same memory again (its
settings saved) keeps the file shown. A folder with no overview (made by hand, or its
README removed) is shown as a folder: its name, how many memories and folders it holds,
what is in it. Every file shown is announced (shown(path, original)), so the tree
highlights it and the find box knows which text of it is on show. Any file shown can be
opened in the person's own editor (the watcher records what they change)."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QResizeEvent, QTextCharFormat
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import (
    DELETED_FACTS_DIR,
    READABLE,
    README,
    Changes,
    DirView,
    MemoryFolder,
    parse_memory,
    parse_time,
    plural,
)
from gam_desktop.gui import local_time, words
from gam_desktop.gui.headings import tame_headings
from gam_desktop.gui.labels import ElidedLabel, never_widens
from gam_desktop.gui.overview import folder_of, is_overview, overview_name

if TYPE_CHECKING:
    from gam_desktop.engine.api import Operation

_FIELDS = (
    ("tldr", "Summary"),
    ("subject", "About"),  # a fact's
    ("source", "Source"),
    ("tokens", "Original"),  # the part of the document it was written from: its length
    ("turns", "Turns"),  # a conversation's
    ("created", "Created"),
    ("updated", "Updated"),
)
_INNER_TABS = re.compile(r"(?<=\S)[ \t]*\t[ \t]*(?=\S)")  # a tab between words
ORIGINAL_LABEL, MEMORY_LABEL = "Original text", "Note text"  # the toggle's two sides
SELECT = "Select a note or a folder"  # nothing shown yet
NO_LONGER_TRUE = (
    "This fact was forgotten or taken back. The Facts tab lists it under “Show what is no "
    "longer true”, where Restore brings it back."
)
GONE = "It is not in the memory any more. Looking in the history for what removed it…"
GONE_UNKNOWN = (
    "It is not in the memory any more, and the history does not say what removed it (it "
    "was deleted outside the app before the history recorded it, or history is off)."
)
EMPTY_TITLE = "This memory is empty"
EMPTY_TEXT = (
    f"Drag documents ({READABLE}), or folders of them, onto this window, or use File ▸ "
    "Add documents… or File ▸ Add a folder…. You will see an estimate before anything is "
    "sent to the LLM."
)


class PreviewPane(QWidget):
    """Signals: edit_requested(path); shown(path or None, original) whenever what it shows
    changed (`original`: the memory's original text is on show, not the memory)."""

    edit_requested = Signal(str)
    open_requested = Signal(str)  # a link of the shown note to another note of the memory
    missing = Signal(str)  # a file to show is gone: the window asks the history what removed it
    operation_requested = Signal(str)  # "Show it in History": the operation (its sha)
    summarize_requested = Signal()  # a note written without the LLM: Summarize again
    shown = Signal(object, bool)

    def __init__(self) -> None:
        super().__init__()
        self.folder: MemoryFolder | None = None
        self.path: str | None = None
        self._empty = False  # showing the empty memory's advice
        self._gone: str | None = None  # the file shown until it was removed
        self.folder_shown: str | None = None  # the folder shown for its missing overview
        self._front: dict = {}
        self._body = ""
        self._showing = False  # a file being shown: announced once, when it is
        self.title = QLabel(SELECT)
        self.title.setObjectName("previewTitle")
        self.title.setWordWrap(True)
        never_widens(self.title)  # "<a long path> no longer exists"
        self.fields = QFrame()
        self.fields.setObjectName("frontMatter")
        self.form = QFormLayout(self.fields)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        # in a narrow preview (a window 800 px wide) a long value goes under its label
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.problem = QLabel()
        self.problem.setObjectName("warning")
        self.problem.setWordWrap(True)
        self.without_llm = QLabel()  # a note written without the LLM: why, and the fix
        self.without_llm.setObjectName("warning")
        self.without_llm.setWordWrap(True)
        self.without_llm.setTextFormat(Qt.TextFormat.RichText)
        self.without_llm.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.without_llm.setAccessibleName("Written without the LLM")
        self.without_llm.linkActivated.connect(lambda _link: self.summarize_requested.emit())
        self.body = QTextBrowser()
        self.body.setAccessibleName("Preview")
        # A note's links are followed here: one to another note (a research report's
        # sources, "../topic/note.md:14") opens that note; QTextBrowser would load it as a
        # document of its own and show an empty page. Web links go to the browser.
        self.body.setOpenLinks(False)
        self.body.anchorClicked.connect(self._link_clicked)
        # Short labels (what they do in their tooltips): with long ones the preview could not
        # be narrower than 340 px, and the window not narrower than 849.
        self.original = QPushButton(ORIGINAL_LABEL)
        self.original.setCheckable(True)
        self.original.setAccessibleDescription("The note, or the original text it was written from")
        self.original.toggled.connect(self._original_toggled)
        self.editor = QPushButton("Edit…")
        self.editor.setAccessibleName("Edit in your editor…")
        self.editor.setToolTip("Open this file in your own editor; the change is recorded")
        self.editor.clicked.connect(lambda: self.path and self.edit_requested.emit(self.path))
        buttons = QHBoxLayout()
        buttons.addWidget(self.original)
        buttons.addStretch(1)
        buttons.addWidget(self.editor)
        self.header = Header(self.fields, self.without_llm, self.problem)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        for widget in (self.title, self.header, self.body):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.clear()

    @property
    def empty(self) -> bool:
        """Whether it shows the empty memory's advice (how to start)."""
        return self._empty

    def clear(self) -> None:
        self.path, self._front, self._empty, self._gone = None, {}, False, None
        self.folder_shown = None
        self.title.setText(SELECT)
        self.fields.hide()
        self.problem.hide()
        self.without_llm.hide()
        self.header.fit()
        self.original.hide()
        self.editor.hide()
        self.body.setMarkdown("")
        self.shown.emit(None, False)

    def show_message(self, title: str, text: str) -> None:
        self.clear()
        self.title.setText(title)
        self.body.setMarkdown(text)

    def show_memory(self, folder: MemoryFolder, empty: bool) -> None:
        """A memory was opened: nothing selected yet, or how to start when it is `empty`.
        The same memory opened again (its settings were saved) keeps the file shown."""
        if self.path is not None and self.folder is not None and self.folder.root == folder.root:
            self.show_file(folder, self.path, original=self.original.isChecked())
            return
        self.folder = folder
        self.clear()
        if empty:
            self.show_message(EMPTY_TITLE, EMPTY_TEXT)
            self._empty = True

    def memory_changed(self, changes: Changes) -> None:
        """Reload the file shown if it changed, follow it if it moved, say it is gone if it
        was removed (the empty memory's advice if nothing is left) and show it again if it
        comes back; after the first build, show the memory's overview. A folder shown for
        lack of an overview is shown again when anything in it changed."""
        folder = self.folder
        if folder is None:
            return
        if self._empty:
            self._leave_empty(folder)
            return
        if self.path is None:
            gone = self._gone
            if gone is not None and changes.touches(gone):
                back = changes.moved_to(gone) or gone
                if (folder.root / back).is_file() or (
                    is_overview(back) and (folder.root / folder_of(back)).is_dir()
                ):
                    self.show_file(folder, back)  # (a folder's: the folder, if no overview)
            return
        if not changes.touches(self.path if self.folder_shown is None else self.folder_shown):
            return
        moved = changes.moved_to(self.path)
        if moved is not None and moved.startswith(f"{DELETED_FACTS_DIR}/"):
            self._no_longer_true(self.path)  # (it was still shown after a Forget)
            return
        original = self.original.isChecked()  # the same file: as it was being read
        self.show_file(folder, changes.moved_to(self.path) or self.path, original=original)
        if self.path is None and _is_empty(folder):  # everything went (the first build undone)
            self.show_memory(folder, empty=True)

    def _no_longer_true(self, path: str) -> None:
        """The fact shown was forgotten or taken back: said so, and shown again if it is
        restored (its file comes back)."""
        statement = str(self._front.get("statement") or self.title.text())
        self.clear()
        self.title.setText(f"No longer true: {statement}")
        self.body.setMarkdown(NO_LONGER_TRUE)
        self._gone = path

    def _leave_empty(self, folder: MemoryFolder) -> None:
        """The empty memory's advice, until there is something: its overview once built,
        else (files put there by hand) the tree's invitation to pick one."""
        if (folder.root / README).is_file():
            self.show_file(folder, README)
        elif not _is_empty(folder):
            self.clear()

    def explain_removal(self, path: str, operation: Operation | None) -> None:
        """What removed `path`, shown while it is still the file missing: the operation
        (by its summary and time) and how to get the file back (roll that operation back;
        a link selects it in History)."""
        if self.path is not None or self._gone != path:
            return  # something else is shown by now
        if operation is None:
            self.body.setMarkdown(GONE_UNKNOWN)
            return
        from gam_desktop.gui.history_panel import rollback_label

        what = "This folder" if is_overview(path) else "This note"
        summary = html.escape(words.counted_notes(operation.summary))
        when = html.escape(local_time.when(operation.time, in_sentence=True))
        button = html.escape(rollback_label(operation).removesuffix("…"))
        self.body.setHtml(
            f"<p>{what} was removed by <b>“{summary}”</b> ({when}).</p>"
            f"<p>To get it back, roll back “{summary}”: "
            f'<a href="history:{html.escape(operation.sha)}">show it in History</a> and '
            f"choose <b>{button}…</b> (or Edit ▸ Undo, when it is the last operation). The "
            "undo is recorded too, and can itself be undone.</p>"
        )

    def _link_clicked(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        if url.scheme() == "history":  # a removed file's: the operation that removed it
            self.operation_requested.emit(url.path())
            return
        if url.scheme() == "summarize":  # a note written without the LLM
            self.summarize_requested.emit()
            return
        if url.scheme() or not self.path or self.folder is None:
            return  # file:, javascript: and the like from an untrusted note: nothing
        target = linked_note(self.path, url.path())
        if target is not None and (self.folder.root / target).is_file():
            self.open_requested.emit(target)

    def show_file(self, folder: MemoryFolder, path: str, original: bool = False) -> None:
        """Show `path`; with `original`, the original text it was written from, if known.
        A folder's overview that is not there shows the folder itself."""
        self.folder, self.path, self._empty, self.folder_shown = folder, path, False, None
        file = folder.root / path
        if not file.is_file():
            if is_overview(path) and self._show_folder(folder, path):
                return
            self.clear()
            gone = folder_of(path) if is_overview(path) and folder_of(path) else path
            self.title.setText(f"{breakable(gone)} no longer exists")
            self._gone = path
            self.body.setMarkdown(GONE)  # (an empty page was all it showed)
            self.missing.emit(path)
            return
        self._showing = True
        try:
            self._show_parsed(folder, path, file.read_text(encoding="utf-8", errors="replace"))
            if original and not self.original.isHidden():
                self.original.setChecked(True)
        finally:
            self._showing = False
        self.shown.emit(path, self.original.isChecked())

    def _show_parsed(self, folder: MemoryFolder, path: str, text: str) -> None:
        parsed = parse_memory(text)
        # an overview's listing counts notes ("(5 notes)"; the engine writes "memories")
        body = words.counted_notes(parsed.body) if is_overview(path) else parsed.body
        self._front, self._body = parsed.front, body
        front = parsed.front
        title = str(front.get("title") or front.get("statement") or path)  # a fact: statement
        self.title.setText(
            overview_name(path) if title == path and is_overview(path) else title.replace("_", " ")
        )
        self._fill_fields()
        self.problem.setVisible(bool(parsed.problem) and text.startswith("---"))
        self.problem.setText(
            f"⚠ The front matter of this file is broken: {parsed.problem}. "
            "It is shown and searched as it is; fix it in your editor (Edit… "
            "below, or right-click it in the tree ▸ Open in editor)."
        )
        self.header.fit()
        self.original.setChecked(False)
        self.original.setVisible(folder.original_text(parsed.front) is not None)
        self.editor.show()
        self._render_body()

    def _show_folder(self, folder: MemoryFolder, path: str) -> bool:
        """The folder whose overview `path` would be, as the tree lists it, when there is
        one (not an empty memory's top: that has its own advice); False otherwise."""
        where = folder_of(path)
        view = folder.shallow_view(where)  # its folders' counts, not their contents
        if view is None or (not where and view.memory_count() == 0):
            return False
        self.folder_shown, self._front, self._body = where, {}, ""
        self.title.setText(where.rsplit("/", 1)[-1] if where else folder.root.name)
        self._fill_fields()
        self.problem.hide()
        self.header.fit()
        self._showing = True
        try:
            self.original.setChecked(False)
        finally:
            self._showing = False
        self.original.hide()
        self.editor.hide()  # no file to edit: the context menu says why
        self.body.setHtml(_folder_html(folder, view))
        self.shown.emit(path, False)
        return True

    def _fill_fields(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        front = self._front
        for key, label in _FIELDS:
            if key not in front:
                continue
            value = str(front[key])
            moment = parse_time(front[key]) if key in ("created", "updated") else None
            if moment is not None:
                value = local_time.when(moment)
            if key == "source" and front.get("pages"):
                first, last = front["pages"]
                value += f" (page {first})" if first == last else f" (pages {first}-{last})"
            if key == "tokens" and isinstance(front[key], int):  # not "Tokens: 412"
                value = words.approximate_words(front[key])
            self.form.addRow(f"{label}:", _value_label(value, one_line=key == "source"))
        # not "fallback: true": that the LLM did not write it, why, and the fix
        fallback, reason = front.get(words.FALLBACK_KEY), front.get(words.FALLBACK_REASON_KEY)
        self.without_llm.setText(words.without_llm_html(str(reason) if reason else None))
        self.without_llm.setVisible(bool(fallback))
        self.fields.setVisible(self.form.rowCount() > 0)
        self.header.fit()

    def _original_toggled(self, _checked: bool) -> None:
        self._render_body()
        if not self._showing and self.path is not None:
            self.shown.emit(self.path, self.original.isChecked())  # the other text of it

    def _render_body(self) -> None:
        # Plain text takes the format where the cursor was: after a report, the original
        # text came out in its heading's huge bold font (when the cursor sat in the heading).
        self.body.setCurrentCharFormat(QTextCharFormat())
        if self.original.isChecked() and self.folder is not None:
            original = self.folder.original_text(self._front) or ""
            self.body.setPlainText(readable_original(original))
            self.original.setText(MEMORY_LABEL)
            self.original.setToolTip("Show the note again")
        else:
            self.body.setMarkdown(self._body)
            tame_headings(self.body.document())  # (a report's sections were over its title)
            self.original.setText(ORIGINAL_LABEL)
            self.original.setToolTip("Show the original text this note was written from")


class Header(QScrollArea):
    """What is said above a note's text (its fields, why it was written without the LLM, a
    broken front matter): as tall as its width needs while there is room, scrolled rather
    than cut when there is not. In a window 600 px high a long summary and the note on the
    LLM did not fit above the text: the summary was cut in the middle of a line."""

    def __init__(self, *widgets: QWidget) -> None:
        super().__init__()
        self.parts = widgets
        self.inner = inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget)
            widget.installEventFilter(self)  # a part given the keyboard is scrolled to
        self.setWidget(inner)
        self.setWidgetResizable(True)  # as wide as the pane: its labels wrap, never scroll
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # never taller than all of it: the room left is the note's text's
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        # No Tab stop of its own: the link in it has one.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for surface in (self.viewport(), inner):  # the pane's own background shows through
            surface.setAutoFillBackground(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FocusIn and isinstance(watched, QWidget):
            self.ensureWidgetVisible(watched, 0, 0)  # (Tab from outside does not scroll)
        return super().eventFilter(watched, event)

    def fit(self) -> None:
        """Shown while any of it is (a README has none of it), at its new height."""
        self.setVisible(any(not part.isHidden() for part in self.parts))
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        """All of it at the width it has beside a scroll bar: given that height, the bar
        goes (at the width the bar took, the lines wrapped more, and it stayed)."""
        inner, hint = self.inner, self.inner.sizeHint()
        width = max(self.width() - self.verticalScrollBar().sizeHint().width(), 1)
        height = inner.heightForWidth(width)  # (-1: nothing in it wraps)
        return QSize(hint.width(), height if height >= 0 else hint.height())

    def minimumSizeHint(self) -> QSize:
        """A few lines: the rest is scrolled to when the note's text needs the room."""
        lines = 4 * self.fontMetrics().lineSpacing()
        return QSize(self.inner.minimumSizeHint().width(), min(lines, self.sizeHint().height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # another width: another height for its wrapped lines


def _value_label(value: str, one_line: bool = False) -> QLabel:
    """A field's value: wrapped; `one_line` (a file's name, one long word that wrapping
    cannot cut and that clipped or widened a narrow preview) cut with "…", whole on hover."""
    text = ElidedLabel(value) if one_line else QLabel(value)
    text.setTextFormat(Qt.TextFormat.PlainText)  # as written: no "&quot;" shown
    text.setWordWrap(not one_line)
    text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return text


def breakable(path: str) -> str:
    """A path a title may wrap after its slashes and underscores (a zero-width space after
    each): one long word was cut at the preview's edge."""
    return path.replace("/", "/\u200b").replace("_", "_\u200b")


def readable_original(text: str) -> str:
    """A document's original text as a person reads it: a PDF's text separates its words
    with tabs, drawn as columns (unreadable); between words a tab is a space. Tabs that
    indent a line (code, a list) are kept."""
    return _INNER_TABS.sub(" ", text)


def _is_empty(folder: MemoryFolder) -> bool:
    """No overview and no memory: what an empty memory's advice is for."""
    if (folder.root / README).is_file():
        return False
    top = folder.shallow_view()
    return top is None or top.memory_count() == 0


def _folder_html(folder: MemoryFolder, view: DirView) -> str:
    """A folder without an overview: what it holds (its folders with their counts, its
    memories by title), as the tree lists it."""
    where = "memory" if not view.path else "folder"
    holds = [plural(len(view.subdirs), "folder")] if view.subdirs else []
    if view.files or not view.subdirs:
        holds.append(plural(len(view.files), "note"))
    total = view.memory_count()
    in_all = f", {plural(total, 'note')} in all" if view.subdirs and total else ""
    fronts = folder.read_fronts(view) if view.files else {}
    items = [
        f"<li><b>{html.escape(name)}/</b> — {plural(sub.memory_count(), 'note')}</li>"
        for name, sub in view.subdirs.items()
    ]
    for name in view.files:
        title = str(fronts.get(name, {}).get("title") or name.removesuffix(".md"))
        items.append(f"<li>{html.escape(title.replace('_', ' '))}</li>")
    listing = f"<ul>{''.join(items)}</ul>" if items else ""
    return (
        f"<p>This {where} has no overview ({README}). It holds {' and '.join(holds)}"
        f"{in_all}{':' if items else '.'}</p>{listing}"
    )


def linked_note(shown: str, link: str) -> str | None:
    """The memory path a relative link of the note `shown` points to ("../topic/note.md:14"
    from "research/r.md" is "topic/note.md"), or None when it leads out of the memory."""
    target = re.sub(r":\d+(-\d+)?$", "", link)  # a line reference
    parts: list[str] = [] if target.startswith("/") else shown.split("/")[:-1]
    for part in target.split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or None
