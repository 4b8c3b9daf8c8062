"""The plan of a reorganization, before anything moves: the folder before and after (two
trees side by side) and every move listed, with Apply and Cancel. Cancel is the default, so
Enter and Escape change nothing. Made for plans of hundreds of moves: every list scrolls and
none is cut short; choosing a move shows the memory in both trees."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QSplitter,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import ReorganizeOperation, plural
from gam_desktop.gui import theme


def _below(path: str, base: str) -> str:
    """`path` relative to the reorganized folder `base`."""
    return path.removeprefix(f"{base}/") if base else path


def title_of(plan: ReorganizeOperation) -> str:
    return f"Reorganize {plan.directory}/?" if plan.directory else "Reorganize the top folder?"


class ReorganizePlanDialog(QDialog):
    """Apply accepts, Cancel (the default) rejects. `before` and `after` are the folder's
    trees, `moves` the list of moves (From, To), all paths below the reorganized folder."""

    def __init__(self, plan: ReorganizeOperation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle(title_of(plan))
        self.setAccessibleName(title_of(plan))
        heading = QLabel(title_of(plan))
        heading.setObjectName("dialogHeading")
        font = heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        heading.setFont(font)
        summary = QLabel(self._summary())
        summary.setWordWrap(True)
        base = plan.directory
        old = [old for old, _new in plan.moved_files]
        new = [new for _old, new in plan.moved_files]
        self.before = _folder_tree("Before", base)
        self._before_items = _fill(self.before, base, [*old, *plan.kept_files], set(old), set())
        self.after = _folder_tree("After", base)
        self._after_items = _fill(
            self.after, base, [*new, *plan.kept_files], set(new), set(plan.new_directories)
        )
        self.moves = self._move_list()
        trees = QSplitter(Qt.Orientation.Horizontal)
        trees.addWidget(self.before)
        trees.addWidget(self.after)
        moves_label = QLabel(f"&Moves ({len(plan.moved_files):,})")
        moves_label.setBuddy(self.moves)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(moves_label)
        lower_layout.addWidget(self.moves)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(trees)
        split.addWidget(lower)
        split.setSizes([320, 220])
        buttons = QDialogButtonBox()
        self.apply_button = buttons.addButton("&Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button.setAutoDefault(False)
        self.cancel_button.setDefault(True)  # Enter changes nothing; Escape cancels (QDialog)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(summary)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(860, 620)
        self.cancel_button.setFocus()

    def _summary(self) -> str:
        plan = self.plan
        text = (
            f"{plural(len(plan.moved_files), 'note')} would move into "
            f"{plural(len(plan.new_directories), 'new folder')}"
        )
        if plan.kept_files:
            text += f"; {plural(len(plan.kept_files), 'note')} would stay where it is"
            text = text if len(plan.kept_files) == 1 else text.replace("it is", "they are")
        return (
            f"{text}. Nothing changes until you choose Apply; the reorganization is then one "
            "operation in History, which you can roll back."
        )

    def _move_list(self) -> QTreeWidget:
        moves = QTreeWidget()
        moves.setAccessibleName("Moves")
        moves.setHeaderLabels(["From", "To"])
        moves.setRootIsDecorated(False)
        moves.setUniformRowHeights(True)  # hundreds of rows stay quick
        moves.setAlternatingRowColors(True)
        base = self.plan.directory
        for old, new in self.plan.moved_files:
            row = QTreeWidgetItem([_below(old, base), _below(new, base)])
            row.setData(0, Qt.ItemDataRole.UserRole, (old, new))
            row.setToolTip(0, old)
            row.setToolTip(1, new)
            moves.addTopLevelItem(row)
        moves.resizeColumnToContents(0)
        moves.currentItemChanged.connect(self._show_move)
        return moves

    def _show_move(self, row: QTreeWidgetItem | None, _previous: object) -> None:
        """The chosen move's memory, selected where it is now and where it would go."""
        if row is None:
            return
        old, new = row.data(0, Qt.ItemDataRole.UserRole)
        for tree, items, path in (
            (self.before, self._before_items, old),
            (self.after, self._after_items, new),
        ):
            item = items.get(path)
            if item is not None:
                tree.setCurrentItem(item)
                tree.scrollToItem(item)

    def move_rows(self) -> list[tuple[str, str]]:
        """The moves as listed (From, To)."""
        rows = (self.moves.topLevelItem(i) for i in range(self.moves.topLevelItemCount()))
        return [(row.text(0), row.text(1)) for row in rows if row is not None]


def review(parent: QWidget, plan: ReorganizeOperation) -> bool:
    """Show the plan, modally; True when the person chose Apply. The dialog is detached from
    `parent` once answered and freed with its last reference (as `dialogs.ask` does)."""
    dialog = ReorganizePlanDialog(plan, parent)
    try:
        return dialog.exec() == QDialog.DialogCode.Accepted
    finally:
        dialog.setParent(None)


def _folder_tree(name: str, base: str) -> QTreeWidget:
    tree = QTreeWidget()
    tree.setAccessibleName(f"{name}: {base or 'the top folder'}")
    tree.setHeaderLabels([name])
    tree.setUniformRowHeights(True)
    return tree


def _fill(
    tree: QTreeWidget, base: str, files: Iterable[str], changed: set[str], new_dirs: set[str]
) -> dict[str, QTreeWidgetItem]:
    """`files` (paths from the memory's root) as a tree under the reorganized folder:
    folders first, then memories, by name. What changes is in the normal colour (new
    folders in bold); what stays is muted. Returns the items by path."""
    style = QApplication.style()
    folder_icon = style.standardIcon(QStyle.StandardPixmap.SP_DirIcon)
    file_icon = style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)
    muted = QColor(theme.current()["muted"])
    top = QTreeWidgetItem([f"{base}/" if base else "Memory"])
    top.setIcon(0, folder_icon)
    tree.addTopLevelItem(top)
    items: dict[str, QTreeWidgetItem] = {base: top}
    files = sorted(set(files), key=str.casefold)
    for folder in _folders(files, new_dirs, base):  # parents first; folders before files
        item = QTreeWidgetItem(_parent_item(items, folder, base), [folder.rsplit("/", 1)[-1]])
        item.setIcon(0, folder_icon)
        if folder in new_dirs:
            bold = QFont(item.font(0))
            bold.setBold(True)
            item.setFont(0, bold)
            item.setText(0, f"{item.text(0)}  (new)")
        items[folder] = item
    for path in files:
        item = QTreeWidgetItem(_parent_item(items, path, base), [path.rsplit("/", 1)[-1]])
        item.setIcon(0, file_icon)
        item.setToolTip(0, path)
        if path not in changed:
            item.setForeground(0, muted)
        items[path] = item
    tree.expandAll()
    return items


def _parent_item(items: dict[str, QTreeWidgetItem], path: str, base: str) -> QTreeWidgetItem:
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    return items.get(parent) or items[base]


def _folders(files: list[str], new_dirs: set[str], base: str) -> list[str]:
    """Every folder below `base` that holds one of `files` or is new, shallowest first."""
    found = set(new_dirs)
    for path in files:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    below = [f for f in found if f.startswith(f"{base}/")] if base else [f for f in found if f]
    return sorted(below, key=lambda p: (p.count("/"), p.casefold()))
