"""The app's standard dialogs: message boxes (the real `Prompter`), the first-run welcome,
and choosing a memory folder or documents. Modal; GUI thread only."""

from __future__ import annotations

import enum
import logging
import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QMessageBox, QWidget

from gam_desktop.gui import error_advice

log = logging.getLogger(__name__)

WELCOME_TITLE = "Welcome to GAM Desktop"
WELCOME_TEXT = (
    "GAM Desktop turns a folder into a memory organized by an LLM.\n\n"
    "1. Open or create a memory folder (File ▸ Open memory).\n"
    "2. Drag PDF, TXT or Markdown files onto this window.\n"
    "3. Ask questions in the Chat tab: conversations are saved in the memory, and what "
    "you tell it about yourself is learned (the Facts tab). Every change is in the "
    "History tab and can be rolled back.\n\nSet your LLM endpoint and key in File ▸ Settings."
)


class MessageBoxes:
    """Questions, notes and errors as message boxes over `parent`."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent

    def confirm(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self.parent, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def tell(self, title: str, text: str) -> None:
        QMessageBox.information(self.parent, title, text)

    def ask_text(self, title: str, label: str, text: str) -> str | None:
        """A line of text (`text` to start from); None when cancelled."""
        answer, ok = QInputDialog.getText(
            self.parent, title, label, QLineEdit.EchoMode.Normal, text
        )
        return answer if ok else None

    def show_error(self, error: BaseException) -> None:
        message = error_advice.describe(error)
        log.warning("%s: %s", message.title, error)
        QMessageBox.warning(self.parent, message.title, message.full())


class Welcome(enum.Enum):
    CREATE = "create"
    OPEN_EXISTING = "open existing"
    LATER = "later"


def default_memory_dir() -> Path:
    return Path(os.path.expanduser("~")) / "GAM Memory"


def ask_where_memory_lives(parent: QWidget) -> Welcome:
    """The first run's question: create a memory, open an existing one, or later."""
    box = QMessageBox(parent)
    box.setWindowTitle(WELCOME_TITLE)
    box.setText("Where should your memory live?")
    create = box.addButton("Create a new memory…", QMessageBox.ButtonRole.AcceptRole)
    existing = box.addButton("Open an existing memory…", QMessageBox.ButtonRole.ActionRole)
    box.addButton("Later", QMessageBox.ButtonRole.RejectRole)
    box.exec()
    if box.clickedButton() is create:
        return Welcome.CREATE
    if box.clickedButton() is existing:
        return Welcome.OPEN_EXISTING
    return Welcome.LATER


def choose_new_memory_folder(parent: QWidget) -> Path | None:
    """Where to create a memory, starting from ~/GAM Memory (made if missing)."""
    default_memory_dir().mkdir(parents=True, exist_ok=True)
    folder = QFileDialog.getExistingDirectory(
        parent, "Create the memory in", str(default_memory_dir())
    )
    return Path(folder) if folder else None


def choose_memory_folder(parent: QWidget) -> Path | None:
    folder = QFileDialog.getExistingDirectory(parent, "Choose or create a memory folder")
    return Path(folder) if folder else None


def choose_documents(parent: QWidget) -> list[Path]:
    files, _ = QFileDialog.getOpenFileNames(
        parent, "Add documents", "", "Documents (*.pdf *.txt *.md *.markdown)"
    )
    return [Path(f) for f in files]
