"""The first run (issue 13, items 1 and 2): with no memory open, a drop or File ▸ Add
documents offers to create one and then builds those files; creating a memory asks for a
name and a location (as Obsidian does), makes the folder only once confirmed, and refuses
the home folder, system folders and folders inside a memory or a git repository with the
reason shown; making a folder that holds files a memory defaults to No.

Path.home is a folder of each test's own: nothing here touches the real home folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from gam_desktop.gui import dialogs
from gam_desktop.gui.new_memory_dialog import NewMemoryDialog
from tests.gui.test_main_window import SAMPLES, drop, history, idle, wait
from tests.gui.test_theme import os_scheme, shots_folder
from tests.places import git_init, listing

pytestmark = pytest.mark.usefixtures("home")  # tests/conftest.py: a home of the test's own


def offered(qtbot, window) -> NewMemoryDialog:
    """The new-memory dialog the window shows (it does not block: it is window-modal)."""

    def shown() -> NewMemoryDialog | None:
        return next((d for d in window.findChildren(NewMemoryDialog) if d.isVisible()), None)

    wait(qtbot, shown)
    dialog = shown()
    assert dialog is not None
    return dialog


def new_dialog(qtbot, window) -> NewMemoryDialog:
    dialog = NewMemoryDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_a_drop_with_no_memory_open_offers_to_create_one_then_builds_the_files(
    qtbot, window, recorder, home
) -> None:
    assert window.workflow is None  # "Later" on the welcome prompt
    drop(window, SAMPLES[:2])  # taken: the drop hint shows, where it used to refuse silently
    assert "create a memory" in window.drop_hint.text()
    dialog = offered(qtbot, window)
    assert "these 2 documents" in dialog.intro.text()
    assert listing(home) == []  # nothing made before Create
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "Research")  # a new name is typed, not picked
    assert dialog.create_button.isEnabled() and str(home / "Research") in dialog.target.text()
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    assert window.workflow is not None and window.workflow.folder.root == home / "Research"
    assert recorder.asked[-1][0] == "Add these documents?"  # the usual estimate, then build
    assert history(qtbot, window)[0].summary.startswith("Built 2 documents")


def test_add_documents_with_no_memory_open_offers_to_create_one(
    qtbot, window, recorder, home, monkeypatch
) -> None:
    monkeypatch.setattr(dialogs, "choose_documents", lambda parent: SAMPLES[:1])
    add = next(
        a
        for a in window.findChildren(QAction)
        if a.text().replace("&", "").startswith("Add documents")
    )
    add.trigger()  # File ▸ Add documents…, with no memory open
    dialog = offered(qtbot, window)
    assert dialog.name.text() == "GAM Memory" and dialog.location.text() == str(home)
    qtbot.keyClick(dialog.name, Qt.Key.Key_Return)  # Enter: Create
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    assert window.workflow.folder.root == home / "GAM Memory"
    assert history(qtbot, window)[0].summary.startswith("Built 1 document")


def test_files_dropped_with_no_memory_open_may_go_to_an_existing_memory(
    qtbot, window, home, make_workflow, monkeypatch
) -> None:
    existing = make_workflow(gam_dir=home / "Work")
    existing.initialize()
    monkeypatch.setattr(dialogs, "choose_memory_folder", lambda parent, start="": home / "Work")
    drop(window, SAMPLES[:1])
    dialog = offered(qtbot, window)
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    assert window.workflow.folder.root == home / "Work"
    assert [op.kind for op in history(qtbot, window)][:1] == ["build"]


def test_dropping_only_unreadable_files_offers_no_memory(qtbot, window, recorder, tmp_path):
    sheet = tmp_path / "sheet.xlsx"
    sheet.write_bytes(b"PK")
    drop(window, [sheet])
    assert recorder.told[-1][0] == "Some files were not added"
    assert not [d for d in window.findChildren(NewMemoryDialog) if d.isVisible()]


@pytest.mark.parametrize(
    "case,words",
    [
        ("home", "your home folder"),
        ("system", "system folder"),
        ("memory", "inside the memory"),
        ("git", "inside the git repository"),
    ],
)
def test_the_dialog_refuses_a_place_with_its_reason(
    qtbot, window, home, make_workflow, case, words
) -> None:
    if case == "system" and os.name == "nt":
        pytest.skip("POSIX system folders")
    if case == "home":
        location, name = home.parent, home.name
    elif case == "system":
        location, name = Path("/usr"), "Memory"
    elif case == "memory":
        make_workflow(gam_dir=home / "Work").initialize()
        location, name = home / "Work", "Sub"
    else:
        location, name = git_init(home / "project"), "Memory"
    before = listing(home)
    dialog = new_dialog(qtbot, window)
    assert dialog.create_button.isEnabled()  # the suggestion is fine
    dialog.location.setText(str(location))
    dialog.name.setText(name)
    assert not dialog.create_button.isEnabled()
    assert dialog.reason.isVisible() and words in dialog.reason.text()
    qtbot.keyClick(dialog.name, Qt.Key.Key_Return)  # Enter does not get past the refusal
    dialog.accept()
    assert dialog.isVisible() and dialog.folder is None
    assert listing(home) == before
    dialog.location.setText(str(home))  # somewhere fine: the reason goes, Create is back
    assert dialog.create_button.isEnabled() and not dialog.reason.isVisible()


def test_nothing_is_made_on_disk_before_create(qtbot, window, home, monkeypatch) -> None:
    monkeypatch.setattr(dialogs, "ask_where_memory_lives", lambda parent: dialogs.Welcome.CREATE)
    window.welcome()
    dialog = offered(qtbot, window)
    assert dialog.chosen_path() == home / "GAM Memory"
    assert listing(home) == []  # ~/GAM Memory used to be made before anything was confirmed
    dialog.reject()
    assert listing(home) == [] and window.workflow is None
    window.welcome()
    dialog = offered(qtbot, window)
    qtbot.mouseClick(dialog.create_button, Qt.MouseButton.LeftButton)
    assert (home / "GAM Memory").is_dir()
    assert window.workflow is not None and window.workflow.folder.root == home / "GAM Memory"


def test_the_home_folder_is_not_opened_as_a_memory(qtbot, window, recorder, home, monkeypatch):
    (home / "Documents").mkdir()
    monkeypatch.setattr(dialogs, "choose_memory_folder", lambda parent, start="": home)
    window.choose_folder()  # File ▸ Open memory…, picking the home folder
    title, text = recorder.told[-1]
    assert title == "This folder cannot be a memory" and "home folder" in text
    assert window.workflow is None and listing(home) == ["Documents"]
    assert not recorder.asked  # refused, not offered with a question


def test_no_is_the_default_when_existing_files_would_be_committed(
    qtbot, window, home, monkeypatch
) -> None:
    folder = home / "taxes"
    folder.mkdir()
    (folder / "2024.xlsx").write_bytes(b"PK")
    window.confirm = dialogs.MessageBoxes(window).confirm  # the real message box
    shown: list[QMessageBox] = []

    def press_enter(box: QMessageBox) -> int:
        shown.append(box)
        box.defaultButton().click()  # what Enter (or a hurried click) answers
        return 0

    monkeypatch.setattr(QMessageBox, "exec", press_enter)
    monkeypatch.setattr(  # the static question chose no default (Qt took Yes): never block
        QMessageBox, "question", lambda *args, **kwargs: pytest.fail("no default chosen")
    )
    assert not window.open_memory(folder)
    box = shown[-1]
    assert box.windowTitle() == dialogs.MAKE_MEMORY_TITLE and "2024.xlsx" in box.text()
    assert box.defaultButton().text() == "Leave it as it is"  # not a bare No
    assert listing(folder) == ["2024.xlsx"]  # no .git, no meta file: left as it was
    add = ("Add 2 documents", "Cancel")
    assert window.confirm("Add these documents?", "", buttons=add)  # going ahead, elsewhere
    other = shown[-1]
    assert other.defaultButton().text() == "Add 2 documents"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_creating_a_memory(qtbot, window, home, tmp_path, scheme) -> None:
    folder = shots_folder(tmp_path)
    with os_scheme(scheme == "dark"):
        window.preview.show_message(dialogs.WELCOME_TITLE, dialogs.WELCOME_TEXT)
        shots = [folder / f"first-run-{scheme}.png"]
        assert window.grab().save(str(shots[-1]))
        dialog = new_dialog(qtbot, window)
        shots.append(folder / f"create-memory-{scheme}.png")
        assert dialog.grab().save(str(shots[-1]))
        dialog.location.setText(str(git_init(home / "project")))
        dialog.layout().activate()
        shots.append(folder / f"create-memory-refused-{scheme}.png")
        assert dialog.grab().save(str(shots[-1]))
        assert all(p.stat().st_size > 10_000 for p in shots)  # real pictures, not blank
