"""Light and dark: the stylesheet's colours for the scheme the OS asks for.

The stylesheet (resources/style.qss) names its colours (`$base`, `$text`, …); this module
fills them in for a light or a dark scheme. Dark comes from the OS (Qt's colour scheme:
Windows 11, macOS, GNOME) or, when Qt cannot tell, from the palette's window colour. Every
rule that sets a background sets the text colour too, so dark-mode text (light) never
lands on a light background, as it did when the sheet forced white.
"""

from __future__ import annotations

from string import Template

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

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
    "drop_bg": "rgba(47, 111, 222, 0.12)",
    "drop_text": "#1d4fa8",
    "status": "#eceff3",
    "disabled": "#999999",
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
    "drop_bg": "rgba(76, 141, 255, 0.16)",
    "drop_text": "#8ab4ff",
    "status": "#25272b",
    "disabled": "#6b6f76",
}


def is_dark(app: QGuiApplication) -> bool:
    scheme = app.styleHints().colorScheme()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return app.palette().window().color().lightness() < 128


def colours(app: QGuiApplication) -> dict[str, str]:
    return DARK if is_dark(app) else LIGHT


def stylesheet(template: str, app: QGuiApplication) -> str:
    return Template(template).substitute(colours(app))
