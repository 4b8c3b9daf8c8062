"""A screen reader can use the app (issue 13, "Also"): in Qt's accessibility tree, every
control of the window and its dialogs (buttons, text boxes, combo boxes, lists, trees, tabs,
progress bars, menu items, and any other widget the Tab key stops at) has a name, and no two
controls of the same kind share one. The walk is general: a widget added later is checked
without changing these tests."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleInterface, QIcon
from PySide6.QtWidgets import QMessageBox, QPushButton, QVBoxLayout, QWidget

from gam_desktop.gui import dialogs
from gam_desktop.gui.new_memory_dialog import NewMemoryDialog
from gam_desktop.gui.settings_dialog import SettingsDialog
from tests.gui.test_main_window import SAMPLES, built, history, wait

Role = QAccessible.Role
NAME, VALUE = QAccessible.Text.Name, QAccessible.Text.Value
CONTROLS = {  # the roles a person acts on: each needs a name
    Role.Button,
    Role.ButtonDropDown,
    Role.ButtonMenu,
    Role.CheckBox,
    Role.RadioButton,
    Role.ComboBox,
    Role.EditableText,
    Role.SpinBox,
    Role.Slider,
    Role.Dial,
    Role.List,
    Role.Tree,
    Role.Table,
    Role.PageTab,
    Role.PageTabList,
    Role.ProgressBar,
    Role.MenuItem,
    Role.HotkeyField,
}
# Named by their role alone, as in every Qt and native app: scroll bars, splitter handles.
UNNAMED_ROLES = {Role.ScrollBar, Role.Grip, Role.Separator}


def spoken_name(node: QAccessibleInterface) -> str:
    """What a screen reader says a control is called: its name, else its label (a QLabel
    whose buddy it is). A combo box's name on Linux is its current value (the label comes
    through the label relation), which names nothing."""
    name = node.text(NAME).strip()
    if node.role() == Role.ComboBox and name == node.text(VALUE).strip():
        name = ""
    labels = [other.text(NAME).strip() for other, _ in node.relations(QAccessible.Relation.Label)]
    return name or " ".join(label for label in labels if label)


def is_control(node: QAccessibleInterface) -> bool:
    """A role a person acts on, or a widget the Tab key stops at (a text browser)."""
    if node.role() in UNNAMED_ROLES:
        return False
    if node.role() in CONTROLS:
        return True
    widget = node.object()
    return isinstance(widget, QWidget) and bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)


def controls(root: QWidget) -> list[tuple[str, QAccessibleInterface]]:
    """(where, node) for every control under `root` in the accessibility tree, hidden ones
    too (a tab not on show, a button shown while a task runs). A combo box's popup list is
    part of the combo box."""
    found: list[tuple[str, QAccessibleInterface]] = []
    # A stack, not a recursive closure: a closure that calls itself is a reference cycle,
    # which would keep every node's Python wrapper alive until the garbage collector runs.
    stack = [(QAccessible.queryAccessibleInterface(root), type(root).__name__)]
    while stack:
        node, where = stack.pop()
        if node is None or not node.isValid():
            continue
        here = f"{where} > {node.role().name} {spoken_name(node)!r}"
        if is_control(node):
            found.append((here, node))
        if node.role() != Role.ComboBox:
            stack.extend((node.child(i), here) for i in reversed(range(node.childCount())))
    return found


@pytest.fixture(autouse=True)
def no_wrapper_outlives_its_interface():
    """Qt deletes a widget's accessibility interface with the widget; a Python wrapper of
    it still alive stays in PySide's table of wrappers by address, and a QAction made later
    at that address came back as a QAccessibleWidget (AttributeError: no 'menuRole' in
    the next test's window). Collected once the test's widgets are gone."""
    yield
    gc.collect()


def nameless(root: QWidget) -> list[str]:
    return [where for where, node in controls(root) if not spoken_name(node)]


def named_twice(root: QWidget) -> list[str]:
    """Controls of one kind under one parent with the same name (menu items: within their
    menu), and tab stops with the same name anywhere in the window."""
    siblings = Counter(
        (id(node.parent().object()), node.role(), spoken_name(node).casefold())
        for _where, node in controls(root)
    )
    stops = Counter(
        spoken_name(node).casefold()
        for _where, node in controls(root)
        if isinstance(node.object(), QWidget)
        and node.object().focusPolicy() & Qt.FocusPolicy.TabFocus
    )
    return [
        where
        for where, node in controls(root)
        if siblings[(id(node.parent().object()), node.role(), spoken_name(node).casefold())] > 1
        or (
            isinstance(node.object(), QWidget)
            and node.object().focusPolicy() & Qt.FocusPolicy.TabFocus
            and stops[spoken_name(node).casefold()] > 1
        )
    ]


def assert_named(root: QWidget) -> None:
    assert controls(root), "nothing was walked"
    assert nameless(root) == []
    assert named_twice(root) == []


def test_the_walk_finds_a_nameless_control_wherever_it_is(qtbot) -> None:
    """An icon-only button, however deep, is reported; named, it is not; two buttons with
    one name are reported."""
    root = QWidget()
    qtbot.addWidget(root)
    inner = QWidget(root)
    QVBoxLayout(root).addWidget(inner)
    icon_only = QPushButton(QIcon(), "", inner)
    QVBoxLayout(inner).addWidget(icon_only)
    assert [where.rsplit(" > ", 1)[-1] for where in nameless(root)] == ["Button ''"]
    icon_only.setAccessibleName("Refresh")
    assert nameless(root) == [] and named_twice(root) == []
    inner.layout().addWidget(QPushButton("Refresh", inner))
    assert len(named_twice(root)) == 2


def test_every_control_of_the_window_is_named(qtbot, window, tmp_path: Path) -> None:
    """The window with a memory open, an answered question, a search under way and the
    history loaded: every control is named, each tab's too."""
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    qtbot.keyClicks(window.chat.input, "What is BERT?")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
    wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    qtbot.keyClicks(window.find_panel.box, "bert")
    wait(qtbot, lambda: window.find_panel.hits.count() > 0)
    history(qtbot, window)
    window.operations.progressed.emit(1 / 3)  # the status bar's progress, as during a build
    assert_named(window)
    names = {spoken_name(node) for _where, node in controls(window)}
    assert {  # those Qt cannot guess: no text, or a text that says nothing alone
        "Find in this memory",
        "Clear the find box",
        "Memory tree",
        "Found in the text",
        "Preview",
        "Conversation",
        "Question",
        "Conversations",
        "Search conversations",
        "Facts",
        "Show the fact",
        "Operations",
        "Files the operation changed",
        "Changes to the file",
        "Progress",
        "Cancel the build",
    } <= names


def test_every_control_of_the_dialogs_is_named(qtbot, window, prefs, tmp_path: Path) -> None:
    settings = SettingsDialog(prefs, None, window)
    qtbot.addWidget(settings)
    assert_named(settings)
    combo = settings.provider
    node = QAccessible.queryAccessibleInterface(combo)
    assert spoken_name(node) == "Provider"  # its label, not its value
    create = NewMemoryDialog(window, documents=2, location=tmp_path)
    qtbot.addWidget(create)
    assert_named(create)
    welcome, _buttons = dialogs.question_box(
        window,
        dialogs.WELCOME_TITLE,
        "Where should your memory live?",
        {True: ("Create a new memory…", QMessageBox.ButtonRole.AcceptRole)},
        default=True,
    )
    qtbot.addWidget(welcome)
    assert_named(welcome)


def mnemonics(actions) -> list[str]:
    """The letter of each enabled item (Alt+letter on a menu bar, the letter in a menu),
    "none: <text>" for an item without one; a recent memory's number counts as one."""
    keys = []
    for action in actions:
        text = action.text().replace("&&", "")
        if action.isSeparator() or not action.isEnabled():
            continue
        at = text.find("&")
        keys.append(text[at + 1].lower() if at >= 0 else f"none: {text}")
    return keys


def assert_own_keys(actions) -> None:
    keys = mnemonics(actions)
    assert [key for key in keys if key.startswith("none")] == []
    assert len(keys) == len(set(keys)), keys
    for action in actions:
        if action.menu() is not None:
            assert_own_keys(action.menu().actions())


def test_the_menus_are_named_and_each_item_has_its_own_key(qtbot, window, tmp_path) -> None:
    """Every menu item has a name and a mnemonic of its own within its menu: the menu bar's,
    the tree's context menus and the conversations'."""
    assert_named(window.menuBar())
    assert_own_keys(window.menuBar().actions())
    built(qtbot, window, tmp_path / "memory", SAMPLES[:1])
    window.menus.fill_recent()
    assert mnemonics(window.menus.recent_menu.actions())[0] == "1"
    for path in window.tree.matches():
        assert_own_keys(window.tree.menu_for(window.tree.item_at(path)).actions())
    assert_own_keys(window.conversation_list.actions_for("any"))
