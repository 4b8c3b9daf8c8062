"""A reorganization's plan is a dialog, not a message box cut short with "… and N more":
the folder before and after, every move listed, Apply or Cancel (the default)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from gam_desktop.engine.models import ReorganizeOperation
from gam_desktop.gui.reorganize_plan_dialog import ReorganizePlanDialog
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document
from tests.gui.test_main_window import built, idle, newest_is, wait


def tree_texts(tree) -> list[str]:
    """Every item of a tree widget, depth-first, indented by depth."""
    out: list[str] = []

    def walk(item, depth: int) -> None:
        out.append("  " * depth + item.text(0))
        for i in range(item.childCount()):
            walk(item.child(i), depth + 1)

    for i in range(tree.topLevelItemCount()):
        walk(tree.topLevelItem(i), 0)
    return out


def big_plan(moves: int) -> ReorganizeOperation:
    return ReorganizeOperation(
        directory="notes",
        moved_files=[
            (f"notes/note_{i:03}.md", f"notes/{'even' if i % 2 == 0 else 'odd'}/note_{i:03}.md")
            for i in range(moves)
        ],
        new_directories=["notes/even", "notes/odd"],
        kept_files=["notes/index.md"],
    )


def test_every_move_is_listed_and_both_trees_show_the_folder(qtbot) -> None:
    plan = big_plan(30)
    dialog = ReorganizePlanDialog(plan)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.move_rows() == [
        (old.removeprefix("notes/"), new.removeprefix("notes/")) for old, new in plan.moved_files
    ]  # all 30: nothing "… and N more"
    before, after = tree_texts(dialog.before), tree_texts(dialog.after)
    assert before[0] == "notes/" and len(before) == 1 + 30 + 1  # the folder, 30 moving, 1 kept
    assert after[:2] == ["notes/", "  even  (new)"] and "  odd  (new)" in after
    assert "    note_001.md" in after and "  index.md" in after
    assert dialog.moves.verticalScrollBar().maximum() > 0  # it scrolls, nothing is cut
    dialog.moves.setCurrentItem(dialog.moves.topLevelItem(7))  # shown in both trees
    assert dialog.before.currentItem().toolTip(0) == "notes/note_007.md"
    assert dialog.after.currentItem().toolTip(0) == "notes/odd/note_007.md"


def test_cancel_is_the_default_and_escape_cancels(qtbot) -> None:
    dialog = ReorganizePlanDialog(big_plan(200))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.cancel_button.isDefault() and not dialog.apply_button.isDefault()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.result() == QDialog.DialogCode.Rejected
    dialog.show()
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible()


def memory_files(memory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(memory).as_posix(): p.read_bytes()
        for p in memory.rglob("*")
        if p.is_file() and not {".git", ".gam"} & set(p.relative_to(memory).parts)
    }


def test_apply_moves_what_was_shown_and_cancel_changes_nothing(
    qtbot, window, llm_server, tmp_path
) -> None:
    # Three invalid plans are repaired into the model's single folder "all/", mixing topics.
    llm_server.state.faults.append(Fault("invalid_taxonomy", times=3, task="organize"))
    mixed = tmp_path / "mixed.md"
    mixed.write_text(topic_document({"python": 4, "rust": 4}))
    memory = tmp_path / "memory"
    built(qtbot, window, memory, [mixed])
    shown: list[list[tuple[str, str]]] = []

    def answer(apply: bool):
        def review(plan: ReorganizeOperation) -> bool:  # the real dialog, clicked
            dialog = ReorganizePlanDialog(plan, window)
            qtbot.addWidget(dialog)
            dialog.show()
            shown.append(dialog.move_rows())
            (dialog.apply_button if apply else dialog.cancel_button).click()
            return dialog.result() == QDialog.DialogCode.Accepted

        return review

    before = memory_files(memory)
    window.review_plan = answer(apply=False)
    window.plan_reorganization("all")
    wait(qtbot, lambda: shown and idle(window))
    assert len(shown[0]) == 8 and memory_files(memory) == before  # cancelled: unchanged
    assert window.status_label.text() == "Reorganization of all/ not applied; nothing changed"
    window.review_plan = answer(apply=True)
    planned = len(llm_server.state.requests)
    window.plan_reorganization("all")
    wait(qtbot, lambda: len(shown) == 2 and idle(window) and newest_is(window, "reorganize"))
    assert len(llm_server.state.requests) == planned + 1  # one plan, applied as shown
    after = memory_files(memory)
    for old, new in shown[1]:
        assert f"all/{old}" not in after and f"all/{new}" in after
