"""Linux from source (issue 38): on a minimal Debian, Qt's xcb plugin cannot load and Qt
names none of the libraries it lacks; the app reads them from `ldd` on the plugin and says
which packages to install, for apt and dnf, and the README's first command says the same."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from gam_desktop.gui import app, display_libraries
from gam_desktop.gui.display_libraries import advice, missing_libraries, packages_for, xcb_problem

README = Path(__file__).resolve().parents[2] / "README.md"

# ldd on PySide6 6.8's libqxcb.so on a minimal Debian 12 (no libxcb-cursor0, no
# libxcb-icccm4, no libxkbcommon-x11-0): what the loader could not find is "not found".
LDD_MINIMAL_DEBIAN = """\
\tlinux-vdso.so.1 (0x00007ffd5a7d2000)
\tlibQt6XcbQpa.so.6 => /opt/app/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x7f)
\tlibQt6Gui.so.6 => /opt/app/PySide6/Qt/plugins/platforms/../../lib/libQt6Gui.so.6 (0x7f)
\tlibxkbcommon.so.0 => /lib/x86_64-linux-gnu/libxkbcommon.so.0 (0x00007f1e4a3d1000)
\tlibxkbcommon-x11.so.0 => not found
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-util.so.1 => not found
\tlibxcb-keysyms.so.1 => /lib/x86_64-linux-gnu/libxcb-keysyms.so.1 (0x00007f1e4a3c9000)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-mystery.so.9 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1e49e00000)
"""


def test_the_missing_libraries_are_read_from_ldd() -> None:
    assert missing_libraries(LDD_MINIMAL_DEBIAN) == [
        "libxkbcommon-x11.so.0",
        "libxcb-cursor.so.0",
        "libxcb-icccm.so.4",
        "libxcb-util.so.1",
        "libxcb-mystery.so.9",
    ]
    assert missing_libraries("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n") == []


def test_each_library_maps_to_its_debian_and_fedora_package() -> None:
    debian, fedora, unknown = packages_for(missing_libraries(LDD_MINIMAL_DEBIAN))
    assert debian == ["libxkbcommon-x11-0", "libxcb-cursor0", "libxcb-icccm4", "libxcb-util1"]
    assert fedora == ["libxkbcommon-x11", "xcb-util-cursor", "xcb-util-wm", "xcb-util"]
    assert unknown == ["libxcb-mystery.so.9"]
    said = advice(missing_libraries(LDD_MINIMAL_DEBIAN))
    assert "sudo apt install libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-util1" in said
    assert "sudo dnf install libxkbcommon-x11 xcb-util-cursor xcb-util-wm xcb-util" in said
    assert "libxcb-mystery.so.9" in said


@pytest.mark.linux_only("Qt uses xcb on Linux only")
def test_the_app_asks_ldd_about_the_plugin_only_when_qt_will_use_x11(tmp_path: Path) -> None:
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"\x7fELF")
    asked: list[list[str]] = []

    def ldd(command, **_options) -> subprocess.CompletedProcess[str]:
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, LDD_MINIMAL_DEBIAN, "")

    def problem(**environ: str) -> str | None:
        return xcb_problem(environ, plugin, ldd, ldd="/usr/bin/ldd")

    assert "libxcb-cursor0" in (problem() or "")  # X11 chosen by Qt
    assert "libxcb-cursor0" in (problem(QT_QPA_PLATFORM="xcb") or "")
    assert asked == [["/usr/bin/ldd", str(plugin)]] * 2
    assert problem(QT_QPA_PLATFORM="offscreen") is None
    assert problem(WAYLAND_DISPLAY="wayland-0") is None  # Qt picks Wayland there
    assert len(asked) == 2


@pytest.mark.linux_only("PySide6 carries the xcb plugin on Linux only")
def test_the_plugin_is_found_in_pyside6_s_plugins_folder() -> None:
    plugin = display_libraries.xcb_plugin()
    assert plugin is not None and plugin.name == "libqxcb.so" and plugin.is_file()
    assert plugin.parent.name == "platforms"


def test_the_start_says_it_on_stderr(monkeypatch, capsys) -> None:
    monkeypatch.setattr(display_libraries, "xcb_problem", lambda: advice(["libxcb-cursor.so.0"]))
    app.say_missing_display_libraries()
    assert "sudo apt install libxcb-cursor0" in capsys.readouterr().err


def test_the_readme_s_first_command_names_the_packages() -> None:
    text = README.read_text(encoding="utf-8")
    first = text[: text.index("## ")]
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxkbcommon-x11-0"):
        assert re.search(rf"apt[^\n]*install[^\n]*{package}", first), package
    for package in ("xcb-util-cursor", "xcb-util-wm", "libxkbcommon-x11"):
        assert re.search(rf"dnf[^\n]*install[^\n]*{package}", first), package
