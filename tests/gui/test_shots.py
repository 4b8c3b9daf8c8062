"""tests/gui/shots.py itself, run as a person runs it (offscreen, in a process of its own):
every picture its docstring promises is made, at its size, and shows the window (not a
blank or a single colour), the dark theme's darker than the light one's. Nothing ran it:
a change that broke it was found only when the guide's pictures were made again."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.gui.offscreen import run_module

THEMES = ("light", "dark")
BOTH = ("800x600", "1280x800")
STATES = {  # what shots.py promises: each state at its sizes, in both themes
    "chat": BOTH,
    "drop": ("1280x800",),
    "fallback": BOTH,
    "research": BOTH,
    "research-saved": BOTH,
    "learned": BOTH,
    "history": BOTH,
    "removed": BOTH,
    "after-restart": ("1280x800",),
}
GUIDE = ("window.png", "drop.png", "research.png", "history.png", "dark.png")

pytestmark = pytest.mark.timeout(1800)


def promised() -> dict[str, tuple[int, int] | None]:
    """Each picture's name and size (None: a dialog's own size)."""
    pictures: dict[str, tuple[int, int] | None] = {}
    for scheme in THEMES:
        for state, sizes in STATES.items():
            for size in sizes:
                width, height = (int(n) for n in size.split("x"))
                pictures[f"{state}-{size}-{scheme}.png"] = (width, height)
        pictures[f"settings-{scheme}.png"] = None
    return pictures


def colours(image: QImage) -> tuple[int, float]:
    """How many colours a grid of 48 × 36 points over `image` finds, and their mean
    lightness (0 to 255)."""
    seen, light = set(), 0.0
    points = [(x, y) for x in range(48) for y in range(36)]
    for x, y in points:
        colour = image.pixelColor(x * image.width() // 48, y * image.height() // 36)
        seen.add(colour.rgb())
        light += colour.lightness()
    return len(seen), light / len(points)


def test_shots_makes_every_picture_it_promises(tmp_path: Path) -> None:
    out, guide = tmp_path / "shots", tmp_path / "guide"
    args = [str(out), "--guide", str(guide)]
    done = run_module("tests.gui.shots", args, tmp_path / "home", timeout=1700)
    assert done.returncode == 0, done.stderr[-3000:]
    expected = promised()
    assert sorted(p.name for p in out.glob("*.png")) == sorted(expected)
    lightness: dict[str, list[float]] = {scheme: [] for scheme in THEMES}
    for name, size in expected.items():
        image = QImage(str(out / name))
        assert not image.isNull(), name
        if size is not None:
            assert (image.width(), image.height()) == size, name
        count, light = colours(image)
        assert count >= 8, f"{name} is blank ({count} colours)"
        lightness[name.removesuffix(".png").rsplit("-", 1)[1]].append(light)
    assert max(lightness["dark"]) < min(lightness["light"])  # each in its own theme
    assert sorted(p.name for p in guide.glob("*.png")) == sorted(GUIDE)
    for name in GUIDE:
        image = QImage(str(guide / name))
        assert image.width() == 760 and colours(image)[0] >= 8, name
