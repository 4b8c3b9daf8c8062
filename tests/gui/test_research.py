"""Research mode in the chat panel (issue 15), offscreen against the scripted server: the
Research switch, the plan live with its sub-questions ticked, the report with clickable
citations, Save to memory (a commit the History lists, the saved report in the preview),
and Stop (nothing saved). Screenshots, light and dark, go to $GAM_SCREENSHOTS if set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from gam_desktop.engine.research.agent import ResearchStep
from tests.engine.test_answers import built_policies
from tests.gui.test_main_window import idle, ops, wait

pytestmark = pytest.mark.timeout(180)
COMPARE = "Compare the escalation rules of Acme Corp and Borealis Systems"


@pytest.fixture
def memory(make_workflow, tmp_path: Path) -> Path:
    return built_policies(make_workflow, tmp_path).folder.root


def any_is(window, kind: str, summary: str) -> bool:
    return any(op.kind == kind and op.summary.startswith(summary) for op in ops(window))


def research(window, question: str) -> None:
    window.chat.research.setChecked(True)
    window.chat.input.setPlainText(question)
    window.chat.send.click()


def shoot(window, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("GAM_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert window.grab().save(str(path))
    return path


def test_research_shows_the_plan_live_then_a_report_to_save(
    qtbot, window, memory, tmp_path
) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    plans: list[list[tuple[str, bool]]] = []
    shown = window.chat.show_research_step

    def recorded(step: ResearchStep) -> None:
        shown(step)
        plans.append(list(window.chat.turns[-1].plan))

    window.chat.show_research_step = recorded
    window.research.step.disconnect()
    window.research.step.connect(recorded)
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    turn = window.chat.turns[-1]
    assert turn.error is None, turn.error
    # the plan appeared first unticked, then each sub-question ticked as it was answered
    assert plans[0] and not any(done for _, done in plans[0])
    assert [done for _, done in plans[-1]] == [True, True]
    text = window.chat.transcript.toPlainText()
    asked = "What do the notes say about the escalation rules of Acme Corp?"
    assert asked in text and "30 minutes" in text
    assert "Save to memory" in text and "Confidence" in text
    assert turn.steps and not window.chat.stop.isVisible()
    shoot(window, "research-1-report.png", tmp_path)
    # a citation opens its file in the preview
    cited = turn.report.sources[0]
    window.chat.transcript.anchorClicked.emit(QUrl(f"source:{cited}"))
    wait(qtbot, lambda: window.preview.path == cited)
    # Save to memory: its own commit, listed in the History, the report in the preview
    window.chat.transcript.anchorClicked.emit(QUrl("save:0"))
    wait(qtbot, lambda: turn.saved is not None and idle(window))
    assert turn.saved.startswith("research/") and (memory / turn.saved).is_file()
    wait(qtbot, lambda: window.preview.path == turn.saved)
    # Listed, though not necessarily first: keeping the report in the conversation is a
    # commit of its own, which may land after the save (a busy machine did so).
    wait(qtbot, lambda: any_is(window, "research", f"Research: {COMPARE}") and idle(window))
    assert "Saved as" in window.chat.transcript.toPlainText()
    shoot(window, "research-2-saved.png", tmp_path)


def test_stop_ends_the_research_and_saves_nothing(qtbot, window, memory, llm_server) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))

    def stop_at_first_step(_step: ResearchStep) -> None:
        window.chat.stop.click()

    window.research.step.connect(stop_at_first_step)
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].error is not None and idle(window))
    assert "Stopped" in window.chat.turns[-1].error and window.chat.turns[-1].report is None
    assert not (memory / "research").exists()


def test_screenshot_of_a_report_in_dark_mode(qtbot, window, memory, tmp_path) -> None:

    from tests.gui.test_theme import os_scheme

    with os_scheme(dark=True):
        assert window.open_memory(memory)
        wait(qtbot, lambda: idle(window))
        research(window, COMPARE)
        wait(qtbot, lambda: window.chat.turns[-1].report is not None)
        shoot(window, "research-3-dark.png", tmp_path)


def test_a_claim_its_sources_do_not_say_is_shown_left_out_with_why(
    qtbot, window, memory, tmp_path, llm_server
) -> None:
    """A claim citing a file the run never read, whose words no excerpt says: not among the
    sections, but under "Claims left out" with the reason, beside the claims that hold."""
    from gam_desktop.selfcheck.scripted_llm import Fault

    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    llm_server.state.faults.append(Fault("made_up_source", times=5, task="research_integrate"))
    research(window, COMPARE)
    wait(qtbot, lambda: window.chat.turns[-1].report is not None or window.chat.turns[-1].error)
    turn = window.chat.turns[-1]
    assert turn.error is None, turn.error
    text = window.chat.transcript.toPlainText()
    left_out = text.split("Claims left out", 1)
    assert len(left_out) == 2 and "30 minutes" in left_out[0]
    assert "last reviewed in spring" not in left_out[0]
    assert "last reviewed in spring" in left_out[1] and "not an excerpt of this run" in left_out[1]
    shoot(window, "research-3-left-out.png", tmp_path)
