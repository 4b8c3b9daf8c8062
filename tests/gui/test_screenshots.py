"""Screenshots of the main states, for a person to look at (GAM_SCREENSHOTS=folder keeps
them; otherwise they go to the test's temporary folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from gam_desktop.gui.settings_dialog import SettingsDialog
from tests.gui.test_main_window import SAMPLES, drop, history, idle, wait


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_the_main_states(
    qtbot, window, prefs, llm_server, recorder, tmp_path, scheme: str
) -> None:
    """First run, creating a memory, the estimate, a build under way, an answered question,
    History with a diff and Settings, in the light and the dark scheme (a theme the app
    chose must read well in both)."""
    from PySide6.QtWidgets import QApplication

    from gam_desktop.gui import theme
    from gam_desktop.gui.dialogs import question_box, verb_buttons
    from gam_desktop.gui.new_memory_dialog import NewMemoryDialog

    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    shots = []

    def shoot(name: str, widget) -> None:
        path = folder / f"{name}-{scheme}.png"
        assert widget.grab().save(str(path))
        shots.append(path)

    app = QApplication.instance()
    theme.choose(app, scheme)
    try:
        window.preview.show_message("Welcome to GAM Desktop", "Open a memory to start.")
        shoot("1-empty", window)
        create = NewMemoryDialog(window, documents=3, location=tmp_path)
        qtbot.addWidget(create)
        create.show()
        shoot("1b-create-memory", create)
        llm_server.state.latency_s = 0.15
        assert window.open_memory(tmp_path / "memory")
        drop(window, SAMPLES)
        # the build, not the estimate before it (its reading has a progress bar too)
        wait(qtbot, lambda: recorder.asked and window.progress.value() >= 2)
        shoot("2-building", window)
        asked = [q[0] for q in recorder.asked].index("Add these documents?")
        title, text = recorder.asked[asked]
        verbs = recorder.buttons[asked]
        assert verbs is not None
        estimate, _buttons = question_box(window, title, text, verb_buttons(verbs), default=True)
        qtbot.addWidget(estimate)
        estimate.show()
        shoot("1c-estimate", estimate)
        wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
        llm_server.state.latency_s = 0
        window.tree.expandAll()
        window.chat.input.setPlainText("What is BERT?")
        window.chat.send.click()
        wait(qtbot, lambda: window.chat.turns[-1].result is not None)
        window.chat.transcript.anchorClicked.emit(QUrl(f"steps:{len(window.chat.turns) - 1}"))
        window.chat.transcript.anchorClicked.emit(
            QUrl(f"source:{window.chat.turns[-1].result.sources[0]}")
        )
        shoot("3-answered", window)
        history(qtbot, window)  # brought to the front; its list, files and diff load on workers
        window.history.files.setCurrentItem(window.history.files.topLevelItem(0))
        wait(qtbot, lambda: window.history.diff.toPlainText())
        shoot("4-history", window)
        dialog = SettingsDialog(prefs, None, window)
        qtbot.addWidget(dialog)
        dialog.show()
        shoot("5-settings", dialog)
    finally:
        theme.choose(app, theme.SYSTEM)
    assert all(p.stat().st_size > 5_000 for p in shots)  # real pictures, not blank


def test_screenshots_of_conversations_and_facts(
    qtbot, make_window, make_workflow, prefs, tmp_path
) -> None:
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    engine = make_workflow()
    engine.add(text="# Launch plan\n\nThe product launch is planned with the marketing team.\n")
    window = make_window(prefs)
    assert window.open_memory(engine.folder.root)
    wait(qtbot, lambda: idle(window))
    shots = [folder / "6-no-conversations.png"]
    assert window.grab().save(str(shots[-1]))
    window.tabs.setCurrentWidget(window.facts)
    shots.append(folder / "6b-no-facts.png")
    assert window.grab().save(str(shots[-1]))
    window.tabs.setCurrentWidget(window.chat_split)
    for question in (
        "Who plans the product launch with the marketing team, and when does it start?",
        "What is the launch planned with?",
    ):
        engine.chat(question)
    window.conversations.refresh()  # (this process's own writes are no outside edit)
    wait(qtbot, lambda: len(window.conversations.conversations) == 2)
    for question in ("I live in Porto. What is the launch planned with?", "My sister is Anne."):
        window.chat.input.setPlainText(question)
        window.chat.send.click()
        wait(qtbot, lambda: window.chat.turns[-1].result is not None and idle(window))
    wait(qtbot, lambda: "Anne" in window.chat.transcript.toPlainText())
    shots.append(folder / "7-conversations.png")
    assert window.grab().save(str(shots[-1]))
    window.tabs.setCurrentWidget(window.facts)
    wait(qtbot, lambda: len(window.facts.rows) == 2)
    window.facts.list.setCurrentItem(window.facts.list.topLevelItem(0))
    window.facts.show_button.click()
    shots.append(folder / "8-facts.png")
    assert window.grab().save(str(shots[-1]))
    assert all(p.stat().st_size > 10_000 for p in shots)


def test_screenshot_in_dark_mode(qtbot, window, llm_server, tmp_path) -> None:
    """The answered state under the dark palette an OS in dark mode gives."""

    from tests.gui.test_theme import os_scheme, shots_folder

    folder = shots_folder(tmp_path)
    with os_scheme(dark=True):
        assert window.open_memory(tmp_path / "memory")
        drop(window, SAMPLES)
        wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
        window.tree.expandAll()
        window.chat.input.setPlainText("What is BERT?")
        window.chat.send.click()
        wait(qtbot, lambda: window.chat.turns[-1].result is not None)
        path = folder / "9-dark.png"
        assert window.grab().save(str(path)) and path.stat().st_size > 10_000


def test_screenshots_of_settings_in_both_schemes(qtbot, window, prefs, llm_server, tmp_path):
    """Settings' Basic tab (the server's models listed, then a refused key said in words)
    and its Advanced tab, in the light and the dark scheme."""
    from PySide6.QtWidgets import QApplication

    from gam_desktop.gui import theme
    from gam_desktop.selfcheck.scripted_llm import Fault

    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance()
    llm_server.state.models = ["scripted", "qwen2.5:7b-instruct", "llama3.2:3b"]
    shots = []
    try:
        for scheme in (theme.LIGHT_CHOICE, theme.DARK_CHOICE):
            theme.choose(app, scheme)
            dialog = SettingsDialog(prefs, "sk-test-key", window)
            qtbot.addWidget(dialog)
            dialog.show()
            wait(qtbot, lambda d=dialog: d.builder_model.count() == 3)
            shots.append(folder / f"10-settings-basic-{scheme}.png")
            assert dialog.grab().save(str(shots[-1]))
            llm_server.state.faults.append(Fault("401", task="models"))
            dialog.refresh_models()
            wait(qtbot, lambda d=dialog: "refused" in d.models_status.text())
            app.processEvents()  # the longer words' layout, before the picture
            shots.append(folder / f"10-settings-basic-refused-{scheme}.png")
            assert dialog.grab().save(str(shots[-1]))
            dialog.tabs.setCurrentIndex(1)
            shots.append(folder / f"11-settings-advanced-{scheme}.png")
            assert dialog.grab().save(str(shots[-1]))
            dialog.close()
    finally:
        theme.choose(app, theme.SYSTEM)
    assert all(p.stat().st_size > 10_000 for p in shots)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_at_800_by_600(
    qtbot, window, make_workflow, recorder, tmp_path, scheme: str
) -> None:
    """The window at 800 × 600 (issue 39), in both schemes: a note in the preview, a research
    report in the chat, the facts, the History with a note's change."""
    from PySide6.QtWidgets import QApplication

    from gam_desktop.gui import theme
    from tests.engine.test_answers import built_policies
    from tests.gui.test_research import COMPARE, research

    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    theme.choose(QApplication.instance(), scheme)
    try:
        root = built_policies(make_workflow, tmp_path).folder.root
        assert window.open_memory(root)
        wait(qtbot, lambda: idle(window))
        window.resize(800, 600)
        wait(qtbot, lambda: window.width() == 800 and window.height() == 600)
        window.tree.item_at("acme").setExpanded(True)
        window.open_file("acme/acme_corp_escalation.md")
        research(window, COMPARE)
        wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
        wait(qtbot, lambda: idle(window))
        assert window.grab().save(str(folder / f"800x600-chat-{scheme}.png"))
        window.tabs.setCurrentWidget(window.facts)
        assert window.grab().save(str(folder / f"800x600-facts-{scheme}.png"))
        history(qtbot, window)
        window.history.list.setCurrentItem(window.history.list.topLevelItem(1))
        wait(qtbot, lambda: window.history.diff.toPlainText() and idle(window))
        assert window.grab().save(str(folder / f"800x600-history-{scheme}.png"))
        assert window.width() == 800 and not recorder.errors
    finally:
        theme.choose(QApplication.instance(), theme.SYSTEM)
