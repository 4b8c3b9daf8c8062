"""The evaluation records each draft once, under its own question: a second set's recorder
wrapped the first one's, which then filed every later draft under its last question, and
the checks replayed offline (ablate_checks.py) read other questions' drafts."""

from __future__ import annotations

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
