"""What a README is called wherever the window names one: the tree's item, the preview's
title and a search hit all say "Overview of <its folder>" ("Overview of this memory" for
the one at the top), so a person recognizes the same file in each."""

from __future__ import annotations

from gam_desktop.engine.api import README


def is_overview(path: str) -> bool:
    """Whether `path` is a README (a folder's overview, or the memory's)."""
    return path == README or path.endswith(f"/{README}")


def folder_of(path: str) -> str:
    """The folder a README is the overview of ("" for the memory's own)."""
    return path.removesuffix(README).rstrip("/")


def overview_name(path: str) -> str:
    """The name of the README at `path`: "Overview of neural_part_1", "Overview of this
    memory"."""
    folder = folder_of(path)
    return f"Overview of {folder.rsplit('/', 1)[-1]}" if folder else "Overview of this memory"
