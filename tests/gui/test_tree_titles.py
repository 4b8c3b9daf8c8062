"""Notes of one folder that share a title looked identical in the tree (issue 39): each is
told apart by its pages where each has its own, else by its file's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.store.markdown import render_memory
from tests.gui.test_main_window import idle, wait

pytestmark = pytest.mark.timeout(120)

NOTES = "# Launch plan\n\nThe product launch is planned with the marketing team.\n"


def note(folder: Path, name: str, title: str, pages: list[int] | None = None) -> None:
    front: dict[str, object] = {"title": title, "tldr": f"{title} ({name})"}
    if pages:
        front["pages"] = pages
    (folder / name).write_text(render_memory(front, f"{title}, as {name} says it."))


def labels(window, folder: str) -> list[str]:
    item = window.tree.item_at(folder)
    item.setExpanded(True)
    return [item.child(i).text(0) for i in range(item.childCount())]


def test_notes_sharing_a_title_are_told_apart(qtbot, window, make_workflow) -> None:
    workflow = make_workflow()
    workflow.add(text=NOTES)
    root = workflow.folder.root
    folder = root / "policies"
    folder.mkdir()
    note(folder, "escalation.md", "Escalation", [1, 1])
    note(folder, "escalation_rules.md", "Escalation", [3, 4])
    note(folder, "rotation.md", "Weekly rotation")
    note(folder, "rotation_2.md", "weekly  Rotation")  # the same to a reader
    note(folder, "paging.md", "Paging window")
    assert window.open_memory(root)
    wait(qtbot, lambda: idle(window) and window.tree.item_at("policies") is not None)
    shown = labels(window, "policies")
    assert "Escalation  · page 1" in shown and "Escalation  · pages 3–4" in shown
    assert "Weekly rotation  · rotation" in shown and "weekly  Rotation  · rotation_2" in shown
    assert "Paging window" in shown  # a title of its own: as it is
    assert len(set(shown)) == len(shown)
    qtbot.keyClicks(window.find_panel.box, "escalation")  # filtered: told apart the same way
    wait(qtbot, lambda: window.tree.filtered and window.tree.item_at("policies/paging.md") is None)
    wait(qtbot, lambda: idle(window) and labels(window, "policies")[0].startswith("Escalation"))
    assert sorted(labels(window, "policies")) == ["Escalation  · page 1", "Escalation  · pages 3–4"]
