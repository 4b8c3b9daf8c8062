"""Screenshots of a build's progress, a reorganization's plan and a diff in a narrow History
column, light and dark, for a person to look at (GAM_SCREENSHOTS=folder keeps them;
otherwise they go to the test's temporary folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.models import ReorganizeOperation
from gam_desktop.gui import theme
from gam_desktop.gui.reorganize_plan_dialog import ReorganizePlanDialog
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document
from tests.gui.test_main_window import drop, history, idle, wait


@pytest.fixture(params=[theme.LIGHT_CHOICE, theme.DARK_CHOICE])
def scheme(request, window):
    """View ▸ Theme ▸ Light or Dark, chosen in the window; the OS's again afterwards."""
    window.menus.choose_theme(request.param)
    yield request.param
    theme.choose(QApplication.instance(), theme.SYSTEM)


def test_screenshots_of_progress_plans_and_diffs(
    qtbot, scheme, window, recorder, llm_server, tmp_path
) -> None:
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []

    def shoot(name: str, widget) -> None:
        shots.append(folder / f"{name}-{scheme}.png")
        assert widget.grab().save(str(shots[-1]))

    # Three invalid plans are repaired into one folder "all/", mixing topics: one to re-plan.
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    mixed = tmp_path / "mixed.md"
    mixed.write_text(topic_document({"python": 4, "rust": 4}))
    assert window.open_memory(tmp_path / "memory")
    drop(window, [mixed])
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 0)
    llm_server.state.latency_s = 0.3  # then three documents added, slowly enough to see
    files = []
    for name, topics in (
        ("git", {"git": 3}),
        ("docker", {"docker": 3}),
        ("haskell", {"haskell": 2}),
    ):
        files.append(tmp_path / f"{name}.md")
        files[-1].write_text(topic_document(topics))
    drop(window, files)
    wait(qtbot, lambda: re.match(r"Summarizing [3-6] of", window.status_label.text()))
    shoot("10-add-summarizing", window)
    wait(qtbot, lambda: window.status_label.text().startswith("Writing READMEs"))
    shoot("11-add-writing-readmes", window)
    wait(qtbot, lambda: idle(window) and window.tree.memory_count() > 8)
    llm_server.state.latency_s = 0

    def review(plan: ReorganizeOperation) -> bool:
        dialog = ReorganizePlanDialog(plan, window)
        qtbot.addWidget(dialog)
        dialog.show()
        dialog.moves.setCurrentItem(dialog.moves.topLevelItem(2))
        shoot("12-reorganize-plan", dialog)
        return False

    window.review_plan = review
    window.plan_reorganization("all")
    wait(qtbot, lambda: idle(window) and len(shots) == 3)
    window.resize(1100, 760)
    window.split.setSizes([220, 500, 380])  # History in a narrow column
    history(qtbot, window)
    window.history.files.setCurrentItem(window.history.files.topLevelItem(0))
    wait(qtbot, lambda: "+" in window.history.diff.toPlainText())
    shoot("13-history-narrow-diff", window)
    assert all(p.stat().st_size > 10_000 for p in shots)
