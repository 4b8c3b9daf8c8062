"""The evaluation corpora stay sound: every gold answer is verbatim in its documents as the
app reads them, and every set is split once into dev and test halves that never overlap."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.eval_corpora import SPLITS, halves, sets
from tests.corpora.check import check, genres


@pytest.mark.parametrize("genre", genres())
def test_every_gold_answer_is_written_in_its_documents(genre: str) -> None:
    assert check(genre) == []


def test_every_set_has_fixed_halves_that_cover_it_once() -> None:
    splits = json.loads(SPLITS.read_text(encoding="utf-8"))
    for name, (_docs, questions_file) in sets().items():
        ids = {q["id"] for q in json.loads(questions_file.read_text(encoding="utf-8"))}
        dev, test = set(splits[name]["dev"]), set(splits[name]["test"])
        assert not dev & test and dev | test == ids, name


def test_the_halves_hold_every_kind_and_do_not_depend_on_order() -> None:
    questions = [{"id": f"q{n}", "kind": "ab"[n % 2]} for n in range(10)]
    split = halves(questions)
    assert split == halves(list(reversed(questions)))
    kinds = {q["id"]: q["kind"] for q in questions}
    assert {kinds[i] for i in split["dev"]} == {kinds[i] for i in split["test"]} == {"a", "b"}
