"""Light and dark: the stylesheet's colours for the scheme the OS asks for.

The stylesheet (resources/style.qss) names its colours (`$base`, `$text`, …); this module
fills them in for a light or a dark scheme, and its font sizes (`$font_reading`, …) as
multiples of the application's font, so they follow the desktop's text size. Dark comes
from the OS (Qt's colour scheme: Windows 11, macOS, GNOME) or, when Qt cannot tell, from the
palette's window colour. Every rule that sets a background sets the text colour too, so
dark-mode text (light) never lands on a light background, as it did when the sheet forced
white.

The person may also choose (View ▸ Theme): Light, Dark, or System (the OS decides). A
chosen scheme is asked of Qt (`QStyleHints.setColorScheme`, which switches the native
palette where the platform can) and, where it cannot, the palette is made from the same
colours, so widgets the stylesheet does not paint follow the choice too.
"""

from __future__ import annotations

from string import Template

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.api import resources_dir

SYSTEM, LIGHT_CHOICE, DARK_CHOICE = "system", "light", "dark"
CHOICES = {SYSTEM: "&System", LIGHT_CHOICE: "&Light", DARK_CHOICE: "&Dark"}  # menu labels
SETTING = "view/theme"  # the QSettings key the choice is kept under
_CHOICE_PROPERTY = "gamThemeChoice"  # on the application: one choice for all its windows

LIGHT = {
    "window": "#f6f7f9",
    "base": "#ffffff",
    "text": "#1d2330",
    "muted": "#6b7280",
    "border": "#d9dce1",
    "item_border": "#eef0f3",
    "button_border": "#c5cad3",
    "accent": "#2f6fde",
    "accent_text": "#ffffff",
    "link": "#1a56c4",
    "hover": "#eef3fd",
    "selected": "#dce7fb",
    "selected_text": "#0f2a5c",
    "tab": "#e4e7ec",
    "tab_text": "#333333",
    "frame": "#eef1f6",
    "warning_text": "#8a4b00",
    "warning_bg": "#fff4e0",
    # opaque: the words over the panes below them could not be read
    "drop_bg": "#eef3fd",
    "drop_text": "#1d4fa8",
    "status": "#eceff3",
    "disabled": "#999999",
    # diffs in the History panel: added and removed lines, hunk headers
    "diff_add": "#1b7f3a",
    "diff_add_bg": "#e9f6ec",
    "diff_del": "#b3261e",
    "diff_del_bg": "#fdecea",
    "diff_hunk": "#6b4fbb",
    # the chat's "Learned from what you said" box
    "note_text": "#374151",
    "note_bg": "#eef4ee",
}
DARK = {
    "window": "#1e2024",
    "base": "#2a2d33",
    "text": "#e8eaed",
    "muted": "#9aa0a6",
    "border": "#3c4048",
    "item_border": "#33363c",
    "button_border": "#4a4e57",
    "accent": "#4c8dff",
    "accent_text": "#ffffff",
    "link": "#8ab4ff",
    "hover": "#353b47",
    "selected": "#2c3e5c",
    "selected_text": "#e8eaed",
    "tab": "#33363c",
    "tab_text": "#c9ccd1",
    "frame": "#2f3238",
    "warning_text": "#ffb74d",
    "warning_bg": "#3a2e1a",
    "drop_bg": "#263042",
    "drop_text": "#8ab4ff",
    "status": "#25272b",
    "disabled": "#6b6f76",
    "diff_add": "#81c995",
    "diff_add_bg": "#1f3326",
    "diff_del": "#f28b82",
    "diff_del_bg": "#3b2323",
    "diff_hunk": "#b39ddb",
    "note_text": "#d7e4d9",
    "note_bg": "#243328",
}


def chosen(app: QGuiApplication) -> str:
    """The scheme the person chose: "system" (the default), "light" or "dark"."""
    choice = app.property(_CHOICE_PROPERTY)
    return choice if choice in CHOICES else SYSTEM


def is_dark(app: QGuiApplication) -> bool:
    choice = chosen(app)
    if choice != SYSTEM:
        return choice == DARK_CHOICE
    scheme = app.styleHints().colorScheme()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return app.palette().window().color().lightness() < 128


def colours(app: QGuiApplication) -> dict[str, str]:
    return DARK if is_dark(app) else LIGHT


# The stylesheet's font sizes, as multiples of the application's font: they follow the size
# the person chose for their desktop's text (pixel sizes would not).
FONT_SCALES = {"reading": 1.15, "heading": 1.3, "title": 1.65, "banner": 1.85}


def font_sizes(app: QGuiApplication) -> dict[str, str]:
    font = app.font()
    points = font.pointSizeF() if font.pointSizeF() > 0 else font.pixelSize() * 0.75
    return {f"font_{name}": f"{points * scale:.1f}pt" for name, scale in FONT_SCALES.items()}


def current() -> dict[str, str]:
    """The colours of the scheme the running application follows (light without one), for
    HTML and items the stylesheet cannot reach."""
    app = QGuiApplication.instance()
    return colours(app) if isinstance(app, QGuiApplication) else LIGHT


def stylesheet(template: str, app: QGuiApplication) -> str:
    """The sheet in the scheme's colours, the person's font sizes, and its images (`$check`:
    a check box's tick) by their path."""
    check = (resources_dir() / "icons" / "check.svg").as_posix()
    return Template(template).substitute(colours(app), check=check, **font_sizes(app))


_os_palette: list[QPalette] = []  # the OS's palette, kept while a chosen scheme replaces it


def choose(app: QGuiApplication, choice: str) -> bool:
    """Follow `choice` ("system", "light" or "dark") from now on, and restyle the app;
    False (and nothing done) when it is the scheme already followed."""
    if choice not in CHOICES:
        choice = SYSTEM
    if choice == chosen(app):
        return False
    app.setProperty(_CHOICE_PROPERTY, choice)
    hints = app.styleHints()
    if choice == SYSTEM:
        hints.unsetColorScheme()
        if _os_palette:
            app.setPalette(_os_palette.pop())
    else:
        if not _os_palette:
            _os_palette.append(QPalette(app.palette()))
        dark = choice == DARK_CHOICE
        hints.setColorScheme(Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light)
        app.setPalette(palette(DARK if dark else LIGHT))
    apply(app)
    return True


def palette(colour: dict[str, str]) -> QPalette:
    """A palette in the stylesheet's colours, for what the sheet does not paint (a chosen
    scheme on a platform that cannot switch its own palette)."""
    result = QPalette()
    roles = {
        QPalette.ColorRole.Window: "window",
        QPalette.ColorRole.WindowText: "text",
        QPalette.ColorRole.Base: "base",
        QPalette.ColorRole.AlternateBase: "frame",
        QPalette.ColorRole.Text: "text",
        QPalette.ColorRole.Button: "base",
        QPalette.ColorRole.ButtonText: "text",
        QPalette.ColorRole.ToolTipBase: "base",
        QPalette.ColorRole.ToolTipText: "text",
        QPalette.ColorRole.PlaceholderText: "muted",
        QPalette.ColorRole.Highlight: "accent",
        QPalette.ColorRole.HighlightedText: "accent_text",
        QPalette.ColorRole.Link: "link",
        QPalette.ColorRole.LinkVisited: "link",
        QPalette.ColorRole.Mid: "border",
    }
    for role, name in roles.items():
        result.setColor(role, QColor(colour[name]))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        result.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour["disabled"]))
    return result


def apply(app: QGuiApplication) -> None:
    """The stylesheet in the colours of the scheme followed (chosen, else the OS's)."""
    style = resources_dir() / "style.qss"
    if isinstance(app, QApplication) and style.is_file():
        app.setStyleSheet(stylesheet(style.read_text(encoding="utf-8"), app))
    links = app.palette()  # links in answers and previews: stylesheets cannot colour them
    for role in (QPalette.ColorRole.Link, QPalette.ColorRole.LinkVisited):
        links.setColor(role, QColor(colours(app)["link"]))
    app.setPalette(links)
