"""Correct at 150% and 200% (issue 13, "Also"): on a 1920x1080 screen scaled so, the window
fits the screen (at 200% that is 960x540) and no button, box, tab, label or progress bar of
the window or its dialogs is narrower or lower than its text. Each scale runs in a process
of its own (tests/gui/scaled.py): Qt reads the scale once, when the application is made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.gui.offscreen import run_module

SCREEN = {  # the offscreen platform's screen: a common laptop's
    "screens": [
        {
            "name": "laptop",
            "x": 0,
            "y": 0,
            "width": 1920,
            "height": 1080,
            "logicalDpi": 96,
            "logicalBaseDpi": 96,
            "dpr": 1,
        }
    ]
}


def run_scaled(tmp_path: Path, scale: str, shots: Path | None = None) -> list[str]:
    """What does not fit at `scale` (screenshots in `shots`, if given)."""
    (tmp_path / "screen.json").write_text(json.dumps(SCREEN))
    out = tmp_path / "clipped.json"
    done = run_module(
        "tests.gui.scaled",
        [str(out), *([str(shots)] if shots else [])],
        tmp_path / "home",
        cwd=tmp_path,
        # (a relative path: a Windows drive's colon would end the platform's argument)
        QT_QPA_PLATFORM="offscreen:configfile=screen.json",
        QT_SCALE_FACTOR=scale,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())["clipped"]


@pytest.mark.parametrize("scale", ["1.5", "2"])
def test_nothing_is_cut_at_150_and_200_percent(tmp_path: Path, scale: str) -> None:
    shots = os.environ.get("GAM_SCREENSHOTS")
    folder = Path(shots) / f"scale-{scale}" if shots else None
    assert run_scaled(tmp_path, scale, folder) == []


@pytest.fixture
def large_text(qtbot):
    """The desktop's text at 18 points (a person who chose large text): the app's font,
    and the stylesheet made for it; both as they were afterwards."""
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication

    from gam_desktop.gui import theme

    app = QApplication.instance()
    before = QFont(app.font())
    large = QFont(before)
    large.setPointSizeF(18)
    app.setFont(large)
    theme.apply(app)
    yield app
    app.setFont(before)
    theme.apply(app)


def test_large_text_is_not_cut_and_the_reading_size_follows_it(qtbot, large_text) -> None:
    """The question box is three lines of its own font high, whatever that font; the
    stylesheet's sizes are the desktop's text size times a factor, not pixels."""
    from gam_desktop.gui import theme
    from gam_desktop.gui.chat_panel import ChatPanel, QuestionBox

    assert f"font-size: {18 * theme.FONT_SCALES['reading']:.1f}pt" in large_text.styleSheet()
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 600)
    panel.show()
    qtbot.waitExposed(panel)
    box = panel.input
    lines = box.viewport().height() / box.fontMetrics().lineSpacing()
    assert lines >= QuestionBox.LINES
    assert box.font().pointSizeF() > 18  # the reading size: larger than the desktop's
