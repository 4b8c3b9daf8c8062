"""A measure asked of one named document, answered in the chat from the document's own
sentence (issue 10): the value, the document and its sentence, with the source to open,
in one reading call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.test_answers import built_policies
from tests.gui.test_conversations import ask, transcript
from tests.gui.test_main_window import idle, wait
from tests.gui.test_research import shoot

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def memory(make_workflow, tmp_path: Path) -> Path:
    return built_policies(make_workflow, tmp_path).folder.root


def test_a_named_documents_value_is_shown_quoted_with_its_source(
    qtbot, window, memory, llm_server, tmp_path
) -> None:
    assert window.open_memory(memory)
    wait(qtbot, lambda: idle(window))
    before = len(llm_server.state.requests)
    ask(
        qtbot,
        window,
        "After how many minutes does an unacknowledged incident escalate at Borealis?",
    )
    shown = transcript(window)
    assert "45 minutes." in shown and "escalates to the secondary engineer after 45" in shown
    assert "30 minutes" not in shown.split("Borealis?")[-1]  # not Acme's value
    result = window.chat.turns[-1].result
    assert result is not None and result.sources and "borealis" in result.sources[0], result
    # one reading of the passages, beside the conversation's own bookkeeping
    asked = [r["task"] for r in llm_server.state.requests[before:]]
    assert asked.count("read") == 1 and "chat" not in asked, (asked, result)
    window.resize(1100, 700)
    assert shoot(window, "named-answer.png", tmp_path).stat().st_size > 0
