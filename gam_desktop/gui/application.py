"""The QApplication this process runs: its names (what QSettings and QStandardPaths build
their paths from), its icon and theme, and where its logs go.

Apart from app.py (the start: logging, settings, the window) so that the window's parts and
the self-test can use them without importing app.py, which imports them: the menus open
the log folder, the self-test makes the app as a start does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

from PySide6.QtCore import QCoreApplication, QStandardPaths
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from gam_desktop import __version__
from gam_desktop.engine.api import resources_dir
from gam_desktop.gui import theme
from gam_desktop.gui.accessible import ring_focus


def set_identity() -> None:
    """The names QSettings and QStandardPaths build their paths from: set before either is
    asked (the log folder used to be found before, and landed in a shared `logs`)."""
    QCoreApplication.setApplicationName("GAM Desktop")
    QCoreApplication.setOrganizationName("GAM Desktop")
    QCoreApplication.setApplicationVersion(__version__)


def log_folder() -> Path:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation)
    return Path(base or Path.home() / ".gam-desktop") / "logs"


def make_app(argv: list[str]) -> QApplication:
    # Hand the GIL over more often than the default 5 ms: worker threads parsing, chunking
    # and importing then starve the GUI thread less (shorter stalls while building).
    sys.setswitchinterval(0.001)
    set_identity()
    # Only QApplications are made in this process (the tests' qapp is one too).
    app = cast(QApplication | None, QApplication.instance()) or QApplication(argv)
    icon = resources_dir() / "icons" / "gam-desktop-256.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    apply_theme(app)
    ring_focus(app)  # combo and spin boxes show they have the keyboard too
    if not app.property("gamThemeFollowed"):  # the OS switching light/dark (Qt 6.5+)
        app.styleHints().colorSchemeChanged.connect(lambda _scheme: apply_theme(app))
        app.setProperty("gamThemeFollowed", True)
    return app


def apply_theme(app: QApplication) -> None:
    """The stylesheet in the colours of the scheme followed: the one chosen in View ▸ Theme,
    else the OS's (light or dark)."""
    theme.apply(app)
