"""The menu bar a desktop app has (issue 13, item 7): File, Edit, View, Memory and Help,
the platform's standard shortcuts and no shortcut twice, Open recent, the theme choice
(kept in QSettings and applied) and the panels."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDialog, QTextBrowser

from gam_desktop import __version__
from gam_desktop.gui import theme
from gam_desktop.gui.app import log_folder
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.menus import readme_path, standard_shortcuts
from gam_desktop.gui.settings import load
from tests.gui.test_main_window import SAMPLES, built, wait

StandardKey = QKeySequence.StandardKey


def labels(menu) -> list[str]:
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def keys(action: QAction) -> list[str]:
    return [k.toString() for k in action.shortcuts()]


def keys_of(key: QKeySequence.StandardKey) -> list[str]:
    return [k.toString() for k in QKeySequence.keyBindings(key)]


@pytest.fixture
def system_theme():
    """The app follows the OS again after the test (the application is shared)."""
    yield
    theme.choose(QApplication.instance(), theme.SYSTEM)


def test_every_menu_is_there_with_its_actions(window) -> None:
    bar = window.menuBar()
    assert [a.text() for a in bar.actions()] == ["&File", "&Edit", "&View", "&Memory", "&Help"]
    menus = window.menus
    assert labels(menus.file_menu) == [
        "New memory…",
        "Open memory…",
        "Open recent",
        "Add documents…",
        "Add a folder…",
        "Quit",
    ]
    assert labels(menus.edit_menu) == [
        "Undo",
        "Find…",
        "Settings…",
        "Let other apps use this memory…",
    ]
    assert labels(menus.view_menu) == ["Theme", "Memory tree", "Preview", "Chat, facts and history"]
    assert labels(menus.theme_menu) == ["System", "Light", "Dark"]
    assert labels(menus.memory_menu) == [
        "Chat",
        "New conversation",
        "Facts learned from you",
        "History",
        "Reorganize folder…",
        "Summarize again",  # off until notes written without the LLM are counted
        "Save conversations in this memory",
        "Learn facts from what I say",
    ]  # no second "Settings…": Edit has it (on macOS both became Preferences…)
    assert labels(menus.help_menu) == ["User guide", "Open log folder", "About GAM Desktop"]
    assert window.save_switch is menus.save_switch and window.learn_switch is menus.learn_switch


# Words written with a capital inside a sentence-case label: names, not the start of a word.
PROPER_NAMES = {"GAM", "Desktop", "I", "LLM"}


def title_cased(label: str) -> list[str]:
    """The words after the first that a sentence-case label would not capitalize."""
    words = label.replace("&&", "\0").replace("&", "").replace("\0", "&").split()
    return [
        word for word in words[1:] if word[:1].isupper() and word.strip("(),.…") not in PROPER_NAMES
    ]


def every_action(menu) -> list[QAction]:
    found = []
    for action in menu.actions():
        if action.isSeparator():
            continue
        found.append(action)
        if action.menu() is not None:
            found += every_action(action.menu())
    return found


def test_every_menu_item_is_in_sentence_case(qtbot, window, tmp_path) -> None:
    """One convention for every menu and action label, the one the app mostly used ("Summarize
    again", "New conversation"): "Open Recent", "Clear Recent", "User Guide" and "Let Other
    Apps Use This Memory…" were in title case beside them. Context menus too."""
    from PySide6.QtWidgets import QTreeWidgetItem

    from gam_desktop.gui.tree_panel import IS_DIR_ROLE, PATH_ROLE

    assert window.open_memory(tmp_path / "memory")  # (so File ▸ Open recent lists one)
    window.menus.fill_recent()
    actions = every_action(window.menuBar())
    recent = {a for a in every_action(window.menus.recent_menu) if a.data()}  # folder names
    assert recent
    for is_dir in (True, False):
        item = QTreeWidgetItem(["x"])
        item.setData(0, PATH_ROLE, "folder" if is_dir else "folder/note.md")
        item.setData(0, IS_DIR_ROLE, is_dir)
        actions += window.tree.menu_for(item).actions()
    actions += window.conversation_list.actions_for("any")
    labels = [a.text() for a in actions if a not in recent and not a.isSeparator()]
    assert len(labels) > 25
    assert {label: title_cased(label) for label in labels if title_cased(label)} == {}


def test_the_standard_shortcuts_are_bound(window) -> None:
    menus = window.menus
    for action, key in (
        (menus.new_memory, StandardKey.New),
        (menus.open_memory, StandardKey.Open),
        (menus.find, StandardKey.Find),
        (menus.preferences, StandardKey.Preferences),
        (menus.quit, StandardKey.Quit),
        (menus.docs, StandardKey.HelpContents),
    ):
        assert action.shortcuts(), action.text()
        assert action.shortcuts() == standard_shortcuts(key), action.text()
        platform = QKeySequence.keyBindings(key)
        assert not platform or action.shortcuts() == platform  # the platform's, when it has one
    assert keys(menus.preferences) == (
        keys_of(StandardKey.Preferences) or ["Ctrl+,"]  # where the platform binds none
    )
    assert keys(menus.quit) == (keys_of(StandardKey.Quit) or ["Ctrl+Q"])


def test_no_shortcut_is_bound_twice(window) -> None:
    bound: Counter[str] = Counter()
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            bound[key.toString()] += 1
    for shortcut in window.findChildren(QShortcut):
        sequences = shortcut.keys()  # a QShortcut's key sequences, not a dict's keys
        for key in sequences:
            bound[key.toString()] += 1
    assert bound, "no shortcuts at all"
    assert [key for key, n in bound.items() if n > 1] == []
    assert {"Ctrl+N", "Ctrl+O", "Ctrl+F", "Ctrl+Q", "Ctrl+,", "F1"} <= set(bound)


# What macOS keeps for itself (Qt writes Cmd as Ctrl there): Hide, Hide Others, Minimize,
# the input source and Spotlight, switching windows.
MACOS_SYSTEM_KEYS = {"Ctrl+H", "Ctrl+Alt+H", "Ctrl+M", "Ctrl+Space", "Ctrl+Alt+Space", "Ctrl+`"}


def all_actions(menu) -> list[QAction]:
    """Every action of a menu bar or menu, its submenus' included."""
    found = []
    for action in menu.actions():
        found.append(action)
        if action.menu() is not None:
            found += all_actions(action.menu())
    return found


def test_no_shortcut_is_one_macos_keeps_for_itself(window) -> None:
    menus = window.menus
    assert keys(menus.history) == ["Ctrl+Shift+H"]  # was Ctrl+H: Cmd+H hides the app on macOS
    bound = {key.toString() for a in window.findChildren(QAction) for key in a.shortcuts()}
    assert bound & MACOS_SYSTEM_KEYS == set()
    standard = {k.toString() for key in StandardKey for k in QKeySequence.keyBindings(key)}
    assert "Ctrl+Shift+H" not in standard  # nothing the platform means by a standard key


def test_no_menu_item_is_moved_by_its_text(qtbot, window, tmp_path) -> None:
    """On macOS Qt moves an item whose text reads "Settings…", "Preferences", "Options",
    "About" or "Quit" to the application menu, unless its role says otherwise: Memory ▸
    Settings… and Edit ▸ Settings… both became Preferences…. Only the items meant to move do,
    a recent memory's name included."""
    for name in ("Settings", "Options for work", "About me"):
        assert window.open_memory(tmp_path / name)
    window.menus.recent_menu.aboutToShow.emit()
    actions = all_actions(window.menuBar())
    recent = [a for a in window.menus.recent_menu.actions() if a.data()]
    assert len(recent) == 3 and set(recent) <= set(actions)  # the recent memories are there
    assert [a.text() for a in actions if a.menuRole() == QAction.MenuRole.TextHeuristicRole] == []
    moved = {a.menuRole(): a for a in actions if a.menuRole() != QAction.MenuRole.NoRole}
    assert len([a for a in actions if a.menuRole() != QAction.MenuRole.NoRole]) == 3
    assert moved[QAction.MenuRole.PreferencesRole] is window.menus.preferences
    assert moved[QAction.MenuRole.QuitRole] is window.menus.quit
    assert moved[QAction.MenuRole.AboutRole] is window.menus.about


def test_open_recent_lists_the_opened_memories_and_reopens_one(qtbot, window, tmp_path) -> None:
    first, second = tmp_path / "work notes", tmp_path / "R&D"
    assert window.open_memory(first) and window.open_memory(second)
    recent = window.menus.recent_menu
    recent.aboutToShow.emit()  # as when the person opens the submenu
    entries = [a for a in recent.actions() if a.data()]
    assert [a.data() for a in entries] == [str(second), str(first)]  # newest first
    assert entries[0].text() == f"&1 R&&D — {tmp_path}"  # the name's & is no mnemonic
    entries[1].trigger()
    assert window.workflow.folder.root == first
    assert window.windowTitle().startswith("work notes")
    recent.aboutToShow.emit()
    assert [a.data() for a in recent.actions() if a.data()] == [str(first), str(second)]
    assert window.menus.clear_recent.isEnabled()
    window.menus.clear_recent.trigger()
    assert [a.data() for a in recent.actions() if a.data()] == []
    assert "No recent memories" in labels(recent)
    assert load(window.store).recent_folders == []  # kept cleared in QSettings


def test_a_missing_recent_memory_is_shown_disabled(qtbot, window, tmp_path) -> None:
    gone = tmp_path / "gone"
    assert window.open_memory(gone)
    # session.close() is for a window whose tasks have finished: what opening started (the
    # undo menu's last operation, conversations, facts) still works in the folder, and
    # deleting the folder under it failed on a busy machine ("Directory not empty": .git)
    wait(qtbot, lambda: not window.tasks.running())
    window.session.close()
    for path in sorted(gone.rglob("*"), reverse=True):
        path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
    gone.rmdir()
    window.menus.fill_recent()
    entry = next(a for a in window.menus.recent_menu.actions() if a.data() == str(gone))
    assert not entry.isEnabled() and entry.text().endswith("(not found)")


def test_the_theme_choice_is_kept_and_applied(qtbot, make_window, prefs, system_theme) -> None:
    app = QApplication.instance()
    window = make_window(prefs, "shared.ini")
    actions = window.menus.theme_actions
    assert actions["system"].isChecked() and theme.chosen(app) == theme.SYSTEM
    dark_by_os = theme.is_dark(app)
    chosen = theme.LIGHT_CHOICE if dark_by_os else theme.DARK_CHOICE
    other = theme.LIGHT if dark_by_os else theme.DARK
    actions[chosen].trigger()
    assert actions[chosen].isChecked() and not actions["system"].isChecked()  # one of three
    assert theme.is_dark(app) is (chosen == theme.DARK_CHOICE)
    assert other["window"] in app.styleSheet()  # applied: the chosen scheme's colours
    assert app.palette().window().color().name() == other["window"]  # for what it does not paint
    assert window.store.value(theme.SETTING) == chosen
    window.close()
    theme.choose(app, theme.SYSTEM)  # as at the next start: the OS's scheme until read
    again = make_window(prefs, "shared.ini")  # the same settings file: the next start
    assert again.menus.theme_actions[chosen].isChecked()
    assert theme.chosen(app) == chosen and other["window"] in app.styleSheet()
    again.menus.theme_actions["system"].trigger()
    assert theme.chosen(app) == theme.SYSTEM and theme.is_dark(app) is dark_by_os
    assert again.store.value(theme.SETTING) == theme.SYSTEM


def test_the_panels_can_be_hidden_and_stay_hidden(make_window, prefs) -> None:
    window = make_window(prefs, "panels.ini")
    tree = window.menus.panel_actions["tree"]
    assert tree.isChecked() and window.tree.isVisible()
    tree.trigger()
    assert not tree.isChecked() and not window.tree.isVisible()
    assert window.preview.isVisible() and window.tabs.isVisible()
    window.close()
    again = make_window(prefs, "panels.ini")
    assert not again.menus.panel_actions["tree"].isChecked() and not again.tree.isVisible()
    again.menus.panel_actions["tree"].trigger()
    assert again.tree.isVisible()


def test_memory_menu_shows_history_and_reorganizes_the_selected_folder(
    qtbot, window, recorder, tmp_path, monkeypatch
) -> None:
    menus = window.menus
    assert not menus.reorganize.isEnabled()  # no memory yet
    built(qtbot, window, tmp_path / "memory", SAMPLES[:2])
    assert menus.reorganize.isEnabled()
    menus.history.trigger()
    assert window.tabs.currentWidget() is window.history
    menus.facts.trigger()
    assert window.tabs.currentWidget() is window.facts
    planned: list[str] = []
    monkeypatch.setattr(window, "plan_reorganization", planned.append)
    window.tree.setCurrentItem(None)
    menus.reorganize.trigger()
    assert recorder.told[-1][0] == "Choose a folder to reorganize" and planned == []
    folder = next(p for p in (tmp_path / "memory").iterdir() if p.is_dir() and p.name[0] != ".")
    window.tree.setCurrentItem(window.tree.item_at(folder.name))
    menus.reorganize.trigger()
    assert planned == [folder.name]
    memory = next(p for p in folder.rglob("*.md") if p.name != "README.md")
    window.tree.setCurrentItem(
        window.tree.item_at(memory.relative_to(tmp_path / "memory").as_posix())
    )
    menus.reorganize.trigger()
    assert planned[-1] == memory.parent.relative_to(tmp_path / "memory").as_posix()


def test_find_calls_the_windows_find_when_it_has_one(window) -> None:
    assert window.menus.find.isEnabled() == hasattr(MainWindow, "show_find")
    calls: list[bool] = []
    window.show_find = lambda: calls.append(True)
    window.menus.find.setEnabled(True)
    window.menus.find.trigger()
    assert calls == [True]


def test_help_opens_the_logs_the_documentation_and_about(window, recorder) -> None:
    menus = window.menus
    menus.log_folder.trigger()
    assert recorder.opened == [QUrl.fromLocalFile(str(log_folder()))]
    assert log_folder().is_dir()
    menus.about.trigger()
    title, text = recorder.told[-1]
    assert title == "About GAM Desktop" and f"GAM Desktop {__version__}" in text
    assert str(log_folder()) in text
    assert readme_path().is_file()  # a source checkout has it beside resources/
    menus.docs.trigger()
    dialog = window.findChild(QDialog)
    assert dialog is not None and dialog.isVisible()
    browser = dialog.findChild(QTextBrowser)
    text = browser.toPlainText()
    # the user guide (issue 39), rendered: not the developer's README
    assert text.startswith("GAM Desktop user guide") and "Where your files live" in text
    dialog.close()
    menus.docs.trigger()
    assert window.findChildren(QDialog) == [dialog] and dialog.isVisible()  # one, reused


def test_edit_settings_and_quit_reach_the_window(window, monkeypatch) -> None:
    opened: list[bool] = []
    monkeypatch.setattr(window, "open_settings", lambda: opened.append(True))
    window.menus.preferences.trigger()
    assert opened == [True]
    assert window.menus.preferences.menuRole() == QAction.MenuRole.PreferencesRole
    window.menus.quit.trigger()
    assert not window.isVisible()


def test_new_memory_offers_the_new_memory_dialog(window) -> None:
    from gam_desktop.gui.new_memory_dialog import NewMemoryDialog

    window.menus.new_memory.trigger()
    shown = [d for d in window.findChildren(NewMemoryDialog) if d.isVisible()]
    assert len(shown) == 1
    shown[0].reject()
