"""The window's menu bar: File, Edit, View, Memory and Help, with the platform's standard
shortcuts (QKeySequence's New, Open, Find, Preferences, Quit, HelpContents) and a fallback
where a platform binds none (Quit and Preferences have none on some Linux desktops).

The menus only call the window and its controllers; they hold no memory logic. What they
remember lives in QSettings: the recent memories (the preferences' `recent_folders`), the
theme (`view/theme`, applied through `theme`) and which panels are shown (`view/panels/…`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QWidget

from gam_desktop.engine.api import resources_dir
from gam_desktop.gui import theme
from gam_desktop.gui.about import about_text
from gam_desktop.gui.application import log_folder
from gam_desktop.gui.settings import save
from gam_desktop.gui.summarize_again import label as summarize_label
from gam_desktop.gui.tree_panel import IS_DIR_ROLE, PATH_ROLE
from gam_desktop.gui.window import Window

StandardKey = QKeySequence.StandardKey
FALLBACKS = {StandardKey.Quit: "Ctrl+Q", StandardKey.Preferences: "Ctrl+,"}
HISTORY_SHORTCUT = "Ctrl+Shift+H"
CHAT_SHORTCUT = "Ctrl+Shift+C"
PANELS = {  # setting name -> (menu label, the window's attribute holding the panel)
    "tree": ("Memory t&ree", "tree"),  # (T is the Theme's)
    "preview": ("&Preview", "preview"),
    "tabs": ("&Chat, facts and history", "tabs"),
}
PANEL_SETTING = "view/panels/{}"


def standard_shortcuts(key: QKeySequence.StandardKey) -> list[QKeySequence]:
    """The platform's bindings for a standard key, else the usual one where it has none."""
    bindings = QKeySequence.keyBindings(key)
    if not bindings and key in FALLBACKS:
        bindings = [QKeySequence(FALLBACKS[key])]
    return bindings


def no_text_roles(menu: QWidget) -> None:
    """No action of `menu` (and its submenus) is moved by its text. Qt's default role reads
    the label: on macOS an item whose text starts with "Settings", "Preferences", "Options",
    "About" or "Quit" (a recent memory's name too) would become the application menu's
    Preferences…, About or Quit. Only the actions given such a role on purpose move."""
    for action in menu.actions():
        if action.menuRole() == QAction.MenuRole.TextHeuristicRole:
            action.setMenuRole(QAction.MenuRole.NoRole)
        submenu = action.menu()
        if isinstance(submenu, QMenu):
            no_text_roles(submenu)


def readme_path() -> Path:
    """The README beside the resources: a source checkout, the PyInstaller bundle, or a
    wheel install (<prefix>/share/gam-desktop)."""
    return resources_dir().parent / "README.md"


def _literal(text: str) -> str:
    """Text shown as is in a menu item (an ampersand is not a mnemonic)."""
    return text.replace("&", "&&")


def _flag(value: object, default: bool = True) -> bool:
    """A boolean as QSettings gives it back (the text of an INI file, or the value)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true")


class Menus(QObject):
    """The menu bar of `window`, and the actions in it (tests trigger them)."""

    def __init__(self, window: Window) -> None:
        super().__init__(window)
        self.window = window
        self.documentation: QDialog | None = None
        bar = window.menuBar()
        self.file_menu = bar.addMenu("&File")
        self.edit_menu = bar.addMenu("&Edit")
        self.view_menu = bar.addMenu("&View")
        self.memory_menu = bar.addMenu("&Memory")
        self.help_menu = bar.addMenu("&Help")
        self._file()
        self._edit()
        self._view()
        self._memory()
        self._help()
        window.session.opened.connect(lambda _root, _folder: self._memory_open(True))
        self._memory_open(False)
        no_text_roles(bar)

    def _action(
        self,
        menu: QMenu,
        label: str,
        slot: Callable[[], object],
        shortcut: QKeySequence.StandardKey | str | None = None,
        role: QAction.MenuRole | None = None,
    ) -> QAction:
        action = QAction(label, self.window)
        if isinstance(shortcut, StandardKey):
            action.setShortcuts(standard_shortcuts(shortcut))
        elif shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if role is not None:
            action.setMenuRole(role)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    # -- File -------------------------------------------------------------------------------

    def _file(self) -> None:
        menu, window = self.file_menu, self.window
        self.new_memory = self._action(menu, "&New memory…", self.create_memory, StandardKey.New)
        self.open_memory = self._action(
            menu, "&Open memory…", lambda: self.window.choose_folder(), StandardKey.Open
        )
        self.recent_menu = menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        self.fill_recent()
        menu.addSeparator()
        self.add_documents = self._action(
            menu, "&Add documents…", lambda: self.window.choose_documents()
        )
        self.add_folder = self._action(  # all the readable files under it, as a drop gives
            menu, "Add a &folder…", lambda: self.window.choose_document_folder()
        )
        menu.addSeparator()
        self.quit = self._action(
            menu, "&Quit", lambda: self.window.close(), StandardKey.Quit, QAction.MenuRole.QuitRole
        )
        window.addAction(self.quit)  # its shortcut works while the menu bar is disabled too

    def create_memory(self) -> None:
        """File ▸ New memory: a name and a location, the folder made once confirmed."""
        from gam_desktop.gui.new_memory_dialog import offer_new_memory

        offer_new_memory(self.window, self.window.open_memory)

    def recent_folders(self) -> list[str]:
        return list(self.window.session.prefs.recent_folders)

    def fill_recent(self) -> None:
        """The recently opened memories, newest first (missing ones shown, disabled)."""
        menu = self.recent_menu
        menu.clear()
        folders = self.recent_folders()
        for number, folder in enumerate(folders, start=1):
            path = Path(folder)
            label = f"{_literal(path.name)} — {_literal(str(path.parent))}"
            action = menu.addAction(f"&{number} {label}" if number < 10 else label)
            action.setData(folder)
            action.setToolTip(folder)
            if not path.is_dir():
                action.setText(f"{action.text()} (not found)")
                action.setEnabled(False)
            action.triggered.connect(lambda _checked=False, p=path: self.window.open_memory(p))
        if not folders:
            empty = menu.addAction("No recent memories")
            empty.setEnabled(False)
        menu.addSeparator()
        self.clear_recent = menu.addAction("&Clear recent")
        self.clear_recent.setEnabled(bool(folders))
        self.clear_recent.triggered.connect(self.forget_recent)
        no_text_roles(menu)

    def forget_recent(self) -> None:
        prefs = self.window.session.prefs
        prefs.recent_folders = []
        save(self.window.store, prefs)
        self.fill_recent()

    # -- Edit -------------------------------------------------------------------------------

    def _edit(self) -> None:
        menu, window = self.edit_menu, self.window
        menu.setToolTipsVisible(True)  # why Undo is off, what it would undo
        self.undo = self._action(menu, "&Undo", lambda: window.undo_last.undo(), StandardKey.Undo)
        window.undo_last.attach(self.undo)
        menu.addSeparator()
        self.find = self._action(menu, "&Find…", self.show_find, StandardKey.Find)
        self.find.setEnabled(hasattr(window, "show_find"))  # the find bar may not exist
        menu.addSeparator()
        self.preferences = self._action(
            menu,
            "&Settings…",
            lambda: self.window.open_settings(),
            StandardKey.Preferences,
            QAction.MenuRole.PreferencesRole,
        )
        sharing = getattr(window, "sharing", None)
        self.share = self._action(
            menu,
            "Let other &apps use this memory…",
            lambda: window.sharing.open_dialog(window),
        )
        self.share.setEnabled(sharing is not None)

    def show_find(self) -> None:
        show = getattr(self.window, "show_find", None)
        if callable(show):
            show()

    # -- View -------------------------------------------------------------------------------

    def _view(self) -> None:
        menu = self.view_menu
        themes = self.theme_menu = menu.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        self.theme_group.setExclusive(True)
        stored = self.window.store.value(theme.SETTING, theme.SYSTEM)
        choice = stored if stored in theme.CHOICES else theme.SYSTEM
        self.theme_actions: dict[str, QAction] = {}
        for name, label in theme.CHOICES.items():
            action = themes.addAction(label)
            action.setCheckable(True)
            action.setChecked(name == choice)
            action.setData(name)
            action.triggered.connect(lambda _checked=False, n=name: self.choose_theme(n))
            self.theme_group.addAction(action)
            self.theme_actions[name] = action
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            theme.choose(app, choice)  # the stored choice (a no-op for the OS's, the default)
        menu.addSeparator()
        self.panel_actions: dict[str, QAction] = {}
        for name, (label, _attribute) in PANELS.items():
            action = menu.addAction(label)
            action.setCheckable(True)
            shown = _flag(self.window.store.value(PANEL_SETTING.format(name)))
            action.setChecked(shown)
            self._panel(name).setVisible(shown)
            action.toggled.connect(lambda on, n=name: self.show_panel(n, on))
            self.panel_actions[name] = action

    def choose_theme(self, choice: str) -> None:
        """View ▸ Theme: follow `choice` from now on, here and at the next start."""
        self.window.store.setValue(theme.SETTING, choice)
        self.window.store.sync()
        self.theme_actions[choice].setChecked(True)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            theme.choose(app, choice)

    def _panel(self, name: str) -> QWidget:
        """The pane of the window's splitter that holds the panel (itself, or a box
        around it)."""
        widget: QWidget = getattr(self.window, PANELS[name][1])
        split = getattr(self.window, "split", None)
        pane: QWidget | None = widget
        while pane is not None and pane.parentWidget() is not split:
            pane = pane.parentWidget()
        return pane if pane is not None and split is not None else widget

    def show_panel(self, name: str, shown: bool) -> None:
        self._panel(name).setVisible(shown)
        self.window.store.setValue(PANEL_SETTING.format(name), shown)

    # -- Memory -----------------------------------------------------------------------------

    def _memory(self) -> None:
        menu, window = self.memory_menu, self.window
        self.chat = self._action(
            menu,
            "&Chat",
            lambda: self.show_tab(window.chat_split, window.chat.input),
            CHAT_SHORTCUT,
        )
        self.new_conversation = self._action(
            menu, "&New conversation", lambda: self.window.new_conversation(), "Ctrl+Shift+N"
        )
        self.facts = self._action(
            menu,
            "&Facts learned from you",
            lambda: self.show_tab(window.facts, window.facts.list),
        )
        self.history = self._action(
            menu,
            "&History",
            lambda: self.show_tab(window.history, window.history.list),
            HISTORY_SHORTCUT,  # not Ctrl+H: on macOS that is Cmd+H, the system's Hide
        )
        menu.addSeparator()
        self.reorganize = self._action(menu, "&Reorganize folder…", self.reorganize_selected)
        # "Summarize again (3 notes)": the memories written without the LLM, once counted
        self.summarize_again = self._action(
            menu, summarize_label(0), lambda: window.resummarize.run()
        )
        self.summarize_again.setEnabled(False)
        window.resummarize.counted.connect(self.show_fallbacks)
        menu.addSeparator()
        self.save_switch = menu.addAction("&Save conversations in this memory")
        self.learn_switch = menu.addAction("&Learn facts from what I say")
        for switch in (self.save_switch, self.learn_switch):
            switch.setCheckable(True)
            switch.setChecked(True)
            switch.setEnabled(False)  # until a memory is open: they are that memory's
        self.save_switch.toggled.connect(window.personal.set_saving)
        self.learn_switch.toggled.connect(window.personal.set_learning)

    def show_tab(self, page: QWidget, focus: QWidget) -> None:
        """Bring a tab to the front (its panel shown if it was hidden) with the keyboard in
        it, on `focus` (on the tab itself when that is not shown: an empty list)."""
        window = self.window
        if not self.panel_actions["tabs"].isChecked():
            self.panel_actions["tabs"].setChecked(True)  # as if chosen in View
        window.tabs.setCurrentWidget(page)
        target = focus if focus.isVisibleTo(window.tabs) else window.tabs.tabBar()
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _memory_open(self, is_open: bool) -> None:
        self.reorganize.setEnabled(is_open)

    def show_fallbacks(self, count: int) -> None:
        """Memory ▸ Summarize again says how many notes it would summarize; off with none."""
        self.summarize_again.setText(summarize_label(count))
        self.summarize_again.setEnabled(count > 0)

    def reorganize_selected(self) -> None:
        """Memory ▸ Reorganize folder: the folder selected in the tree (or the selected
        memory's folder)."""
        window = self.window
        item = window.tree.currentItem()
        path = None if item is None else item.data(0, PATH_ROLE)
        if item is not None and path is not None and not item.data(0, IS_DIR_ROLE):
            path = path.rsplit("/", 1)[0] if "/" in path else None  # the memory's folder
        if not path:
            window.tell(
                "Choose a folder to reorganize",
                "Select a folder in the memory tree, then choose Memory ▸ Reorganize "
                "folder… again (or right-click the folder).",
            )
            return
        window.plan_reorganization(path)

    # -- Help -------------------------------------------------------------------------------

    def _help(self) -> None:
        menu = self.help_menu
        self.docs = self._action(
            menu, "&User guide", self.show_documentation, StandardKey.HelpContents
        )
        self.log_folder = self._action(menu, "Open &log folder", self.open_log_folder)
        menu.addSeparator()
        self.about = self._action(
            menu, "&About GAM Desktop", self.show_about, role=QAction.MenuRole.AboutRole
        )

    def open_log_folder(self) -> None:
        folder = log_folder()
        folder.mkdir(parents=True, exist_ok=True)
        self.window.open_outside(QUrl.fromLocalFile(str(folder)), "the log folder")

    def show_documentation(self) -> None:
        """The user guide (gui/user_guide.py), in a window of its own, searchable; it was
        the developer's README."""
        from gam_desktop.gui.user_guide import UserGuide, guide_path

        guide = guide_path()
        if not guide.is_file():
            self.window.tell(
                "The user guide is not installed",
                f"The user guide was not found at {guide}. It comes with GAM Desktop.",
            )
            return
        if self.documentation is None:
            self.documentation = UserGuide(guide, self.window)
        self.documentation.show()
        self.documentation.raise_()
        self.documentation.activateWindow()

    def show_about(self) -> None:
        """The version, the git in use and where the logs are (gui/about.py)."""
        git_setting = self.window.session.prefs.git_path or None
        self.window.tell("About GAM Desktop", about_text(git_setting, log_folder()))
