"""The evaluation records each draft once, under its own question: a second set's recorder
wrapped the first one's, which then filed every later draft under its last question, and
the checks replayed offline (ablate_checks.py) read other questions' drafts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gam_desktop.engine.answering import pipeline
from gam_desktop.engine.answering.passages import Passage
from gam_desktop.engine.answering.reading import Reading
from gam_desktop.engine.progress import CancelToken
from tests.benchmarks.eval_corpora import Readings
from tests.fakes import FakeLLM

pytestmark = pytest.mark.timeout(60)


def test_each_set_records_its_own_drafts_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "read", pipeline.read)  # restored after the test
    llm = FakeLLM({Reading: Reading(answer="42.", passages=[1])})
    shown = [Passage(1, "a.md", "a", "a", "The answer is 42.")]
    first, second = Readings(), Readings()  # two sets, in the order an evaluation runs them
    first.current, second.current = "first set's question?", "second set's question?"
    pipeline.read(llm, "second set's question?", shown, CancelToken())
    assert dict(first.by_question) == {}
    assert [e["reading"]["answer"] for e in second.by_question["second set's question?"]] == ["42."]


def test_a_persona_run_is_replayed_with_the_persona_scoring(tmp_path: Path) -> None:
    """ablate_checks reads eval_personas' reports too: a never-said question is right only
    when the replayed answer abstains (the corpora scorer does not know its id)."""
    import json

    from tests.benchmarks.ablate_checks import effects

    question = "What is my blood type?"  # ro-never-blood: never said
    shown = Passage(1, "facts/gp.md", "a fact", "", "Halden is my GP.")
    invented = {"answer": "Halden.", "passages": [1], "found": True}
    report = {
        "persona": "rosalind",
        "memory": str(tmp_path),
        "outcomes": {"project": [{"id": "ro-never-blood", "question": question}]},
        "readings": {question: [{"passages": [shown.__dict__], "reading": invented}]},
    }
    recorded = tmp_path / "run.json"
    recorded.write_text(json.dumps({"reports": [report]}), encoding="utf-8")
    variants = {"all": pipeline.CHECKS, "none": ()}
    [(name, right)] = list(effects([str(recorded)], variants))
    assert name == "rosalind"
    assert right == {"ro-never-blood": {"all": False, "none": False}}
    report["readings"][question][0]["reading"] = {"answer": "", "passages": [], "found": False}
    recorded.write_text(json.dumps({"reports": [report]}), encoding="utf-8")
    [(_, right)] = list(effects([str(recorded)], variants))
    assert right == {"ro-never-blood": {"all": True, "none": True}}
