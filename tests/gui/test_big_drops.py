"""Big drops in the window: the tree follows each committed step while the rest runs; the
Cancel button asks to stop after the current step or to stop now and undo the drop; an
add that did not finish is offered again when the memory opens and when its files are
dropped again."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.resume import PENDING
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.results import ResultStore
from gam_desktop.gui.closing import question
from gam_desktop.gui.intake import StopChoice
from gam_desktop.gui.main_window import PROGRESS_STEPS
from tests.documents import document_files
from tests.engine.test_resume import cancelled_add, memorize_calls
from tests.gui.test_build_progress import bar_as_drawn
from tests.gui.test_main_window import drop, idle, wait


@pytest.fixture
def stepped(prefs):
    """Preferences committing a drop in steps of 10 documents."""
    return dataclasses.replace(prefs, step_documents=10, min_tokens=20, max_tokens=300)


def known(memory: Path) -> int:
    return len(MemoryFolder(memory).known_sources())


def crashed_add(make_workflow, llm_server, files, memory: Path) -> int:
    """An add that stopped without being cancelled (the app or the computer stopped): its
    record is left as the run wrote it, without the mark a cancel adds."""
    paid = cancelled_add(make_workflow, llm_server, files, memory)
    store = ResultStore.of(MemoryFolder(memory))
    record = store.state(PENDING)
    del record["cancelled"]
    store.set_state(PENDING, record)
    store.close()
    return paid


def stop_with(window, choice: StopChoice, asked: list) -> None:
    def choose(title: str, text: str, answers: dict[StopChoice, str]) -> StopChoice:
        asked.append((title, text, answers))
        return choice

    window.intake.choose = choose


def build_until_a_step_is_shown(qtbot, window, llm_server, memory: Path, files) -> None:
    llm_server.state.latency_s = 0.1  # steps long enough to stop one midway
    assert window.open_memory(memory)
    drop(window, files)
    # The tree shows the first step while the build goes on (live, not at the end).
    wait(qtbot, lambda: window.tree.memory_count() >= 10 and window.tasks.running("build"))


def test_stop_after_the_current_step(
    qtbot, make_window, stepped, recorder, llm_server, tmp_path
) -> None:
    window = make_window(stepped)
    memory = tmp_path / "memory"
    files = document_files(tmp_path / "docs", 35)
    asked: list = []
    stop_with(window, StopChoice.AFTER_STEP, asked)
    build_until_a_step_is_shown(qtbot, window, llm_server, memory, files)
    assert "in 4 steps of 10 documents" in recorder.asked[-1][1]  # the estimate said so
    window.cancel_button.click()
    wait(qtbot, lambda: idle(window))
    (_title, text, answers) = asked[0]
    assert list(answers.values()) == [
        "Stop after the current step",
        "Stop now, undo this drop",
        "Keep going",
    ]
    assert "is in the memory already" in text or "are in the memory already" in text
    added = known(memory)
    # Whole steps only: those finished, and the one running when Stop came, if one was
    # (under load the click may land between the first step's commit and the next step).
    assert added % 10 == 0 and 10 <= added < 35
    assert "stopped after a step" in window.status_label.text()
    assert window.tree.memory_count() == added


def test_stop_now_and_undo_this_drop(
    qtbot, make_window, stepped, recorder, llm_server, tmp_path
) -> None:
    window = make_window(stepped)
    memory = tmp_path / "memory"
    asked: list = []
    stop_with(window, StopChoice.UNDO, asked)
    build_until_a_step_is_shown(
        qtbot, window, llm_server, memory, document_files(tmp_path / "docs", 35)
    )
    window.cancel_button.click()
    wait(qtbot, lambda: idle(window))
    assert asked and window.status_label.text() == "Cancelled; this drop was undone"
    assert known(memory) == 0 and window.tree.memory_count() == 0


def test_keep_going_changes_nothing(qtbot, make_window, stepped, llm_server, tmp_path) -> None:
    window = make_window(stepped)
    memory = tmp_path / "memory"
    asked: list = []
    stop_with(window, StopChoice.KEEP, asked)
    build_until_a_step_is_shown(
        qtbot, window, llm_server, memory, document_files(tmp_path / "docs", 25)
    )
    window.cancel_button.click()
    wait(qtbot, lambda: idle(window))
    assert asked and known(memory) == 25


def test_a_drop_in_steps_has_one_bar_that_never_goes_back(
    qtbot, make_window, stepped, tmp_path
) -> None:
    """The bar runs once across every step, determinate, the step named beside it (each
    step used to draw its own bar from 0 again)."""
    window = make_window(stepped)
    shown = bar_as_drawn(window)
    assert window.open_memory(tmp_path / "memory")
    drop(window, document_files(tmp_path / "docs", 25))  # steps of 10, 10 and 5
    wait(qtbot, lambda: idle(window) and known(tmp_path / "memory") == 25)
    build = shown[shown.index(next(s for s in shown if s[0].startswith("Cutting"))) :]
    values = [value for _text, value, _maximum in build]
    assert values == sorted(values) and values[-1] == PROGRESS_STEPS
    assert {maximum for _t, _v, maximum in build} == {PROGRESS_STEPS}  # never a busy bar
    steps = {n: [v for t, v, _m in build if t.startswith(f"Step {n} of 3: ")] for n in (1, 2, 3)}
    assert all(steps.values())
    assert 0 < max(steps[1]) <= min(steps[2]) and max(steps[2]) <= min(steps[3])
    assert max(steps[1]) < PROGRESS_STEPS / 2
    assert any(t.startswith("Step 2 of 3: Summarizing 4 of 10 passages") for t, _v, _m in build)


def test_an_unfinished_add_is_offered_when_the_memory_opens(
    qtbot, make_window, make_workflow, stepped, recorder, llm_server, tmp_path, memory_dir
) -> None:
    files = document_files(tmp_path / "docs", 12)
    crashed_add(make_workflow, llm_server, files, memory_dir)
    window = make_window(stepped)
    assert window.open_memory(memory_dir)
    title, text = recorder.asked[-1]
    summarized = memorize_calls(llm_server)
    assert title == "An add did not finish"
    assert f"{summarized} of 12 passages already summarized; continue?" in text
    wait(qtbot, lambda: idle(window) and known(memory_dir) == 12)
    assert memorize_calls(llm_server) == 12  # what it had summarized is not paid again
    assert window.tree.memory_count() == 12
    assert window.workflow.interrupted_add() is None


def test_an_unfinished_add_declined_is_not_offered_again(
    qtbot, make_window, make_workflow, stepped, recorder, llm_server, tmp_path, memory_dir
) -> None:
    crashed_add(make_workflow, llm_server, document_files(tmp_path / "docs", 12), memory_dir)
    recorder.answer = False
    window = make_window(stepped)
    assert window.open_memory(memory_dir)
    assert recorder.asked[-1][0] == "An add did not finish"
    asked = len(recorder.asked)
    assert window.open_memory(memory_dir)
    assert len(recorder.asked) == asked and not window.tasks.running("build")


def test_dropping_the_files_of_an_unfinished_add_offers_to_resume_it(
    qtbot, make_window, make_workflow, stepped, recorder, llm_server, tmp_path, memory_dir
) -> None:
    window = make_window(stepped)
    assert window.open_memory(memory_dir)  # nothing unfinished yet
    files = document_files(tmp_path / "docs", 12)
    summarized = cancelled_add(make_workflow, llm_server, files, memory_dir)  # a gam-add stopped
    drop(window, files)
    wait(qtbot, lambda: idle(window) and known(memory_dir) == 12)
    _title, text = next(q for q in recorder.asked if q[0] == "Resume the interrupted add?")
    assert text.startswith(
        f"Resume the interrupted add ({summarized} of 12 passages already summarized)?"
    )
    assert memorize_calls(llm_server) == 12


def test_closing_during_a_build_in_steps_says_the_finished_steps_are_kept() -> None:
    _title, text = question("build", "notes", 40, steps=2)
    assert "the 2 finished steps are saved" in text and "nothing" not in text
    _title, text = question("build", "notes", 40, steps=0)
    assert "nothing from the build is saved" in text


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_a_drop_in_steps(
    qtbot, make_window, stepped, llm_server, tmp_path, scheme: str
) -> None:
    """The window while a drop is added in steps, the stop question, the resume question and
    Settings, in both schemes, for a person to look at (GAM_SCREENSHOTS=folder keeps them)."""
    from PySide6.QtWidgets import QApplication

    from gam_desktop.engine.ingest.estimate import Estimate
    from gam_desktop.engine.ingest.resume import PendingAdd
    from gam_desktop.gui import dialogs, theme
    from gam_desktop.gui.intake import STOP_ANSWERS, STOP_ROLES
    from gam_desktop.gui.settings_dialog import SettingsDialog

    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance()
    try:
        window = make_window(stepped)  # (a new window follows its settings' scheme: system)
        theme.choose(app, scheme)
        asked: list = []
        stop_with(window, StopChoice.KEEP, asked)
        memory = tmp_path / "memory"
        build_until_a_step_is_shown(
            qtbot, window, llm_server, memory, document_files(tmp_path / "docs", 35)
        )
        wait(qtbot, lambda: window.status_label.text().startswith("Step 2 of 4"))
        shots = {f"9-{scheme}-building-in-steps": window.grab()}
        window.cancel_button.click()  # Keep going
        (title, text, answers) = asked[0]
        buttons = {c: (label, STOP_ROLES[c]) for c, label in answers.items()}
        box, _ = dialogs.question_box(
            window, title, title, buttons, StopChoice.KEEP, informative=text
        )
        qtbot.addWidget(box)
        box.show()
        shots[f"10-{scheme}-stop-question"] = box.grab()
        estimate = Estimate(188, 190, 98_000, 214, 130_000, 52_000, 8, 25, 250, 0.05)
        estimate.model = "gpt-4o-mini"
        estimate.resume = PendingAdd([], {str(i): {} for i in range(500)}, "m", "", 312)
        recorded: list[tuple[str, str, tuple[str, str]]] = []
        window.confirm = lambda title, text, **how: bool(
            recorded.append((title, text, how["buttons"]))
        )
        window.intake._confirm_build([], estimate)
        title, text, verbs = recorded[0]
        box, _ = dialogs.question_box(window, title, text, dialogs.verb_buttons(verbs), True)
        qtbot.addWidget(box)
        box.show()
        shots[f"11-{scheme}-resume-question"] = box.grab()
        settings = SettingsDialog(stepped, None, window)
        qtbot.addWidget(settings)
        settings.tabs.setCurrentIndex(1)  # Advanced: "Save big drops every"
        settings.show()
        shots[f"12-{scheme}-settings"] = settings.grab()
        wait(qtbot, lambda: idle(window))
        for name, picture in shots.items():
            assert picture.save(str(folder / f"{name}.png"))
        assert set(STOP_ANSWERS.values()) == set(answers.values())
    finally:
        theme.choose(app, "system")
