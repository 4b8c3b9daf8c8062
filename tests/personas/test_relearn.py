"""relearn_personas.py learns a memory's facts again from its saved conversations: the
conversations copied as they are, the facts made anew, each dated at its own turn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gam_desktop.engine.chats.record import Turn, new_record, render
from gam_desktop.engine.facts.record import read_facts
from gam_desktop.engine.llm.client import LLMClient
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.benchmarks.relearn_personas import judged, learn_sessions, relearn

SAID = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)


@pytest.mark.timeout(300)
def test_the_facts_are_learned_again_at_their_turns_time(tmp_path: Path) -> None:
    source = tmp_path / "fed" / "iris"
    record = new_record("I live in Porto.", now=SAID)
    record.turns.append(Turn(SAID, "I live in Porto.", "Noted.", [], None))
    record.turns.append(Turn(SAID + timedelta(minutes=2), "What is my city?", "Porto.", [], None))
    (source / record.path).parent.mkdir(parents=True)
    (source / record.path).write_text(render(record), encoding="utf-8")
    stale = source / "facts" / "home" / "old.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("not a fact of this engine\n", encoding="utf-8")
    target = tmp_path / "again" / "iris"
    with RunningServer() as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted", workers=1))
        facts, calls = relearn(llm, source, target)
    learned = read_facts(target)
    assert facts == len(learned) >= 1 and calls >= 1
    assert all(f.created == SAID and f.source_conversation == record.id for f in learned)
    assert (target / record.path).read_text(encoding="utf-8") == render(record)
    assert not (target / "facts" / "home" / "old.md").exists()


@pytest.mark.timeout(300)
def test_sessions_are_learned_at_their_times_and_judged(tmp_path: Path) -> None:
    """--sessions: no memory to learn again from; each turn learned at the time a feed
    gives it, then the facts judged as eval_personas.py judges them."""
    persona = {
        "sessions": [
            {"date": "2026-03-02", "time": "18:00", "turns": ["I live in Porto."]},
            {"date": "2026-03-09", "time": "18:00", "turns": ["Hello.", "I live in Braga now."]},
        ],
        "expected_facts": [{"id": "home", "all": ["braga"]}],
        "not_current": [{"id": "old-home", "all": ["porto"]}],
    }
    target = tmp_path / "iris"
    with RunningServer() as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted", workers=1))
        facts, calls = learn_sessions(llm, persona, target)
    learned = read_facts(target)
    assert facts == len(learned) >= 1 and calls >= 2
    later = datetime(2026, 3, 9, 18, 2, tzinfo=UTC)  # the second session's second turn
    assert any(f.created == later and "Braga" in f.statement for f in learned)
    report = judged(persona, target)
    assert "expected facts 1/1" in report and "old-home" not in report
