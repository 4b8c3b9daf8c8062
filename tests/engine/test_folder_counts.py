"""A shallow view's counts of memories below each folder (the tree's first look): a folder's
listing is remembered by its mtime, so they must follow names added, removed, renamed or
linked, whether the change came long after the listing or in the same clock tick."""

from __future__ import annotations

import os
from pathlib import Path

from gam_desktop.engine.store import folder as folder_module
from gam_desktop.engine.store.folder import MemoryFolder

AN_HOUR_AGO = 3600


def memory(root: Path, layout: dict[str, int]) -> Path:
    """Folders of `layout` ("a/b": n memories), each with a README, settled an hour ago."""
    for path, count in layout.items():
        where = root / path
        where.mkdir(parents=True, exist_ok=True)
        (where / "README.md").write_text(f"# {path}\n\nAbout {path}.\n", encoding="utf-8")
        for i in range(count):
            (where / f"m{i}.md").write_text(f"---\ntitle: m{i}\n---\nText {i}.\n", "utf-8")
    settle(root)
    return root


def settle(root: Path) -> None:
    """Every folder's mtime an hour back: listings of it are trusted (not racy)."""
    past = os.stat(root).st_mtime - AN_HOUR_AGO
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, (past, past))


def totals(folder: MemoryFolder) -> dict[str, int | None]:
    view = folder.shallow_view()
    assert view is not None
    return {name: sub.total for name, sub in view.subdirs.items()}


def test_counts_follow_names_added_removed_and_renamed(tmp_path: Path) -> None:
    root = memory(tmp_path / "m", {"a": 3, "a/deep": 2, "b": 1})
    folder = MemoryFolder(root)
    assert totals(folder) == {"a": 5, "b": 1}
    (root / "a/deep/new.md").write_text("new", encoding="utf-8")
    (root / "b/m0.md").unlink()
    assert totals(folder) == {"a": 6, "b": 0}
    settle(root)
    (root / "a/deep/new.md").rename(root / "b/new.md")
    assert totals(folder) == {"a": 5, "b": 1}


def test_a_name_added_in_the_listings_own_tick_is_counted(tmp_path: Path) -> None:
    """A folder listed, then changed without its mtime moving (one coarse clock tick): its
    fresh listing was not trusted, so the next count still sees the change."""
    root = memory(tmp_path / "m", {"a": 2})
    folder = MemoryFolder(root)
    assert totals(folder) == {"a": 2}
    (root / "a/late.md").write_text("late", encoding="utf-8")
    stamp = os.stat(root / "a").st_mtime_ns
    assert totals(folder) == {"a": 3}  # listed within its mtime's tick: not remembered
    (root / "a/later.md").write_text("later", encoding="utf-8")
    os.utime(root / "a", ns=(stamp, stamp))  # the same tick, as a coarse clock would stamp
    assert totals(folder) == {"a": 4}


def test_a_settled_listing_is_not_read_again(tmp_path: Path, monkeypatch) -> None:
    """The point of remembering: 1,000 files edited in place change no folder's names."""
    root = memory(tmp_path / "m", {"a": 3, "a/deep": 2})
    folder = MemoryFolder(root)
    assert totals(folder) == {"a": 5}
    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(path):
        listed.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(folder_module.os, "scandir", counting_scandir)
    (root / "a/deep/m0.md").write_text("edited in place", encoding="utf-8")
    assert totals(folder) == {"a": 5}
    assert str(root / "a") not in listed and str(root / "a/deep") not in listed


def test_a_link_swapped_in_place_is_counted_as_it_now_is(tmp_path: Path) -> None:
    """A folder holding a link is listed every time: the link's target can change (from
    inside the memory to outside it) without the folder's names or mtime changing."""
    root = memory(tmp_path / "m", {"a": 1, "b": 1})
    outside = tmp_path / "outside.md"
    outside.write_text("outside", encoding="utf-8")
    (root / "a/link.md").symlink_to(root / "b/m0.md")
    settle(root)
    folder = MemoryFolder(root)
    assert totals(folder)["a"] == 2  # a link to a memory inside counts
    stamp = os.stat(root / "a").st_mtime_ns
    (root / "a/link.md").unlink()
    (root / "a/link.md").symlink_to(outside)
    os.utime(root / "a", ns=(stamp, stamp))  # the same mtime as before the swap
    assert totals(folder)["a"] == 1  # a link out of the folder is absent
