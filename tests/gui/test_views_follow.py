"""Every view follows the memory and the selection (issue 13, item 4): the preview after
edits made outside the app and after the memory is emptied or first filled, the preview
and the tree after Settings are saved, the preview when the arrow keys move through the
tree, the tree when a chat source (or anything else) is opened in the preview."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtWidgets import QTreeWidgetItem

from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import render_memory, render_readme
from gam_desktop.gui import settings_dialog
from gam_desktop.gui.preview import EMPTY_TITLE
from gam_desktop.gui.tree_panel import IS_DIR_ROLE, PATH_ROLE
from tests.gui.test_main_window import SAMPLES, built, history, idle, wait


def memories(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if p.name != "README.md" and not p.relative_to(root).parts[0].startswith(".")
    )


def highlighted(window) -> str | None:
    """The path of the item the tree highlights, if any."""
    item = window.tree.currentItem()
    return None if item is None else item.data(0, PATH_ROLE)


def title(window) -> str:
    """The preview's title as read (without the zero-width spaces a long path wraps at)."""
    return window.preview.title.text().replace("\u200b", "")


def click(qtbot, window, item: QTreeWidgetItem) -> None:
    """A click on a tree item, as the person makes it."""
    window.tree.scrollToItem(item)
    rect = window.tree.visualItemRect(item)
    qtbot.mouseClick(
        window.tree.viewport(),
        Qt.MouseButton.LeftButton,
        pos=QPoint(rect.left() + 30, rect.center().y()),
    )


def test_a_file_deleted_then_written_again_outside_is_shown_again(qtbot, window, tmp_path) -> None:
    """Editors and sync tools (Dropbox, OneDrive) replace a file by deleting it and
    writing it anew; when the two land in separate batches the preview used to keep saying
    "… no longer exists" while History had the new text."""
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    shown = memories(memory)[0]
    click(qtbot, window, window.tree.item_at(shown))
    assert window.preview.path == shown
    (memory / shown).unlink()
    wait(qtbot, lambda: title(window) == f"{shown} no longer exists")
    (memory / shown).write_text(render_memory({"title": "written again"}, "The new wording."))
    wait(qtbot, lambda: "The new wording." in window.preview.body.toPlainText())
    assert window.preview.path == shown and window.preview.title.text() == "written again"
    assert highlighted(window) == shown  # and the tree shows it again


def test_an_outside_edit_keeps_the_shown_item_highlighted(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES[:1])
    shown = memories(memory)[0]
    click(qtbot, window, window.tree.item_at(shown))
    assert highlighted(window) == shown
    (memory / shown).write_text(render_memory({"title": "edited elsewhere"}, "Rewritten."))
    wait(qtbot, lambda: window.preview.title.text() == "edited elsewhere")
    assert highlighted(window) == shown  # the tree reloaded (a new title) and kept it
    assert window.tree.currentItem().text(0) == "edited elsewhere"


def test_files_put_in_an_empty_memory_by_hand_end_its_advice(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    assert window.preview.title.text() == EMPTY_TITLE
    (memory / "notes.md").write_text(render_memory({"title": "My notes"}, "Quokkas smile."))
    wait(qtbot, lambda: window.tree.memory_count() == 1)
    wait(qtbot, lambda: window.preview.title.text() != EMPTY_TITLE)
    assert "Drag PDF" not in window.preview.body.toPlainText()


def test_the_first_build_is_highlighted_and_undoing_it_empties_the_preview_again(
    qtbot, window, tmp_path
) -> None:
    memory = tmp_path / "memory"
    assert window.open_memory(memory)
    assert window.preview.title.text() == EMPTY_TITLE
    built(qtbot, window, memory, SAMPLES[:1])
    wait(qtbot, lambda: window.preview.path == "README.md")
    assert highlighted(window) == "README.md"  # the tree shows the overview on show
    window.history.select(history(qtbot, window)[0].sha)
    window.history.rollback.click()
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() == 0)
    wait(qtbot, lambda: window.preview.title.text() == EMPTY_TITLE)  # not "README.md no …"
    assert highlighted(window) is None


def test_saving_settings_keeps_the_preview_and_the_tree(
    qtbot, window, tmp_path, monkeypatch
) -> None:
    class SavedAsIs:
        """The Settings dialog, its OK pressed with nothing changed."""

        keychain_message = ""

        def __init__(self, prefs, api_key, _parent, embedding_key=None) -> None:
            self.prefs, self.api_key, self.embedding_key = prefs, api_key, embedding_key

        def exec(self) -> bool:
            return True

        def result_preferences(self):
            return self.prefs

        def result_key(self):
            return self.api_key

        def result_embedding_key(self):
            return self.embedding_key

    monkeypatch.setattr(settings_dialog, "SettingsDialog", SavedAsIs)
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    shown = memories(memory)[-1]
    click(qtbot, window, window.tree.item_at(shown))
    window.preview.original.setChecked(True)  # reading the original text
    text = window.preview.body.toPlainText()
    folder = shown.rsplit("/", 1)[0]
    assert window.tree.item_at(folder).isExpanded()
    window.open_settings()
    assert window.preview.path == shown
    assert window.preview.body.toPlainText() == text and window.preview.original.isChecked()
    assert highlighted(window) == shown and window.tree.item_at(folder).isExpanded()


def test_the_arrow_keys_move_the_preview_with_the_selection(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    click(qtbot, window, window.tree.topLevelItem(0))
    assert window.preview.path == "README.md"
    window.tree.setFocus()
    seen = []
    # down to the first folder, open it (Right), into it: its overview, its first memory; back
    keys = (Qt.Key.Key_Down, Qt.Key.Key_Right, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up)
    for key in keys:
        qtbot.keyClick(window.tree, key)
        item = window.tree.currentItem()
        path = item.data(0, PATH_ROLE)
        expected = f"{path}/README.md" if item.data(0, IS_DIR_ROLE) else path
        assert window.preview.path == expected  # a folder shows its overview
        seen.append(expected)
    folder_overview = seen[0]
    assert folder_overview.endswith("/README.md") and seen[3] in memories(memory)
    assert seen == [folder_overview, folder_overview, folder_overview, seen[3], folder_overview]


def test_a_chat_source_is_highlighted_in_the_tree(qtbot, window, tmp_path) -> None:
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    files = memories(memory)
    click(qtbot, window, window.tree.item_at(files[0]))
    assert highlighted(window) == files[0]
    source = files[-1]  # in another folder, closed
    window.chat.transcript.anchorClicked.emit(QUrl(f"source:{source}"))
    assert window.preview.path == source
    assert highlighted(window) == source
    assert window.tree.currentItem().parent().isExpanded()
    # something the tree does not list (a conversation): nothing stays highlighted
    conversation = memory / "conversations" / "talk.md"
    conversation.parent.mkdir()
    conversation.write_text(render_memory({"title": "A talk"}, "Hello."))
    window.chat.transcript.anchorClicked.emit(QUrl("source:conversations/talk.md"))
    assert window.preview.title.text() == "A talk"
    assert highlighted(window) is None


def write_by_hand(memory: Path, titles: dict[str, str]) -> None:
    """Memories written by hand, in folders made by hand: no README anywhere."""
    for path, title in titles.items():
        (memory / path).parent.mkdir(parents=True, exist_ok=True)
        (memory / path).write_text(render_memory({"title": title}, f"{title}: written by hand."))


def test_a_folder_without_an_overview_shows_itself_and_the_keys_go_past_it(
    qtbot, window, tmp_path
) -> None:
    """A folder made by hand has no README: moving onto it used to show "alpha/README.md
    no longer exists", clear the tree's selection, and send the next Down back to the top
    (an endless loop for the arrow keys)."""
    memory = tmp_path / "memory"
    write_by_hand(
        memory,
        {"alpha/one.md": "First note", "alpha/deep/two.md": "Deep note", "beta/three.md": "Third"},
    )
    assert window.open_memory(memory)
    wait(qtbot, lambda: window.tree.memory_count() == 3)
    window.tree.setFocus()
    click(qtbot, window, window.tree.item_at("alpha"))
    assert highlighted(window) == "alpha"  # still selected
    assert window.preview.folder_shown == "alpha" and window.preview.title.text() == "alpha"
    text = window.preview.body.toPlainText()
    assert "no longer exists" not in window.preview.title.text()
    assert "It holds 1 folder and 1 note, 2 notes in all:" in text
    assert "deep/ — 1 note" in text and "First note" in text
    assert window.preview.editor.isHidden()  # no file to open in an editor
    qtbot.keyClick(window.tree, Qt.Key.Key_Down)  # past it, to the next folder
    assert highlighted(window) == "beta" and window.preview.title.text() == "beta"
    assert "It holds 1 note:" in window.preview.body.toPlainText()
    qtbot.keyClick(window.tree, Qt.Key.Key_Up)
    assert highlighted(window) == "alpha"
    qtbot.keyClick(window.tree, Qt.Key.Key_Right)  # open it, then into it
    qtbot.keyClick(window.tree, Qt.Key.Key_Down)
    assert highlighted(window) == "alpha/deep" and window.preview.title.text() == "deep"
    qtbot.keyClick(window.tree, Qt.Key.Key_Down)
    assert highlighted(window) == "alpha/one.md"
    assert window.preview.title.text() == "First note"
    # the folder on show follows the memory: a memory added, then an overview written
    click(qtbot, window, window.tree.item_at("beta"))
    write_by_hand(memory, {"beta/four.md": "Fourth"})
    wait(qtbot, lambda: "Fourth" in window.preview.body.toPlainText())
    assert "It holds 2 notes:" in window.preview.body.toPlainText()
    (memory / "beta" / "README.md").write_text(render_readme("Beta", "Notes on beta.", []))
    wait(qtbot, lambda: window.preview.title.text() == "Overview of beta")
    assert window.preview.folder_shown is None and window.preview.path == "beta/README.md"
    assert highlighted(window) == "beta"


def test_the_tree_reads_a_folder_when_it_is_opened(qtbot, window, tmp_path) -> None:
    """A memory of 100,000 files in 2,000 folders took 4 s to open when every folder and
    README was read first: now the top level and the counts are, and a folder when opened."""
    memory = tmp_path / "memory"
    write_by_hand(
        memory,
        {"alpha/one.md": "First note", "alpha/deep/two.md": "Deep note", "beta/three.md": "Third"},
    )
    assert window.open_memory(memory)
    tree = window.tree
    alpha = tree.view.subdirs["alpha"]
    assert alpha.total == 2 and not alpha.files  # counted, not read
    assert tree.topLevelItem(0).text(0) == "alpha  (2)" and tree.memory_count() == 3
    tree.topLevelItem(0).setExpanded(True)
    assert list(tree.view.subdirs["alpha"].files) == ["one.md"]  # read when opened
    assert tree.view.subdirs["alpha"].subdirs["deep"].total == 1
    assert [tree.topLevelItem(0).child(i).text(0) for i in range(2)] == ["deep  (1)", "First note"]
    assert tree.item_at("alpha/deep/two.md").text(0) == "Deep note"  # opened on the way
    tree.set_filter("three")  # the filter looks everywhere, opened or not
    assert tree.matches() == ["beta", "beta/three.md"]


def test_a_shallow_view_reads_that_folder_and_counts_the_rest(tmp_path) -> None:
    """What the tree and the preview show a folder from: its files, and its subfolders
    with their READMEs and counts, what those hold not read."""
    memory = tmp_path / "memory"
    write_by_hand(
        memory,
        {
            "alpha/one.md": "One",
            "alpha/deep/two.md": "Two",
            "alpha/deep/x/3.md": "3",
            "facts/f.md": "F",
        },
    )
    (memory / "alpha" / "deep" / "README.md").write_text(render_readme("Deep", "Below.", []))
    (memory / ".hidden").mkdir()
    folder = MemoryFolder(memory)
    view = folder.shallow_view("alpha")
    assert view is not None and view.path == "alpha" and view.memory_count() == 3
    assert list(view.subdirs) == ["deep"] and list(view.files) == ["one.md"]
    deep = view.subdirs["deep"]
    assert (deep.total, deep.title, deep.description) == (2, "Deep", "Below.")
    assert not deep.subdirs and not deep.files  # not read
    top = folder.shallow_view("")
    assert top is not None and top.memory_count() == 3 and list(top.subdirs) == ["alpha"]
    for absent in ("gone", "alpha/one.md", ".hidden", "facts", "alpha//deep"):
        assert folder.shallow_view(absent) is None, absent


def test_a_link_of_the_shown_note_opens_the_note_it_names(qtbot, window, tmp_path) -> None:
    """A saved research report's source links ("../sqlite/x.md:14") emptied the preview:
    QTextBrowser loaded them as documents of their own. They open the note, in the tree."""
    memory = tmp_path / "memory"
    built(qtbot, window, memory, SAMPLES)
    target = memories(memory)[-1]
    report = memory / "research" / "2026-11-28-report.md"
    report.parent.mkdir()
    report.write_text(
        render_memory({"title": "A report"}, f"Claim ([source](../{target}:3)). [out](../../x.md)")
    )
    window.open_file("research/2026-11-28-report.md")
    assert window.preview.title.text() == "A report"
    window.preview.body.anchorClicked.emit(QUrl("../../x.md"))  # out of the memory: nothing
    assert window.preview.path == "research/2026-11-28-report.md"
    window.preview.body.anchorClicked.emit(QUrl(f"../{target}:3"))
    assert window.preview.path == target and highlighted(window) == target
    assert window.preview.body.toPlainText().strip()  # the note shown, not an empty page
