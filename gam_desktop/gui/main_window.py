"""The main window: the memory tree, the preview, the chat beside its conversations list,
the facts, the history, and a status bar.

It lays the panels out and wires them to the controllers, which act: the session (the open
memory), the intake (adding documents), the history actions (rollback, restore, reorganize),
the chat controller (questions, and learning from them), the conversations (the list, which
one is shown), the personal memory (facts, the memory's switches) and the operations shown
in the status bar. Every long call runs on a worker thread, so the window never freezes. The
views update themselves from the session's one memory_changed(changes) signal. The
controllers talk to the person through the window's `confirm`, `tell`, `ask_text`,
`show_error` and `review_plan` (a reorganization's plan), and files open in the person's
editor through `open_external`; tests replace them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtGui import (
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDragLeaveEvent,
    QDropEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
)

from gam_desktop.engine.api import (
    README,
    ConversationInfo,
    MemoryFolder,
    Operation,
    ReorganizeOperation,
    Workflow,
    plural,
    removed_by,
)
from gam_desktop.gui import dialogs, panes
from gam_desktop.gui.chat_controller import ChatController
from gam_desktop.gui.chat_panel import ChatPanel
from gam_desktop.gui.closing import CloseGuard
from gam_desktop.gui.conversation_list import ConversationList
from gam_desktop.gui.conversations import ConversationsController, memory_key
from gam_desktop.gui.dialogs import MessageBoxes
from gam_desktop.gui.facts_view import FactsView
from gam_desktop.gui.find_panel import FindPanel
from gam_desktop.gui.history_actions import HistoryActions
from gam_desktop.gui.history_panel import HistoryPanel
from gam_desktop.gui.intake import DocumentIntake
from gam_desktop.gui.labels import ElidedLabel
from gam_desktop.gui.menus import Menus
from gam_desktop.gui.operations import Operations
from gam_desktop.gui.personal_memory import PersonalMemory
from gam_desktop.gui.preview import PreviewPane
from gam_desktop.gui.research_controller import ResearchController
from gam_desktop.gui.session import MemorySession
from gam_desktop.gui.settings import Preferences
from gam_desktop.gui.sharing import Sharing
from gam_desktop.gui.summarize_again import SummarizeAgain
from gam_desktop.gui.tree_panel import MemoryTree, reveal
from gam_desktop.gui.undo_last import UndoLast
from gam_desktop.gui.window import Window
from gam_desktop.gui.workers import TaskRunner

PROGRESS_STEPS = 1000  # the status bar's progress: tenths of a percent
PREVIEW_KEY = "preview"  # the file shown last in a memory (QSettings, per memory)
NO_MEMORY = "Create a memory (File ▸ New memory…) or open one (File ▸ Open memory…), then ask."
LLM_NOT_SET_UP = "Set up your LLM first"
ADD_NEEDS_LLM = (
    "The LLM is not set up yet, and adding documents needs it: it writes the notes. Open "
    "Settings to give an OpenAI key, or the address of a server on this computer (Ollama, "
    "LM Studio or llama.cpp). Nothing was read or sent."
)
# The memory tree is never narrower than this many characters, nor the preview than that
# many: at 800 px the preview had 165 px; then the tree, at 34, cut names after 17 letters.
# An 800 px window has no room for more: the tree's four characters are the preview's.
TREE_MIN_CHARS = 38
PREVIEW_MIN_CHARS = 32
LIST_WIDTH = 200  # the conversations list beside the chat, when shown
WIDE_FOR_LIST = 1100  # a window this wide shows the list unless the person hid it
PANES_SETTING = "window/panes"  # the panes' proportions, as the person left them
LIST_SETTING = "view/conversations"  # "shown" or "hidden", as chosen; none: by the width


class MainWindow(Window):
    def __init__(self, prefs: Preferences, store: QSettings, api_key: str | None = None) -> None:
        super().__init__()
        # How the controllers talk to the person; tests and the self-test replace these.
        boxes = MessageBoxes(self)
        self.confirm: Callable[..., bool] = boxes.confirm  # (title, text, default_no=False)
        self.tell: Callable[[str, str], None] = boxes.tell
        self.show_error: Callable[[BaseException], None] = boxes.show_error
        self.ask_text: Callable[[str, str, str], str | None] = boxes.ask_text
        self.open_external: Callable[[QUrl], object] = QDesktopServices.openUrl
        self.review_plan: Callable[[ReorganizeOperation], bool] = self._review
        self.choose_folder_to_add: Callable[..., Path | None] = dialogs.choose_document_folder
        self.store = store
        self.tasks = TaskRunner(self)
        self.operations = Operations(self.tasks, self, self)
        self.session = MemorySession(prefs, store, api_key, self.operations, self, self)
        self.intake = DocumentIntake(self.session, self.operations, self, self)
        self.resummarize = SummarizeAgain(self.session, self, self)  # Memory ▸ Summarize again
        self.history_actions = HistoryActions(
            self.session, self.tasks, self, lambda plan: self.review_plan(plan)
        )
        self.undo_last = UndoLast(self.session, self.tasks, self.history_actions, self)  # Ctrl+Z
        self.questions = ChatController(self.session, self)
        self.research = ResearchController(self.session, self)
        self.conversations = ConversationsController(
            self.session, self.questions, store, self, lambda *a: self.ask_text(*a), self
        )
        self.personal = PersonalMemory(self.session, self, self)
        self.closing = CloseGuard(self)  # a close while a build runs asks first
        self.sharing = Sharing(  # the memory for other apps (gam-serve), when switched on
            store,
            lambda: self.session.prefs.llm("chat", self.session.api_key),
            lambda text: self.status_label.setText(text),
            self,
            on_change=self.session.memory_changed.emit,  # History shows what apps taught
            embeddings=lambda: self.session.prefs.embedding_settings(
                self.session.api_key, self.session.embedding_key
            ),
        )
        self.session.opened.connect(lambda root, _folder: self.sharing.follow(root))
        self.setWindowTitle("GAM Desktop")
        self.setAcceptDrops(True)
        self._build_ui()
        self.operations.busy.connect(self._show_busy)
        self.operations.settled.connect(self._settled)
        self.operations.status.connect(self.status_label.setText)
        self.session.opened.connect(self._show_memory)
        self.session.app_lock.raise_requested.connect(self.bring_to_front)
        for view in (self.tree, self.preview, self.history, self.chat):
            self.session.memory_changed.connect(view.memory_changed)
        self._wire_conversations()
        self.session.status.connect(self.status_label.setText)
        self.intake.status.connect(self.status_label.setText)
        self.operations.progressed.connect(self._show_progress)
        self.session.opened.connect(lambda _root, _folder: self._say_if_ready())
        self._say_if_ready()
        self._restore_layout()

    # -- the open memory ------------------------------------------------------------------

    @property
    def workflow(self) -> Workflow | None:
        return self.session.workflow

    @property
    def prefs(self) -> Preferences:
        return self.session.prefs

    @property
    def api_key(self) -> str | None:
        return self.session.api_key

    # -- layout -----------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.tree = MemoryTree()
        self.tree.opened.connect(self.open_file)
        self.tree.reorganize_requested.connect(self.history_actions.plan_reorganization)
        self.tree.edit_requested.connect(self.edit_file)
        # "Show in folder" (tests replace it: Explorer and Finder are started directly)
        self.show_in_folder: Callable[[Path], object] = lambda file: reveal(
            file, lambda url: self.open_outside(url, "the folder")
        )
        self.tree.reveal_requested.connect(
            lambda path: (
                self.workflow is not None and self.show_in_folder(self.workflow.folder.root / path)
            )
        )
        self.find_panel = FindPanel(self.tree, self.session)  # the find box over the tree
        # A usable tree at the window's smallest (800 px wide): it shrank to 60 px, names cut
        # to their first letters over a horizontal scroll bar.
        self.find_panel.setMinimumWidth(self.fontMetrics().averageCharWidth() * TREE_MIN_CHARS)
        self.find_panel.opened.connect(self.open_file)
        self.preview = PreviewPane()
        self.preview.edit_requested.connect(self.edit_file)
        self.preview.open_requested.connect(self.open_file)
        self.preview.shown.connect(self.find_panel.follow)  # the tree highlights what it shows
        self.preview.shown.connect(self._remember_shown)  # shown again at the next start
        self.preview.missing.connect(self._explain_missing)  # what removed it, and the way back
        self.preview.operation_requested.connect(self.show_operation)
        self.preview.summarize_requested.connect(lambda: self.resummarize.run())
        self.chat = ChatPanel()
        self.chat.source_clicked.connect(self.open_file)
        self.conversation_list = ConversationList()
        self.chat_split = QSplitter(Qt.Orientation.Horizontal)
        self.chat_split.addWidget(self.conversation_list)
        self.chat_split.addWidget(self.chat)
        self.chat_split.setStretchFactor(0, 0)  # the list keeps its width, the chat grows
        self.chat_split.setStretchFactor(1, 1)
        for pane in (0, 1):  # a drag never hides the list: its toggle does
            self.chat_split.setCollapsible(pane, False)
        self.chat_split.setSizes([LIST_WIDTH, 470])
        self.chat.conversations_toggled.connect(self._choose_conversations)
        self.facts = FactsView()
        self.history = HistoryPanel()
        self.history.rollback_requested.connect(self.history_actions.roll_back)
        self.history.restore_requested.connect(self.history_actions.restore_before)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Chat, facts and history")
        self.tabs.setUsesScrollButtons(False)  # three short tabs: always room for them
        self.tabs.addTab(self.chat_split, "Chat")
        self.tabs.addTab(self.facts, "Facts")
        self.tabs.addTab(self.history, "History")
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for widget in (self.find_panel, self.preview, self.tabs):
            self.split.addWidget(widget)
        # The room a wider window has goes to the preview and the chat (2:3), none to the
        # tree; no pane is collapsed by a drag: at 800 px the preview had 165 px.
        for pane, stretch in enumerate((0, 2, 3)):
            self.split.setStretchFactor(pane, stretch)
            self.split.setCollapsible(pane, False)
        self.preview.setMinimumWidth(self.fontMetrics().averageCharWidth() * PREVIEW_MIN_CHARS)
        self.split.setSizes([230, 350, 700])
        self._shares = panes.DEFAULT_SHARES  # the panes' proportions: a drag chooses them
        self.split.splitterMoved.connect(lambda _pos, _index: self._chose_panes())
        self.setCentralWidget(self.split)
        self.chat.reading_order()
        self.drop_hint = QLabel(self)  # its words: DocumentIntake.drop_hint, when shown
        self.drop_hint.setObjectName("dropHint")
        self.drop_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.drop_hint.setWordWrap(True)  # a narrow window still shows every word
        self.drop_hint.hide()
        self.status_label = ElidedLabel("Ready")  # a long status never widens the window
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Progress")
        self.progress.setMaximumWidth(240)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel the build")
        self.cancel_button.clicked.connect(self._cancel)
        self.cancel_button.hide()
        bar = self.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self._menus()

    def _wire_conversations(self) -> None:
        """The chat, its conversations list, the Learned lines and the facts. Panel methods
        are looked up on each call: tests wrap them after the window is made."""
        chat, questions, listing = self.chat, self.questions, self.conversations
        chat.asked.connect(questions.ask)
        chat.cancel_requested.connect(questions.cancel)
        chat.undo_requested.connect(questions.undo)
        questions.answered.connect(
            lambda turn: chat.show_result(turn.result, turn.turn, turn.conversation_id)
        )
        questions.failed.connect(lambda text: chat.show_error(text))
        questions.step.connect(lambda text: chat.add_step(text))
        questions.learning.connect(self._show_learning)
        questions.learned.connect(lambda note: chat.show_learned(note))
        questions.rollback_requested.connect(self.history_actions.roll_back)
        research = self.research
        chat.research_asked.connect(research.ask)
        chat.cancel_requested.connect(research.cancel)
        chat.save_requested.connect(research.save)
        research.step.connect(lambda step: chat.show_research_step(step))
        research.reported.connect(lambda report: chat.show_report(report))
        research.reported.connect(questions.keep_report)  # in the conversation, for later
        research.failed.connect(lambda text: chat.show_error(text))
        research.saved.connect(self._research_saved)
        listing.cleared.connect(lambda _saving: research.show())  # a report in flight: dropped
        listing.shown.connect(lambda _record: research.show())
        panel = self.conversation_list
        panel.new_requested.connect(listing.new)
        panel.selected.connect(listing.open)
        panel.rename_requested.connect(listing.rename)
        panel.delete_requested.connect(listing.delete)
        listing.listed.connect(panel.show_conversations)
        listing.current.connect(self._show_current)
        listing.cleared.connect(lambda saving: chat.new_conversation(saving))
        listing.shown.connect(
            lambda record: chat.show_conversation(
                record, questions.notes_for(record.id), questions.reports_for(record.id)
            )
        )
        self.facts.show_requested.connect(self.open_file)
        self.facts.edit_requested.connect(self.edit_file)
        self.facts.forget_requested.connect(self.personal.forget)
        self.facts.restore_requested.connect(self.personal.restore)
        self.personal.forgotten.connect(self.facts.offer_undo)
        self.facts.conversation_requested.connect(self.open_conversation)
        self.facts.turn_requested.connect(self.open_conversation_at)
        self.personal.facts_listed.connect(self.facts.show_facts)
        self.personal.switches.connect(self._show_switches)

    def _research_saved(self, report: object, path: str) -> None:
        """The saved report is shown in the preview, where it is a memory like any other."""
        self.chat.show_saved(report, path)  # type: ignore[arg-type]
        number = next((t.number for t in self.chat.turns if t.report is report), 0)
        where = self.chat.conversation_id  # (a report read back is known by its turn)
        self.questions.report_saved(report, path, where, number)  # type: ignore[arg-type]
        self.open_file(path)

    def _show_current(self, info: ConversationInfo | None) -> None:
        """The conversation on screen, as the list has it: selected, and its title shown."""
        self.conversation_list.select(info)
        if info is not None:
            self.chat.set_title(info.title, info.turns, info.started)

    def _show_learning(self, number: int) -> None:
        if self.personal.learn_facts:  # else it learns nothing: nothing to wait for
            self.chat.show_learning(number)

    def _menus(self) -> None:
        """File, Edit, View, Memory and Help (gui/menus.py)."""
        self.menus = Menus(self)
        self.save_switch, self.learn_switch = self.menus.save_switch, self.menus.learn_switch

    def _show_switches(self, save_conversations: bool, learn_facts: bool) -> None:
        for switch, on in (
            (self.save_switch, save_conversations),
            (self.learn_switch, learn_facts),
        ):
            switch.blockSignals(True)  # showing the memory's switches is not switching them
            switch.setChecked(on)
            switch.blockSignals(False)
            switch.setEnabled(True)
        self.facts.set_learning(learn_facts)
        if self.questions.conversation_id is None and not self.chat.turns:
            self.chat.new_conversation(save_conversations)

    def _restore_layout(self) -> None:
        geometry = self.store.value("window/geometry")
        if geometry:
            self.restoreGeometry(geometry)
        else:  # never larger than the screen (200% on a 1080p screen leaves 960x540)
            room = self.screen().availableGeometry()
            self.resize(min(1280, room.width() * 95 // 100), min(800, room.height() * 9 // 10))
        # The proportions the person left the panes at (an older version kept the sizes)
        sizes = panes.sizes_in_state(self.store.value("window/splitter")) or []
        self._shares = (
            panes.shares_in(self.store.value(PANES_SETTING), self.split.count())
            or (panes.shares_of(sizes) if len(sizes) == self.split.count() else None)
            or self._shares
        )

    def resizeEvent(self, event: QResizeEvent) -> None:  # the drop hint covers the window
        super().resizeEvent(event)
        self.drop_hint.setGeometry(self.rect().adjusted(40, 60, -40, -40))
        self._fit_panes()
        self._fit_conversations()

    def _fit_panes(self) -> None:
        """The three panes shared out for the window's width in the proportions the person
        left them at (a drag), else the window's own (the tree TREE_SHARE, the preview
        PREVIEW_SHARE of the rest), none narrower than it is usable at. Qt's own sharing
        left the preview 165 px of a window 800 px wide; and after a drag, the widths of
        the moment stayed, whatever the window's size."""
        panes.fit(self.split, self._shares)

    def _chose_panes(self) -> None:
        """A divider dragged: its proportions are kept from now on."""
        self._shares = panes.shares_of(self.split.sizes()) or self._shares

    def _fit_conversations(self) -> None:
        """The conversations list beside the chat: as the person chose (its toggle), else
        shown in a window wide enough for it and the chat (WIDE_FOR_LIST)."""
        chosen = self.store.value(LIST_SETTING)
        shown = (
            chosen == "shown" if chosen in ("shown", "hidden") else (self.width() >= WIDE_FOR_LIST)
        )
        if shown != self.conversation_list.isVisibleTo(self):
            self.conversation_list.setVisible(shown)
            if shown:  # back at its width, not squeezed by the chat
                rest = max(
                    self.chat_split.width() - LIST_WIDTH, self.chat.minimumSizeHint().width()
                )
                self.chat_split.setSizes([LIST_WIDTH, rest])
        self.chat.show_list_shown(shown)

    def _choose_conversations(self, shown: bool) -> None:
        """The toggle above the chat: the list shown or hidden from now on, at any width."""
        self.store.setValue(LIST_SETTING, "shown" if shown else "hidden")
        self._fit_conversations()
        focus = self.focusWidget()
        if not shown and focus is not None and self.conversation_list.isAncestorOf(focus):
            self.chat.list_toggle.setFocus()  # (the keyboard was in the list just hidden)

    # -- opening a memory -----------------------------------------------------------------

    def welcome(self) -> None:
        """The first run: say what the app does and ask where the memory should live (a new
        one: a name and a location, the folder made once confirmed)."""
        from gam_desktop.gui.new_memory_dialog import offer_new_memory

        self.preview.show_message(dialogs.WELCOME_TITLE, dialogs.WELCOME_TEXT)
        choice = dialogs.ask_where_memory_lives(self)
        if choice is dialogs.Welcome.CREATE:
            offer_new_memory(self, self.open_memory)
        elif choice is dialogs.Welcome.OPEN_EXISTING:
            self.choose_folder()

    def choose_folder(self) -> None:
        folder = dialogs.choose_memory_folder(self)
        if folder:
            self.open_memory(folder)

    def open_memory(self, root: Path) -> bool:
        """Open (or start) a memory; False when the user declined or it is in use, and while
        a build or a reorganization runs in the open memory: the person is asked first
        (`closing`), and `root` opens once that work has finished or been cancelled."""
        if not self.closing.allows_opening(root, self.open_memory):
            return False
        if not self.session.open(root):
            return False
        self.status_label.setText(
            f"Opened {root} — {plural(self.tree.memory_count(), 'note')}"
            + (" — history is off: git was not found" if self.session.history_off else "")
        )
        return True

    def _show_memory(self, root: Path, folder: MemoryFolder) -> None:
        self.setWindowTitle(f"{root.name} — GAM Desktop")
        self.tree.show_folder(folder)
        self.preview.show_memory(folder, empty=self.tree.memory_count() == 0)
        self._show_where_it_was(root, folder)
        source, message = self.session.history_source(), self.session.history_message()
        self.history.set_history(source, message, when_shown=True)

    def _show_where_it_was(self, root: Path, folder: MemoryFolder) -> None:
        """A memory opened with nothing in the preview (after a restart it was blank): the
        file shown when it was last open, else its overview."""
        if self.preview.path is not None or self.preview.empty:
            return
        last = str(self.store.value(f"{memory_key(root)}/{PREVIEW_KEY}") or "")
        for path in (last, README):
            if path and folder.readable(root / path):
                self.open_file(path)
                return

    def _remember_shown(self, path: str | None, _original: bool) -> None:
        workflow = self.workflow
        if path is not None and workflow is not None and self.preview.folder_shown is None:
            self.store.setValue(f"{memory_key(workflow.folder.root)}/{PREVIEW_KEY}", path)

    # -- adding documents -----------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and self.intake.accepts_drops():
            event.acceptProposedAction()
            self.drop_hint.setText(self.intake.drop_hint())  # add, or create a memory first
            self.drop_hint.show()
            self.drop_hint.raise_()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.drop_hint.hide()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_hint.hide()
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        event.acceptProposedAction()
        self.add_paths(paths)  # the dialog it may offer is window-modal: the drop ends now

    def choose_documents(self) -> None:
        self.add_paths(dialogs.choose_documents(self))

    def choose_document_folder(self) -> None:
        """File ▸ Add a folder…: every readable file under it, as a dropped folder gives."""
        folder = self.choose_folder_to_add(self)
        if folder is not None:
            self.add_paths([folder])

    def add_paths(self, paths: list[Path]) -> None:
        """Add files (and folders of them) to the open memory. With none open, offer to
        create one (or to open an existing one), then go on with these files."""
        from gam_desktop.gui.new_memory_dialog import offer_new_memory

        if paths and not self.llm_ready_to_add():
            return
        files = self.intake.documents(paths)
        if not files or self.workflow is not None:
            self.intake.add_documents(files)
            return

        def go_on(folder: Path) -> None:
            if self.open_memory(folder):
                self.intake.add_documents(files)

        offer_new_memory(self, go_on, len(files))

    def llm_ready_to_add(self) -> bool:
        """Whether the LLM is set up, said before any work when it is not (an add went
        ahead and failed with a DNS error: api.openai.com, with no key), with Settings
        offered; True once they are saved with an LLM that can be used."""
        if self.prefs.llm_missing(self.api_key) is None:
            return True
        if self.confirm(LLM_NOT_SET_UP, ADD_NEEDS_LLM, buttons=("Open Settings", "Cancel")):
            self.open_settings()
        return self.prefs.llm_missing(self.api_key) is None

    # -- the preview ----------------------------------------------------------------------

    def open_file(self, path: str, original: bool = False) -> None:
        """Show a file in the preview (with `original`, the text it was written from); the
        tree and the find results highlight it."""
        if self.workflow is not None:
            self.preview.show_file(self.workflow.folder, path, original)

    def show_find(self) -> None:
        """Edit ▸ Find (Ctrl+F): to the find box over the tree, shown if it was hidden."""
        panels = getattr(getattr(self, "menus", None), "panel_actions", {})
        if "tree" in panels and not panels["tree"].isChecked():
            panels["tree"].setChecked(True)  # View ▸ Memory tree, as if chosen there
        self.find_panel.show()
        self.find_panel.focus_filter()

    def edit_file(self, path: str) -> None:
        """Show a file and open it in the person's editor: the watcher records the edit."""
        if self.workflow is not None:
            self.open_file(path)
            file = QUrl.fromLocalFile(str(self.workflow.folder.root / path))
            self.open_outside(file, "this file in an editor")

    def open_outside(self, url: QUrl, what: str) -> bool:
        """Open `url` with the application the system has for it; when it has none
        (`QDesktopServices.openUrl` returns False), say so and where the file is: the
        button did nothing, without a word."""
        if self.open_external(url) is not False:
            return True
        where = url.toLocalFile() or url.toString()
        self.tell(
            f"Could not open {what}",
            f"The system has no application set to open it:\n\n{where}\n\nOpen it from your "
            "file manager, or set a default application for this kind of file in your "
            "system's settings.",
        )
        return False

    # -- conversations ----------------------------------------------------------------------

    def new_conversation(self) -> None:
        self.tabs.setCurrentWidget(self.chat_split)
        self.conversations.new()
        self.chat.input.setFocus()

    def open_conversation(self, conversation_id: str) -> None:
        self.tabs.setCurrentWidget(self.chat_split)
        self.conversations.open(conversation_id)

    def open_conversation_at(self, conversation_id: str, turn: int) -> None:
        """A fact's history links to the turn that stated or changed it."""
        self.chat.scroll_to_turn(conversation_id, turn)
        self.open_conversation(conversation_id)

    # -- history --------------------------------------------------------------------------

    def roll_back(self, operation: Operation) -> None:
        self.history_actions.roll_back(operation)

    def show_operation(self, sha: str) -> None:
        """The History tab with the operation `sha` selected (the keyboard on the list)."""
        self.menus.show_tab(self.history, self.history.list)
        self.history.show_operation(sha)

    def _explain_missing(self, path: str) -> None:
        """The preview shows a file that is gone: the history says which operation removed
        it (read on a task thread), so the preview can say how to get it back."""
        source = self.session.history_source()
        if source is None:
            self.preview.explain_removal(path, None)
            return
        self.tasks.start(
            "removed-by",
            lambda _worker, _cancel: removed_by(source.root, path, source.git_path),
            on_success=lambda operation: self.preview.explain_removal(path, operation),
            on_failure=lambda _error: self.preview.explain_removal(path, None),
        )

    def restore_before(self, operation: Operation) -> None:
        self.history_actions.restore_before(operation)

    def plan_reorganization(self, path: str) -> None:
        self.history_actions.plan_reorganization(path)

    def _review(self, plan: ReorganizeOperation) -> bool:
        """A reorganization's plan, before and after, with Apply and Cancel."""
        from gam_desktop.gui.reorganize_plan_dialog import review

        return review(self, plan)

    # -- settings -------------------------------------------------------------------------

    def open_settings(self) -> None:
        from gam_desktop.gui.settings_dialog import SettingsDialog

        session = self.session
        dialog = SettingsDialog(session.prefs, session.api_key, self, session.embedding_key)
        if dialog.exec():
            session.set_preferences(
                dialog.result_preferences(), dialog.result_key(), dialog.result_embedding_key()
            )
            self._say_if_ready()
            if dialog.keychain_message:
                self.tell("The key was not saved", dialog.keychain_message)
            if self.workflow is not None:
                self.open_memory(self.workflow.folder.root)

    def bring_to_front(self) -> None:
        """The app was started again on this memory: this window is shown instead."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def set_api_key(self, key: str | None) -> None:
        """The key arrived from the keychain (read off the GUI thread at start-up)."""
        self.session.set_api_key(key)
        self._say_if_ready()

    def set_embedding_key(self, key: str | None) -> None:
        """The embedding endpoint's own key arrived from the keychain (at start-up)."""
        self.session.set_embedding_key(key)

    def _say_if_ready(self) -> None:
        """The chat asks nothing before there is an LLM and a memory: it says which to
        set up first (the LLM: without it no memory can be built either)."""
        missing = self.session.prefs.llm_missing(self.session.api_key)
        if missing is None and self.workflow is None:
            missing = NO_MEMORY
        self.chat.set_ready(missing)

    # -- the status bar -------------------------------------------------------------------

    def _show_busy(self, text: str, cancellable: bool) -> None:
        self.status_label.setText(text)
        self.progress.setRange(0, 0)  # busy until the engine says how far it has come
        self.progress.show()
        self.cancel_button.setVisible(cancellable)

    def _cancel(self) -> None:
        """The status bar's Cancel: summarizing again stops at once; a build asks how."""
        if not self.resummarize.cancel():
            self.intake.ask_to_stop()

    def _settled(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()

    def _show_progress(self, fraction: float) -> None:
        """How far the whole operation has come (the engine's fraction, in tenths of a
        percent so a long build visibly moves)."""
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setValue(round(fraction * PROGRESS_STEPS))

    # -- closing --------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.closing.allows(event):  # a build runs: finish it first, or keep working
            return
        self.store.setValue("window/geometry", self.saveGeometry())
        self.store.setValue("window/splitter", self.split.saveState())
        self.store.setValue(PANES_SETTING, panes.shares_text(self._shares))
        self.store.sync()
        self.tasks.cancel_all()
        self.tasks.wait_all()
        self.history.shutdown()
        self.sharing.stop()
        self.session.close()
        super().closeEvent(event)
