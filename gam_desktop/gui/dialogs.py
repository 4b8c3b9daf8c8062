"""The app's standard dialogs: message boxes (the real `Prompter`), the first-run welcome,
and choosing a memory folder or documents (a new memory: `new_memory_dialog`). Modal; GUI
thread only."""

from __future__ import annotations

import enum
import logging
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import TypeVar

from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QWidget,
)

from gam_desktop.engine.api import READABLE, SUPPORTED_SUFFIXES
from gam_desktop.gui import error_advice

log = logging.getLogger(__name__)

WELCOME_TITLE = "Welcome to GAM Desktop"
WELCOME_TEXT = (
    "GAM Desktop turns a folder into a memory organized by an LLM.\n\n"
    "1. Set up your LLM first: Edit ▸ Settings… (OpenAI with a key, or a server on this "
    "computer: Ollama, LM Studio or llama.cpp, no key needed). Nothing is built or answered "
    "without it.\n"
    "2. Create a memory (File ▸ New memory) or open one (File ▸ Open memory).\n"
    f"3. Drag documents ({READABLE}) onto this window. With no memory open yet, "
    "GAM Desktop offers to create one for them.\n"
    "4. Ask questions in the Chat tab: conversations are saved in the memory, and what "
    "you tell it about yourself is learned (the Facts tab). Every change is in the "
    "History tab and can be rolled back.\n\nPress F1 for the user guide."
)


MAKE_MEMORY_TITLE = "Make this folder a memory?"


Answer = TypeVar("Answer", bound=Hashable)
# A button of a question: one of Qt's standard buttons (placed and worded as the platform
# does), or a label and its role.
Button = QMessageBox.StandardButton | tuple[str, QMessageBox.ButtonRole]


class MessageBoxes:
    """Questions, notes and errors as message boxes over `parent`."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent

    def confirm(
        self,
        title: str,
        text: str,
        default_no: bool = False,
        *,
        buttons: tuple[str, str],
    ) -> bool:
        """A question whose two buttons say what they do (`buttons`: going ahead, then
        not: "Roll back", "Cancel"; Yes and No said nothing of it). Escape answers the
        second; Enter the first, unless `default_no`."""
        choices = verb_buttons(buttons)
        return ask(self.parent, title, text, choices, default=not default_no, escape=False) is True

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


def verb_buttons(buttons: tuple[str, str]) -> Mapping[bool, Button]:
    """A confirmation's two buttons: going ahead ("Roll back"), then not ("Cancel")."""
    role = QMessageBox.ButtonRole
    return {True: (buttons[0], role.AcceptRole), False: (buttons[1], role.RejectRole)}


def question_box(
    parent: QWidget,
    title: str,
    text: str,
    buttons: Mapping[Answer, Button],
    default: Answer,
    escape: Answer | None = None,
    *,
    informative: str = "",
    icon: QMessageBox.Icon = QMessageBox.Icon.Question,
) -> tuple[QMessageBox, dict[Answer, QPushButton]]:
    """A question (not shown yet) with one button per answer, in `buttons`' order, and the
    buttons by their answer. Enter answers `default`, Escape `escape` (the default when None).
    Every question the app asks is built here: a confirmation (`MessageBoxes.confirm`), the
    close question, the welcome."""
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    added: dict[Answer, QPushButton] = {}
    for answer, button in buttons.items():
        if isinstance(button, QMessageBox.StandardButton):
            added[answer] = box.addButton(button)
        else:
            added[answer] = box.addButton(*button)
    box.setDefaultButton(added[default])
    box.setEscapeButton(added[default if escape is None else escape])
    return box, added


def ask(
    parent: QWidget,
    title: str,
    text: str,
    buttons: Mapping[Answer, Button],
    default: Answer,
    escape: Answer | None = None,
    *,
    informative: str = "",
    icon: QMessageBox.Icon = QMessageBox.Icon.Question,
) -> Answer | None:
    """Ask `question_box`'s question, modally; the answer clicked (None when the box was
    closed another way). The box is detached from `parent` once answered and its last
    reference dropped, so it is freed: a box left a child of the window lived as long as the
    window, one more per question. (Not deleteLater: it crashed PySide6 here.)"""
    box, added = question_box(
        parent, title, text, buttons, default, escape, informative=informative, icon=icon
    )
    try:
        box.exec()
        clicked = box.clickedButton()
        return next((answer for answer, button in added.items() if button is clicked), None)
    finally:
        box.setParent(None)  # Python owns it now: freed when this returns


class Welcome(enum.Enum):
    CREATE = "create"
    OPEN_EXISTING = "open existing"
    LATER = "later"


def ask_where_memory_lives(parent: QWidget) -> Welcome:
    """The first run's question: create a memory, open an existing one, or later."""
    role = QMessageBox.ButtonRole
    answer = ask(
        parent,
        WELCOME_TITLE,
        "Where should your memory live?",
        {
            Welcome.CREATE: ("Create a new memory…", role.AcceptRole),
            Welcome.OPEN_EXISTING: ("Open an existing memory…", role.ActionRole),
            Welcome.LATER: ("Later", role.RejectRole),
        },
        default=Welcome.CREATE,
        escape=Welcome.LATER,
        icon=QMessageBox.Icon.NoIcon,
    )
    return answer or Welcome.LATER


def choose_memory_folder(parent: QWidget, start: str = "") -> Path | None:
    """An existing memory's folder (a new one: `new_memory_dialog`)."""
    folder = QFileDialog.getExistingDirectory(parent, "Open a memory folder", start)
    return Path(folder) if folder else None


def choose_documents(parent: QWidget) -> list[Path]:
    patterns = " ".join(f"*{suffix}" for suffix in sorted(SUPPORTED_SUFFIXES))
    files, _ = QFileDialog.getOpenFileNames(parent, "Add documents", "", f"Documents ({patterns})")
    return [Path(f) for f in files]


def choose_document_folder(parent: QWidget) -> Path | None:
    """A folder whose readable files are added (all of them, in its subfolders too: the
    files a dropped folder gives)."""
    folder = QFileDialog.getExistingDirectory(parent, "Add a folder of documents")
    return Path(folder) if folder else None
