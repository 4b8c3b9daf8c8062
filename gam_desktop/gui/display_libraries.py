"""Before the window opens, on Linux: can Qt's X11 platform plugin (xcb) load, and if not,
which system packages would let it.

A minimal Debian, Ubuntu or Fedora lacks libraries the plugin needs (libxcb-cursor0,
libxcb-icccm4, …): Qt then aborts with "Could not load the Qt platform plugin "xcb"" and
names none of them. `ldd` on the plugin (`libqxcb.so`, in PySide6's plugins folder, in the
packaged app too) lists the libraries the loader cannot find; each is mapped to the
package that ships it, for apt and for dnf. Said on stderr and in the log before Qt is
started (a check that fails to run says nothing: the app starts as it would have).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

# library (soname) -> (Debian/Ubuntu package, Fedora package): what Qt 6's xcb plugin and
# the libraries it loads need beyond a minimal system.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
}
NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found\s*$", re.MULTILINE)
Run = Callable[..., subprocess.CompletedProcess[str]]


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ldd could not find ("libxcb-cursor.so.0 => not found"), once each, in
    the order it printed them."""
    return list(dict.fromkeys(NOT_FOUND.findall(ldd_output)))


def packages_for(missing: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(the Debian/Ubuntu packages, the Fedora packages, the libraries of no known package)
    for `missing`."""
    known = [PACKAGES[name] for name in missing if name in PACKAGES]
    unknown = [name for name in missing if name not in PACKAGES]
    debian = list(dict.fromkeys(deb for deb, _ in known))
    fedora = list(dict.fromkeys(rpm for _, rpm in known))
    return debian, fedora, unknown


def advice(missing: list[str]) -> str:
    """What to tell the person: the libraries missing and the commands that install them."""
    debian, fedora, unknown = packages_for(missing)
    lines = [
        "GAM Desktop cannot open its window: Qt's X11 platform plugin (xcb) needs "
        f"{', '.join(missing)}, which this system lacks. Install them, then start it again:",
    ]
    if debian:
        lines.append(f"  Debian, Ubuntu: sudo apt install {' '.join(debian)}")
    if fedora:
        lines.append(f"  Fedora, RHEL:   sudo dnf install {' '.join(fedora)}")
    if unknown:
        lines.append(f"  (and the packages that provide {', '.join(unknown)})")
    return "\n".join(lines)


def xcb_plugin() -> Path | None:
    """Qt's xcb plugin in PySide6's plugins folder (from source and in the packaged app)."""
    try:
        import PySide6  # the package only: no Qt library is loaded yet
    except ImportError:
        return None
    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def uses_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will start on X11 here: on Linux, asked for (QT_QPA_PLATFORM), or left to
    choose outside a Wayland session."""
    if not sys.platform.startswith("linux"):
        return False
    wanted = environ.get("QT_QPA_PLATFORM", "").split(";")[0].strip()
    if wanted:
        return wanted.startswith("xcb")
    return not environ.get("WAYLAND_DISPLAY")


def xcb_problem(
    environ: Mapping[str, str] = os.environ,
    plugin: Path | None = None,
    run: Run = subprocess.run,
    ldd: str | None = None,
) -> str | None:
    """The advice when the xcb plugin cannot load here; None when it can, when Qt starts on
    another platform, or when there is no ldd to ask."""
    if not uses_xcb(environ):
        return None
    plugin = plugin or xcb_plugin()
    ldd = ldd or shutil.which("ldd")
    if plugin is None or ldd is None:
        return None
    try:
        listed = run([ldd, str(plugin)], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    missing = missing_libraries(listed.stdout + listed.stderr)
    return advice(missing) if missing else None
