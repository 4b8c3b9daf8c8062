"""Draw the GAM Desktop icon and write it in the formats each OS needs:
resources/icons/gam-desktop-{16..512}.png (Linux), gam-desktop.ico (Windows),
gam-desktop.icns (macOS).

    .venv/bin/python packaging/make_icons.py      (needs Pillow: pip install -e '.[test]')
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def draw(size: int = 1024) -> Image.Image:
    """A blue rounded square holding a small tree of notes: folders branching to memories."""
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(image)
    s = size / 1024
    d.rounded_rectangle((48 * s, 48 * s, 976 * s, 976 * s), radius=200 * s, fill="#2f6fde")
    line, white, pale = int(34 * s), "#ffffff", "#cfe0ff"
    d.line((300 * s, 300 * s, 300 * s, 720 * s), fill=pale, width=line)
    for y in (500, 720):
        d.line((300 * s, y * s, 470 * s, y * s), fill=pale, width=line)
    d.rounded_rectangle((200 * s, 200 * s, 420 * s, 360 * s), radius=36 * s, fill=white)
    for y in (420, 640):
        d.rounded_rectangle((450 * s, y * s, 820 * s, (y + 160) * s), radius=36 * s, fill=white)
        for row in range(2):
            top = (y + 45 + row * 50) * s
            d.rounded_rectangle(
                (500 * s, top, (760 - row * 90) * s, top + 22 * s), radius=11 * s, fill="#2f6fde"
            )
    return image


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    master = draw()
    for size in SIZES:
        master.resize((size, size), Image.LANCZOS).save(OUT / f"gam-desktop-{size}.png")
    master.save(OUT / "gam-desktop.ico", sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)])
    master.save(OUT / "gam-desktop.icns")
    print(f"icons written to {OUT}")


if __name__ == "__main__":
    main()
