"""The window and its dialogs at a display scale, in a process of its own (Qt reads
QT_SCALE_FACTOR and QT_FONT_DPI once, when the application is made):

    QT_QPA_PLATFORM=offscreen QT_SCALE_FACTOR=2 python -m tests.gui.scaled OUT.json [SHOTS [dark]]

A memory is built from the sample documents with the scripted server, the window opens it
at the size it chooses for the screen and answers a question; then every panel and dialog
is shown in turn and what does not fit is written to OUT.json (`clipped`: a list of
sentences), with screenshots in SHOTS if given (in the dark scheme with `dark`). The caller
sets HOME (nothing here touches the person's own) and the screen (the offscreen platform's
configfile).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QTabBar,
    QWidget,
)

from gam_desktop.gui.app import make_app
from gam_desktop.gui.new_memory_dialog import NewMemoryDialog
from gam_desktop.gui.settings_dialog import SettingsDialog
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.gui.offscreen import build_memory, samples, themed_window, wait_until


def shown(root: QWidget) -> Iterator[QWidget]:
    """`root` and every widget in it that is on screen."""
    for widget in [root, *root.findChildren(QWidget)]:
        if widget.isVisibleTo(root) and widget.width() > 0:
            yield widget


def label_of(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    said = text() if callable(text) else ""
    return f"{type(widget).__name__} {said or widget.accessibleName()!r}"


def too_small(widget: QWidget) -> str | None:
    """Why `widget` cuts its text, or None: a button or a box narrower or lower than its
    text needs, a tab cut, a label cut off, a progress bar lower than its text, a text box
    with less than two lines."""
    if isinstance(widget, QAbstractButton | QComboBox | QAbstractSpinBox | QLineEdit):
        hint = widget.minimumSizeHint() if isinstance(widget, QLineEdit) else widget.sizeHint()
        if widget.width() < hint.width() or widget.height() < hint.height():
            size = f"{widget.width()}x{widget.height()}"
            return f"is {size}, its text needs {hint.width()}x{hint.height()}"
    elif isinstance(widget, QTabBar):
        cut = [
            widget.tabText(tab)
            for tab in range(widget.count())
            if widget.tabRect(tab).width() < widget.tabSizeHint(tab).width()
            or widget.tabRect(tab).height() < widget.tabSizeHint(tab).height()
        ]
        return f"cuts the tabs {cut}" if cut else None
    elif isinstance(widget, QLabel) and widget.text() and not widget.wordWrap():
        return "is cut" if widget.width() < widget.minimumSizeHint().width() else None
    elif isinstance(widget, QProgressBar):
        low = widget.height() < widget.minimumSizeHint().height()
        return "is lower than its text" if low else None
    elif isinstance(widget, QPlainTextEdit) and not widget.isReadOnly():
        lines = widget.viewport().height() // widget.fontMetrics().lineSpacing()
        return f"shows {lines} line(s) of text" if lines < 2 else None
    return None


def clipped(root: QWidget, where: str) -> list[str]:
    """What does not fit in `root` as it is shown, a sentence each."""
    problems = []
    for widget in shown(root):
        if isinstance(widget.parentWidget(), QAbstractSpinBox | QComboBox):
            continue  # their line edit: laid out by them, checked with them
        why = too_small(widget)
        if why is not None:
            problems.append(f"{where}: {label_of(widget)} {why}")
    return problems


def run(out: Path, shots: Path | None, dark: bool = False) -> None:
    app = make_app([])
    problems: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="gam-scaled-"))

    def look(widget: QWidget, name: str) -> None:
        QApplication.processEvents()
        screen = widget.screen().availableGeometry()
        if widget.width() > screen.width() or widget.height() > screen.height():
            problems.append(
                f"{name} ({widget.width()}x{widget.height()}) is larger than the screen "
                f"({screen.width()}x{screen.height()})"
            )
        problems.extend(clipped(widget, name))
        if shots is not None:
            widget.grab().save(str(shots / f"{name}.png"))

    with RunningServer() as server:
        build_memory(server, scratch / "memory", samples())
        window = themed_window(server, scratch / "settings.ini", dark)  # its size, its own
        prefs = window.prefs
        window.show()
        assert window.open_memory(scratch / "memory")
        window.tree.expandAll()
        window.chat.input.setPlainText("What is BERT?")
        window.chat.send.click()
        wait_until(lambda: window.chat.turns[-1].result is not None and not window.tasks.running())
        window.operations.progressed.emit(2 / 5)  # the status bar's progress, as in a build
        window.progress.show()
        look(window, "main-chat")
        window.progress.hide()
        window.tabs.setCurrentWidget(window.history)
        wait_until(lambda: window.history.operations and window.history.diff.toPlainText())
        look(window, "main-history")
        window.tabs.setCurrentWidget(window.facts)
        look(window, "main-facts")
        settings = SettingsDialog(prefs, None, window)
        settings.show()
        look(settings, "settings")
        settings.close()
        create = NewMemoryDialog(window, documents=3, location=scratch)
        create.show()
        look(create, "new-memory")
        create.close()
        window.close()
    out.write_text(json.dumps({"clipped": problems}, indent=1))
    app.shutdown()


if __name__ == "__main__":
    shots_folder = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if shots_folder is not None:
        shots_folder.mkdir(parents=True, exist_ok=True)
    run(Path(sys.argv[1]), shots_folder, dark=sys.argv[3:4] == ["dark"])
