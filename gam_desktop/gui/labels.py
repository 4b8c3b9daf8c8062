"""Labels whose text never makes the window wider: a long line (a research step quoting the
whole question, a status naming a long path) widened the window past the screen, and it
stayed that wide once the line was gone (a window grows to its layout's minimum width, and
never shrinks back by itself)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """One line that is cut with "…" where it does not fit, the whole of it in its tooltip;
    `text()` is the whole line (screen readers read it all). It asks for no width of its
    own: the layout gives it what is left."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(False)
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
        self.setSizePolicy(policy)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(0, super().sizeHint().height())

    def setText(self, text: str) -> None:
        super().setText(text)
        self._tooltip()

    def clear(self) -> None:
        super().clear()
        self.setToolTip("")

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._tooltip()

    def _tooltip(self) -> None:
        """The whole line as the tooltip while it is cut."""
        full = self.text()
        cut = self.fontMetrics().horizontalAdvance(full) > self.contentsRect().width()
        self.setToolTip(full if cut else "")

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        self.drawFrame(painter)  # the stylesheet's background and border
        area = self.contentsRect().adjusted(self.margin(), 0, -self.margin(), 0)
        shown = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, area.width()
        )
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        self.style().drawItemText(
            painter, area, int(align), self.palette(), self.isEnabled(), shown,
            QPalette.ColorRole.WindowText,
        )  # fmt: skip
        painter.end()


def never_widens(label: QLabel) -> QLabel:
    """A word-wrapped label whose longest word (a path, a URL) cannot widen the window: it
    is cut at the label's edge instead. Its height still follows its width."""
    policy = label.sizePolicy()
    policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
    label.setSizePolicy(policy)
    return label
