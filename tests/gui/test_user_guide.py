"""The user guide (issue 39, item 2): F1 showed the developer's README (virtual environments,
pip, CI). Help ▸ User Guide shows the guide for people, with pictures of the window, and
finds words in it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTextBrowser

from gam_desktop.gui.user_guide import UserGuide, guide_path, image_loads

TOPICS = (
    "First start",
    "Adding documents",
    "Asking questions",
    "Research",
    "History and undo",
    "Facts and conversations",
    "Settings for your LLM",
    "Where your files live",
    "Privacy: what is sent to the LLM",
    "Troubleshooting",
)


def test_f1_shows_the_user_guide_with_its_pictures(window) -> None:
    window.menus.docs.trigger()  # Help ▸ User Guide, F1
    guide = window.menus.documentation
    assert isinstance(guide, UserGuide) and guide.isVisible()
    text = guide.browser.toPlainText()
    assert text.startswith("GAM Desktop user guide")
    assert "venv" not in text and "pip install" not in text  # not the developer's README
    for topic in TOPICS:
        assert topic in text, topic
    for provider in ("OpenAI", "Ollama", "LM Studio", "llama.cpp"):
        assert f"{provider}" in text
    pictures = [p.name for p in guide_path().parent.glob("*.png")]
    assert len(pictures) >= 4
    for picture in pictures:
        assert f"]({picture})" in guide_path().read_text(), picture  # each one shown
        assert image_loads(guide.browser, picture), picture
    assert sum(p.stat().st_size for p in guide_path().parent.glob("*.png")) < 400_000


def test_the_guide_finds_words(qtbot, window) -> None:
    window.menus.docs.trigger()
    guide = window.menus.documentation
    qtbot.keyClicks(guide.find_box, "ollama")
    count = guide.browser.toPlainText().lower().count("ollama")
    assert count > 1 and guide.count.text() == f"{count} matches"
    first = guide.browser.textCursor()
    assert first.selectedText().lower() == "ollama"
    qtbot.keyClick(guide.find_box, Qt.Key.Key_Return)  # the next one
    assert guide.browser.textCursor().selectionStart() > first.selectionStart()
    qtbot.keyClick(guide.find_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert guide.browser.textCursor().selectionStart() == first.selectionStart()
    assert len(guide.browser.extraSelections()) == count  # every match marked
    guide.find_box.clear()
    qtbot.keyClicks(guide.find_box, "quokka")
    assert guide.count.text() == "No match"
    assert window.findChildren(QTextBrowser, "documentation") == [guide.browser]
