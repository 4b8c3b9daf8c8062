"""The main window as the parts it makes and hands itself to see it: the menus (menus.py)
and the close guard (closing.py) reach its panels and controllers, and ask it to open a
memory, choose documents, say something.

`MainWindow` (main_window.py) is this class with every part made. The menus and the close
guard know the window by this class and never import main_window.py, which imports them:
app, main_window, menus, closing and selftest import one another one way only, with no
import inside a function or under TYPE_CHECKING to hold a cycle together."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QUrl
from PySide6.QtWidgets import QMainWindow, QProgressBar, QSplitter, QTabWidget

from gam_desktop.engine.api import Workflow
from gam_desktop.gui.chat_panel import ChatPanel
from gam_desktop.gui.facts_view import FactsView
from gam_desktop.gui.history_panel import HistoryPanel
from gam_desktop.gui.intake import DocumentIntake
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.personal_memory import PersonalMemory
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.sharing import Sharing
from gam_desktop.gui.summarize_again import SummarizeAgain
from gam_desktop.gui.tree_panel import MemoryTree
from gam_desktop.gui.undo_last import UndoLast
from gam_desktop.gui.workers import TaskRunner


class Window(QMainWindow):
    """What the menus and the close guard use of the main window; MainWindow makes each
    part and does each thing."""

    store: QSettings
    session: MemorySession
    tasks: TaskRunner
    operations: Operations
    intake: DocumentIntake
    resummarize: SummarizeAgain
    undo_last: UndoLast  # Edit ▸ Undo
    personal: PersonalMemory
    sharing: Sharing
    tree: MemoryTree
    chat: ChatPanel
    chat_split: QSplitter
    facts: FactsView
    history: HistoryPanel
    tabs: QTabWidget
    progress: QProgressBar
    tell: Callable[[str, str], None]  # (title, text): a message box; tests replace it

    @property
    def workflow(self) -> Workflow | None:
        raise NotImplementedError

    def choose_folder(self) -> None:
        raise NotImplementedError

    def open_memory(self, root: Path) -> bool:
        raise NotImplementedError

    def choose_documents(self) -> None:
        raise NotImplementedError

    def choose_document_folder(self) -> None:
        raise NotImplementedError

    def open_outside(self, url: QUrl, what: str) -> bool:
        raise NotImplementedError

    def new_conversation(self) -> None:
        raise NotImplementedError

    def plan_reorganization(self, path: str) -> None:
        raise NotImplementedError

    def open_settings(self) -> None:
        raise NotImplementedError
