"""The window's three panes (the tree, the preview, the chat and its tabs) shared out for
its width: in the proportions the person left them at (by dragging a divider), else in the
window's own (DEFAULT_SHARES), none narrower than it can be used at.

Qt's splitter alone gave a wider window's room to the stretching panes only and, once a
divider was dragged, kept the widths of the moment: the proportions chosen were lost at the
next resize, and the window's fitted widths were no longer applied at all.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QSplitter, QWidget

PREVIEW_SHARE = 0.4  # of the room the tree leaves (the chat and its tabs have the rest)
# the tree's: at 2/11 it had 231 px of a window 1280 px wide and cut titles of 25 letters;
# at 0.22 (279 px) a title of 30-odd letters reads whole
TREE_SHARE = 0.22
DEFAULT_SHARES: tuple[float, ...] = (
    TREE_SHARE,
    (1 - TREE_SHARE) * PREVIEW_SHARE,
    (1 - TREE_SHARE) * (1 - PREVIEW_SHARE),
)


def shared_out(room: int, shares: Sequence[float], least: Sequence[int]) -> list[int]:
    """`room` pixels shared out in proportion to `shares`, none below its `least`: a pane
    that its share would make narrower gets its least, and the others share what is left in
    their proportions. When the least widths take more than the room, each gets its least
    (the window's own minimum width keeps that from happening)."""
    count = len(shares)
    fixed: dict[int, int] = {}
    while len(fixed) < count:
        free = [i for i in range(count) if i not in fixed]
        left = room - sum(fixed.values())
        total = sum(max(shares[i], 0.0) for i in free)
        wanted = {i: left * (max(shares[i], 0.0) / total if total else 1 / len(free)) for i in free}
        under = [i for i in free if wanted[i] < least[i]]
        if not under:
            break
        fixed.update({i: least[i] for i in under})
    free = [i for i in range(count) if i not in fixed]
    sizes = [fixed.get(i, 0) for i in range(count)]
    if free:
        left = room - sum(fixed.values())
        total = sum(max(shares[i], 0.0) for i in free)
        for i in free[:-1]:
            sizes[i] = int(left * (max(shares[i], 0.0) / total if total else 1 / len(free)))
        sizes[free[-1]] = left - sum(sizes[i] for i in free[:-1])  # the rounding's rest
    return sizes


def shares_of(sizes: Sequence[int]) -> tuple[float, ...] | None:
    """The proportions of `sizes` (a divider dragged, a layout restored); None without any."""
    total = sum(max(size, 0) for size in sizes)
    return tuple(max(size, 0) / total for size in sizes) if total > 0 else None


def shares_text(shares: Sequence[float]) -> str:
    """The proportions as kept in the settings ("0.1818 0.3273 0.4909")."""
    return " ".join(f"{share:.4f}" for share in shares)


def shares_in(text: object, count: int) -> tuple[float, ...] | None:
    """The `count` proportions `shares_text` kept, None when `text` is not that."""
    try:
        shares = [float(word) for word in str(text or "").split()]
    except ValueError:
        return None
    ok = len(shares) == count and all(0 <= share <= 1 for share in shares)
    return shares_of([round(share * 10_000) for share in shares]) if ok else None


def sizes_in_state(state: object) -> list[int] | None:
    """The pane sizes a QSplitter.saveState() holds (big-endian: a marker, a version, the
    count, the sizes), as they were when saved; None when `state` is not one. Restoring
    the state into the window not shown yet gave other sizes: squeezed into the splitter's
    first width, each then raised to its least, the proportions were lost."""
    data = bytes(state.data()) if isinstance(state, QByteArray) else state
    if not isinstance(data, bytes) or len(data) < 12:
        return None
    marker, _version, count = struct.unpack_from(">iii", data)
    if marker != 0xFF or not 0 < count <= 16 or len(data) < 12 + 4 * count:
        return None
    return list(struct.unpack_from(f">{count}i", data, 12))


def least_width(widget: QWidget) -> int:
    """The narrowest `widget` is usable at: its own minimum, else its layout's."""
    return max(widget.minimumWidth(), widget.minimumSizeHint().width())


def fit(split: QSplitter, shares: Sequence[float]) -> None:
    """The splitter's panes shared out for its width in `shares`, none below its least."""
    room = split.width() - (split.count() - 1) * split.handleWidth()
    if room <= 0:
        return
    panes = [split.widget(i) for i in range(split.count())]
    least = [least_width(pane) if pane is not None else 0 for pane in panes]
    split.setSizes(shared_out(room, shares, least))
