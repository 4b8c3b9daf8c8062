"""Creating a memory, as Obsidian creates a vault: a name and a location (with Browse…), the
new folder made only when the person confirms. A place the engine refuses
(`store.location.cannot_create`: the home folder, a system folder, a drive root, a folder
inside another memory or a git repository, a folder already holding files) is refused here,
its reason shown and Create disabled. GUI thread only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import cannot_create, free_name
from gam_desktop.gui import dialogs

TITLE = "Create a memory"


def typed_path(text: str) -> Path:
    """A location as typed: `~` is the home folder; surrounding spaces and quotes go."""
    text = text.strip().strip('"').strip()
    if text == "~" or text.startswith(("~/", "~\\")):
        return Path.home() / text[2:]
    return Path(text)


class NewMemoryDialog(QDialog):
    """A name and a location; Create makes the folder and emits chosen(folder). "Open an
    existing memory…" emits chosen(folder) with the folder picked instead (nothing made):
    either way the caller opens it. Signal: chosen(Path)."""

    chosen = Signal(object)

    def __init__(
        self, parent: QWidget | None = None, documents: int = 0, location: Path | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setMinimumWidth(540)
        self.folder: Path | None = None
        start = location if location is not None else Path.home()
        self.intro = QLabel(_intro(documents))
        self.intro.setWordWrap(True)
        self.name = QLineEdit(free_name(start))
        self.name.setAccessibleName("Memory name")
        self.location = QLineEdit(str(start))
        self.location.setAccessibleName("Location: the folder the memory's folder is made in")
        self.browse = QPushButton("&Browse…")
        self.browse.setAccessibleName("Browse for the location")
        self.browse.clicked.connect(self._browse)
        where = QHBoxLayout()
        where.addWidget(self.location, 1)
        where.addWidget(self.browse)
        location_label = QLabel("&Location:")
        location_label.setBuddy(self.location)  # Alt+L, and its name for screen readers
        form = QFormLayout()
        form.addRow("&Name:", self.name)
        form.addRow(location_label, where)
        self.target = QLabel()
        self.target.setWordWrap(True)
        self.target.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reason = QLabel()
        self.reason.setObjectName("warning")
        self.reason.setWordWrap(True)
        self.reason.setAccessibleName("Why this place cannot be used")
        # Room for a reason of four lines, whichever label shows: the buttons stay put.
        room = self.fontMetrics().lineSpacing() * 4 + 16
        for label in (self.target, self.reason):
            label.setMinimumHeight(room)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.create_button.setText("Create")
        self.open_button = self.buttons.addButton(
            "Open an existing memory…", QDialogButtonBox.ButtonRole.ResetRole
        )
        self.open_button.clicked.connect(self._open_existing)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addSpacing(6)
        layout.addLayout(form)
        layout.addWidget(self.target)
        layout.addWidget(self.reason)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(self.check)
        self.location.textChanged.connect(self.check)
        self.check()
        self.name.setFocus()
        self.name.selectAll()

    def chosen_path(self) -> Path:
        """The folder Create would make: the location, then the name."""
        return typed_path(self.location.text()) / self.name.text().strip()

    def problem(self) -> str | None:
        """Why the place typed cannot be used, in a sentence; None when it can."""
        if not self.location.text().strip():
            return "Choose where to create the memory (Browse…)."
        return cannot_create(typed_path(self.location.text()), self.name.text())

    def check(self) -> bool:
        """Show whether the place typed can be used (why not, when it cannot) and enable
        Create accordingly."""
        problem = self.problem()
        self.reason.setText(problem or "")
        self.reason.setVisible(problem is not None)
        self.target.setText("" if problem is not None else _what_create_does(self.chosen_path()))
        self.target.setVisible(problem is None)
        self.create_button.setEnabled(problem is None)
        return problem is None

    def accept(self) -> None:
        """Create: checked once more (the disk may have changed), then the folder is made."""
        if not self.check():
            return
        folder = self.chosen_path()
        try:
            folder.mkdir(exist_ok=True)  # an empty existing folder is used as it is
        except OSError as exc:
            self._refuse(f"The folder could not be made: {exc.strerror or exc}.")
            return
        self._choose(folder)

    def _choose(self, folder: Path) -> None:
        self.folder = folder
        super().accept()
        self.chosen.emit(folder)

    def _refuse(self, reason: str) -> None:
        self.reason.setText(reason)
        self.reason.show()
        self.target.hide()
        self.create_button.setEnabled(False)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Where to create the memory", self.location.text()
        )
        if folder:
            self.location.setText(str(Path(folder)))

    def _open_existing(self) -> None:
        folder = dialogs.choose_memory_folder(self, self.location.text())
        if folder is not None:
            self._choose(folder)


def _what_create_does(folder: Path) -> str:
    if folder.is_dir():  # cannot_create let it through: it is empty
        return f"The empty folder {folder} becomes the memory when you click Create."
    return f"A new folder is made for it when you click Create:\n{folder}"


def _intro(documents: int) -> str:
    lead = (
        "To add this document, create a memory for it first. "
        if documents == 1
        else f"To add these {documents} documents, create a memory for them first. "
        if documents > 1
        else ""
    )
    return (
        f"{lead}A memory is a folder of Markdown notes that GAM Desktop writes and organizes, "
        "each change recorded in its history. Give it a name and choose where its folder "
        "goes."
    )


def offer_new_memory(
    parent: QWidget, then: Callable[[Path], object], documents: int = 0
) -> NewMemoryDialog:
    """Show the dialog (window-modal; it returns at once) and call `then(folder)` once the
    person created a memory or picked an existing one; nothing when they cancel. One dialog
    at a time: an open one is raised instead of a second."""
    for shown in parent.findChildren(NewMemoryDialog):
        if shown.isVisible():
            shown.raise_()
            shown.activateWindow()
            return shown
    dialog = NewMemoryDialog(parent, documents)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.chosen.connect(then)
    dialog.open()
    return dialog
