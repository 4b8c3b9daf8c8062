"""What a screen reader and a keyboard user need that Qt does not give by itself.

A widget's accessible name is usually its text or its label (a QLabel whose buddy it is);
widgets without either are named where they are made, and `name_clear_button` names the
one Qt makes inside a line edit. The stylesheet rings whatever has the keyboard (its
:focus rules), except combo and spin boxes: a border of ours would break their arrows, so
`FocusRing` draws a QFocusFrame (styled by the sheet) around them instead."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFocusFrame,
    QLineEdit,
    QToolButton,
    QWidget,
)

RINGED = (QComboBox, QAbstractSpinBox)  # the widgets the focus frame rings


def name_clear_button(edit: QLineEdit, name: str) -> None:
    """Give `edit` a clear button (`setClearButtonEnabled`) named `name`: it shows an icon
    only, and a screen reader would announce a nameless button."""
    edit.setClearButtonEnabled(True)
    for button in edit.findChildren(QToolButton):
        button.setAccessibleName(name)


class FocusRing(QObject):
    """One focus frame, moved to the combo or spin box that has the keyboard and hidden
    otherwise. The frame lives in the window of the widget it rings (Qt reparents it), so
    it goes with that window: it is made again when needed."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.frame: QFocusFrame | None = None
        app.focusChanged.connect(self._follow)

    def _follow(self, _old: QWidget | None, new: QWidget | None) -> None:
        if isinstance(new, RINGED):
            if self.frame is None:
                self.frame = QFocusFrame(new)
                self.frame.destroyed.connect(self._gone)
            self.frame.setWidget(new)
        elif self.frame is not None:
            self.frame.setWidget(None)  # type: ignore[arg-type]  # (Qt: none, hidden)

    def _gone(self) -> None:
        self.frame = None


def ring_focus(app: QApplication) -> None:
    """Ring the combo and spin boxes that have the keyboard, in every window (once)."""
    if app.findChild(FocusRing) is None:
        FocusRing(app)
