"""Dark mode (issues 13 and 17): under the dark palette an OS gives (Windows 11, macOS),
every widget the stylesheet paints keeps its text readable: no light text on the white
backgrounds the sheet used to force."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.gui import theme
from gam_desktop.gui.application import apply_theme, make_app


def os_palette(dark: bool) -> QPalette:
    """The palette an OS in dark (or light) mode hands Qt: light text on dark, or the reverse."""
    palette = QPalette()
    back, fore = (QColor("#202124"), QColor("#f1f3f4")) if dark else (QColor("#f0f0f0"), "#000000")
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base, QPalette.ColorRole.Button):
        palette.setColor(role, back)
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(role, QColor(fore))
    return palette


@contextlib.contextmanager
def os_scheme(dark: bool) -> Iterator[None]:
    """The app as an OS in dark (or light) mode shows it, the palette before restored after."""
    app = QApplication.instance()
    before = app.palette()
    app.setPalette(os_palette(dark))
    apply_theme(app)
    try:
        yield
    finally:
        app.setPalette(before)
        apply_theme(app)


def shots_folder(tmp_path: Path) -> Path:
    """Where screenshots go: $GAM_SCREENSHOTS, else the test's own folder."""
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(widget: QWidget) -> float:
    """The contrast ratio (WCAG) between a widget's background (its commonest colour) and
    the pixel furthest from it: its text."""
    image = widget.grab().toImage()
    colours = Counter(
        image.pixel(x, y) for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)
    )
    background = QColor.fromRgb(colours.most_common(1)[0][0])
    lb = luminance(background)
    ink = max((luminance(QColor.fromRgb(c)) for c in colours), key=lambda lum: abs(lum - lb))
    light, dark = max(lb, ink), min(lb, ink)
    return (light + 0.05) / (dark + 0.05)


@pytest.fixture
def styled(qtbot):
    app = make_app([])
    assert isinstance(app, QApplication)
    before = app.palette()

    def under(dark: bool) -> QWidget:
        app.setPalette(os_palette(dark))
        apply_theme(app)
        page = QWidget()
        layout = QVBoxLayout(page)
        browser = QTextBrowser()
        browser.setPlainText("The answer: escalation after 45 minutes.")
        tree = QTreeWidget()
        tree.setHeaderHidden(True)
        QTreeWidgetItem(tree, ["policies (4)"])
        for widget in (
            QLabel("A label"),
            QLineEdit("Typed text"),
            QPushButton("Ask"),
            browser,
            tree,
        ):
            widget.setMinimumHeight(40)
            layout.addWidget(widget)
        qtbot.addWidget(page)
        page.resize(400, 360)
        page.show()
        return page

    yield under
    app.setPalette(before)
    apply_theme(app)


@pytest.mark.parametrize("dark", [True, False], ids=["dark", "light"])
def test_every_painted_widget_keeps_readable_text(styled, dark: bool) -> None:
    page = styled(dark)
    assert theme.is_dark(QApplication.instance()) is dark  # offscreen: the palette decides
    for widget in page.findChildren(QWidget):
        if isinstance(widget, QLabel | QLineEdit | QPushButton | QTextBrowser | QTreeWidget):
            assert contrast(widget) >= 4.5, (type(widget).__name__, contrast(widget))


def test_the_dark_sheet_is_chosen_for_a_dark_palette(styled) -> None:
    styled(True)
    sheet = QApplication.instance().styleSheet()
    assert theme.DARK["window"] in sheet and theme.LIGHT["window"] not in sheet
    styled(False)
    assert theme.LIGHT["window"] in QApplication.instance().styleSheet()


def indicator(box: QWidget) -> list[QColor]:
    """The colours of a check box's box, as drawn."""
    from PySide6.QtWidgets import QStyle, QStyleOptionButton

    option = QStyleOptionButton()
    box.initStyleOption(option)
    area = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    image = box.grab(area).toImage()
    return [image.pixelColor(x, y) for x in range(image.width()) for y in range(image.height())]


@pytest.mark.parametrize("dark", [True, False], ids=["dark", "light"])
def test_a_check_box_can_be_seen_ticked_or_not(qtbot, styled, dark: bool) -> None:
    """Seen in the walkthrough: the chat's Research box was dark grey on the dark theme's
    dark grey. Its edge stands out of the window 3:1 (WCAG's rule for controls), and a
    ticked box shows its tick."""
    from PySide6.QtWidgets import QCheckBox

    page = styled(dark)
    box = QCheckBox("Research", page)
    box.show()
    qtbot.waitExposed(box)
    window = luminance(QColor(theme.colours(QApplication.instance())["window"]))

    def strongest(colours: list[QColor]) -> float:
        edge = max((luminance(c) for c in colours), key=lambda lum: abs(lum - window))
        return (max(edge, window) + 0.05) / (min(edge, window) + 0.05)

    assert strongest(indicator(box)) >= 3.0
    box.setChecked(True)
    ticked = indicator(box)
    assert strongest(ticked) >= 3.0
    assert any(luminance(c) > 0.8 for c in ticked)  # the white tick on the accent
