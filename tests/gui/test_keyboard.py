"""The app with the keyboard alone (issue 13, "Also"): every key below goes to the widget
that has the keyboard focus, as a person's would; no click, no call of a slot. Shortcuts
reach the chat, the history and the settings, Tab goes through the window in reading
order, the arrows move through the tree (the preview follows), Ctrl+F finds, and whatever
has the focus shows it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer, Slot
from PySide6.QtGui import QContextMenuEvent, QImage
from PySide6.QtWidgets import QApplication, QWidget

from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.gui.tree_panel import PATH_ROLE
from tests.gui.test_main_window import SAMPLES, built, wait

Key, Mod = Qt.Key, Qt.KeyboardModifier
CTRL_SHIFT = Mod.ControlModifier | Mod.ShiftModifier


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard"
    return widget


def press(qtbot, key: Key, modifiers: Mod = Mod.NoModifier) -> None:
    """A key pressed where the focus is (shortcuts included, as Qt delivers them)."""
    qtbot.keyClick(focused(), key, modifiers)


def type_text(qtbot, text: str) -> None:
    qtbot.keyClicks(focused(), text)


def active(qtbot, window) -> None:
    """The window in front with the keyboard: shortcuts only reach the active window."""
    window.activateWindow()
    wait(qtbot, window.isActiveWindow)


def ready(qtbot, window, tmp_path: Path) -> None:
    built(qtbot, window, tmp_path / "memory", SAMPLES)
    active(qtbot, window)


class Escaper(QObject):
    """Presses Escape in the modal dialog once it is up (a dialog's exec() blocks the
    test until then); records which dialog it was."""

    def __init__(self, qtbot, parent: QObject) -> None:
        super().__init__(parent)
        self.qtbot = qtbot
        self.seen: list[QWidget] = []

    @Slot()
    def escape(self) -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            QTimer.singleShot(10, self, self.escape)  # not up yet: look again
            return
        self.seen.append(dialog)
        self.qtbot.keyClick(dialog.focusWidget() or dialog, Key.Key_Escape)


def test_ask_a_question_from_the_keyboard(qtbot, window, tmp_path: Path) -> None:
    ready(qtbot, window, tmp_path)
    window.tree.setFocus()
    press(qtbot, Key.Key_C, CTRL_SHIFT)  # Memory ▸ Chat
    assert window.tabs.currentWidget() is window.chat_split
    assert focused() is window.chat.input
    type_text(qtbot, "What is BERT?")
    press(qtbot, Key.Key_Return)  # Enter sends
    wait(qtbot, lambda: window.chat.turns[-1].result is not None)
    assert "2018" in window.chat.turns[-1].result.answer
    assert "2018" in window.chat.transcript.toPlainText()
    press(qtbot, Key.Key_Tab)  # Tab leaves the question box (no tab typed in it)
    assert focused() is window.chat.copy and window.chat.input.toPlainText() == ""


def test_move_through_the_tree_and_read_the_preview(qtbot, window, tmp_path: Path) -> None:
    ready(qtbot, window, tmp_path)
    press(qtbot, Key.Key_F, Mod.ControlModifier)  # Edit ▸ Find puts the keyboard in the box
    assert focused() is window.find_panel.box
    press(qtbot, Key.Key_Down)  # from the find box down to the tree
    assert focused() is window.tree
    visited = []
    for _ in range(4):  # a folder, its overview, its first memories: each one shown
        press(qtbot, Key.Key_Down)
        item = window.tree.currentItem()
        if item.childCount():
            press(qtbot, Key.Key_Right)  # a folder opens with the right arrow
        path = item.data(0, PATH_ROLE)
        visited.append(path)
        assert window.preview.path in (path, f"{path}/README.md")  # the preview follows
    assert len(set(visited)) == 4
    assert window.preview.path == visited[-1] and window.preview.title.text()
    press(qtbot, Key.Key_Tab)  # on to the preview's text, to read it
    assert focused() is window.preview.body
    assert window.preview.body.toPlainText()


def test_find_opens_the_first_match_with_enter(qtbot, window, tmp_path: Path) -> None:
    ready(qtbot, window, tmp_path)
    press(qtbot, Key.Key_F, Mod.ControlModifier)
    type_text(qtbot, "bert")
    wait(qtbot, lambda: window.find_panel.hits.count() > 0)
    press(qtbot, Key.Key_Return)
    assert window.preview.path is not None and "bert" in window.preview.path
    press(qtbot, Key.Key_Escape)  # clears the box: the whole tree again
    assert window.find_panel.box.text() == "" and not window.tree.filtered


def test_history_opens_with_its_shortcut_ready_for_the_arrows(
    qtbot, window, tmp_path: Path
) -> None:
    ready(qtbot, window, tmp_path)
    press(qtbot, Key.Key_H, CTRL_SHIFT)  # Memory ▸ History
    assert window.tabs.currentWidget() is window.history
    assert focused() is window.history.list
    wait(qtbot, lambda: window.history.operations and not window.history.loading())
    first = window.history.current()
    assert first is not None
    press(qtbot, Key.Key_Down)
    assert window.history.current() is not first or len(window.history.operations) == 1


def test_settings_open_with_their_shortcut_and_close_with_escape(
    qtbot, window, tmp_path: Path
) -> None:
    ready(qtbot, window, tmp_path)
    prefs = window.prefs
    escaper = Escaper(qtbot, window)
    QTimer.singleShot(0, escaper, escaper.escape)
    press(qtbot, Key.Key_Comma, Mod.ControlModifier)  # Edit ▸ Settings (returns once closed)
    assert len(escaper.seen) == 1 and isinstance(escaper.seen[0], SettingsDialog)
    assert not escaper.seen[0].isVisible() and window.prefs is prefs  # nothing saved
    assert QApplication.activeModalWidget() is None


def test_tab_goes_through_the_window_in_reading_order(qtbot, window, tmp_path: Path) -> None:
    """From the find box, Tab visits each pane left to right, top to bottom, and comes
    back; Shift+Tab goes the other way."""
    ready(qtbot, window, tmp_path)
    press(qtbot, Key.Key_F, Mod.ControlModifier)
    type_text(qtbot, "bert")  # the hits are listed under the tree
    wait(qtbot, lambda: window.find_panel.hits.count() > 0)
    press(qtbot, Key.Key_Return)  # a memory in the preview: its buttons are shown
    window.find_panel.box.setFocus()
    stops = [focused()]
    for _ in range(60):
        press(qtbot, Key.Key_Tab)
        if focused() is stops[0]:
            break
        if focused() is not stops[-1]:  # (a text's links are stops inside it)
            stops.append(focused())
    panel, preview, chat = window.find_panel, window.preview, window.chat
    expected = [
        panel.box,
        window.tree,
        panel.hits,
        preview.body,
        *[b for b in (preview.original, preview.editor) if b.isVisible()],
        window.tabs.tabBar(),
        window.conversation_list.fresh,
        window.conversation_list.search,
        *[w for w in (window.conversation_list.list,) if w.isVisible()],
        chat.list_toggle,
        chat.transcript,  # the conversation, then the question under it (as it reads)
        chat.input,
        *[b for b in (chat.copy,) if b.isEnabled()],  # (once there is an answer to copy)
        chat.research,
        chat.send,
    ]
    assert [type(w).__name__ for w in stops] == [type(w).__name__ for w in expected]
    assert stops == expected


def edge(widget: QWidget) -> QImage:
    """The strip along the top edge of `widget` (and just outside it, where a focus frame
    is drawn), as its window shows it: where a focus ring is, away from a text cursor."""
    top = widget.window()
    corner = widget.mapTo(top, QPoint(0, 0))
    return top.grab(
        QRect(corner.x() + widget.width() // 4, corner.y() - 3, widget.width() // 2, 5)
    ).toImage()


def test_whatever_has_the_keyboard_shows_it(qtbot, window, prefs, tmp_path: Path) -> None:
    """Each kind of control looks different with the focus than without (a ring)."""
    ready(qtbot, window, tmp_path)
    window.tree.setCurrentItem(window.tree.topLevelItem(0))  # a memory shown: its buttons too
    settings = SettingsDialog(prefs, None, window)
    qtbot.addWidget(settings)
    kinds = [
        window.find_panel.box,
        window.tree,
        window.preview.body,
        window.tabs.tabBar(),
        window.conversation_list.fresh,
        window.chat.input,
        window.chat.send,  # the default button: its ring is in the text's colour
    ]
    for widget in kinds:
        elsewhere = window.preview.editor if widget is not window.preview.editor else window.tree
        elsewhere.setFocus(Qt.FocusReason.TabFocusReason)
        before = edge(widget)
        widget.setFocus(Qt.FocusReason.TabFocusReason)
        wait(qtbot, widget.hasFocus)
        assert edge(widget) != before, type(widget).__name__
    settings.show()
    settings.activateWindow()
    wait(qtbot, settings.isActiveWindow)
    for page, widget, elsewhere in (  # rung by a focus frame, on their tab
        (0, settings.provider, settings.base_url),
        (1, settings.workers, settings.git_path),
    ):
        settings.tabs.setCurrentIndex(page)
        elsewhere.setFocus(Qt.FocusReason.TabFocusReason)
        wait(qtbot, elsewhere.hasFocus)
        before = edge(widget)
        widget.setFocus(Qt.FocusReason.TabFocusReason)
        wait(qtbot, widget.hasFocus)
        assert edge(widget) != before, type(widget).__name__


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS menus have no Alt letters")
def test_the_menus_open_with_their_letters(qtbot, window, tmp_path: Path) -> None:
    """Alt and a menu's letter opens it; an item's letter chooses it (Memory ▸ History,
    then Memory ▸ Chat)."""
    ready(qtbot, window, tmp_path)
    for letter, page, focus in (
        (Key.Key_H, window.history, window.history.list),
        (Key.Key_C, window.chat_split, window.chat.input),
    ):
        window.tree.setFocus()
        press(qtbot, Key.Key_M, Mod.AltModifier)
        wait(qtbot, lambda: QApplication.activePopupWidget() is window.menus.memory_menu)
        qtbot.keyClick(window.menus.memory_menu, letter)
        assert window.tabs.currentWidget() is page and focused() is focus


def test_the_menu_key_opens_the_actions_of_the_item_the_keyboard_is_on(
    qtbot, window, tmp_path: Path
) -> None:
    """The menu key asks for a context menu where the focus widget's cursor is (Qt's
    QWidgetWindow: an item view's current item), not where the mouse is."""
    ready(qtbot, window, tmp_path)
    tree = window.tree
    tree.setFocus()
    for _ in range(3):
        press(qtbot, Key.Key_Down)
    asked = []
    window.tree.menu_for = lambda item: asked.append(item) or None  # (no menu shown)
    where = tree.inputMethodQuery(Qt.InputMethodQuery.ImCursorRectangle).center()
    QApplication.sendEvent(
        tree, QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, where, tree.mapToGlobal(where))
    )
    assert asked == [tree.currentItem()]


def test_the_answers_links_are_reached_with_tab_and_followed_with_enter(
    qtbot, window, answered_chat
) -> None:
    """Seen in the walkthrough: the transcript's links (sources, "Show the N steps") were out
    of the keyboard's reach. Tab goes into the conversation (from what is above it), then to
    the latest answer's links; Enter follows one; Enter on "Show the steps" keeps the keyboard
    on it (the next Tab went back to the conversation's first link), and past the last link
    Tab goes on to the question box; Shift+Tab from there comes back to the last link."""
    chat = answered_chat
    opened: list[str] = []
    chat.source_clicked.connect(opened.append)
    active(qtbot, window)
    chat.list_toggle.setFocus()  # (the conversations list's toggle, above the conversation)

    def link() -> str:
        assert focused() is chat.transcript
        return chat.transcript.textCursor().selectedText()

    press(qtbot, Key.Key_Tab)
    assert focused() is chat.transcript  # the conversation itself, read by screen readers
    press(qtbot, Key.Key_Tab)
    assert link() == "new/one.md"  # the latest answer's first source
    press(qtbot, Key.Key_Return)
    assert opened == ["new/one.md"]
    press(qtbot, Key.Key_Tab)
    press(qtbot, Key.Key_Tab)
    assert link() == "Show the 2 steps"
    press(qtbot, Key.Key_Return)
    assert chat.turns[1].show_steps and link() == "Hide the 2 steps"
    assert "Answered from 2 passages" in chat.transcript.toPlainText()
    press(qtbot, Key.Key_Tab)
    assert focused() is chat.input  # past its last link: the question under it
    press(qtbot, Key.Key_Tab, Mod.ShiftModifier)
    assert link() == "Hide the 2 steps"  # and back, to its last link
