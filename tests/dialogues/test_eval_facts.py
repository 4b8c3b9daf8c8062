"""The dialogue evaluation (tests/benchmarks/eval_facts.py) with the scripted server: its
judge, and the whole persona learned end to end (extraction by the scripted server's
rules, reconciliation by the engine, every turn committed)."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gam_desktop.engine.facts.record import Fact

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "eval_facts.py"
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@pytest.fixture(scope="module")
def ev():
    spec = importlib.util.spec_from_file_location("eval_facts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_facts"] = module
    spec.loader.exec_module(module)
    return module


def made(n: int, statement: str, replaced_by: str = "", deleted: bool = False) -> Fact:
    return Fact(f"f-{n}", statement, "the user", "home", "c", 1, NOW, NOW,
                deleted=NOW if deleted else None, replaced_by=replaced_by)  # fmt: skip


def test_an_update_is_right_through_a_chain_of_replacements(ev) -> None:
    """Porto → "moved to Braga" → "lives in Braga": the home was updated right."""
    dialogue = {"expected_facts": [{"id": "home", "all": ["braga"]}],
                "forbidden_current": [], "deletes": [],
                "updates": [{"id": "home", "old": ["porto"], "new": ["braga"]}]}  # fmt: skip
    current = [made(3, "The user lives in Braga.")]
    tombs = [
        made(1, "The user lives in Porto.", "f-2", deleted=True),
        made(2, "The user moved to Braga.", "f-3", deleted=True),
    ]
    assert ev.judge_facts(current, tombs, dialogue)["updates"] == [{"id": "home", "right": True}]
    tombs[1] = made(2, "The user moved to Braga.", "", deleted=True)  # the chain ends in nothing
    assert ev.judge_facts(current, tombs, dialogue)["updates"] == [{"id": "home", "right": False}]


def test_a_retraction_is_not_the_old_value_still_current(ev) -> None:
    dialogue = {"expected_facts": [{"id": "cat", "all": ["cat"]}], "updates": [],
                "forbidden_current": [{"id": "has-cat", "all": ["cat"], "any": ["has"]}],
                "deletes": [{"id": "cat", "old": ["cat"], "any": ["has", "adopted"]}]}  # fmt: skip
    tombs = [made(1, "The user adopted a cat.", deleted=True)]
    said = ev.judge_facts([made(2, "The user no longer has the cat.")], tombs, dialogue)
    assert said["deletes"] == [{"id": "cat", "right": True}] and said["stale_current"] == []
    kept = ev.judge_facts([made(2, "The user has a cat.")], tombs, dialogue)
    assert kept["deletes"] == [{"id": "cat", "right": False}] and kept["stale_current"]


@pytest.mark.timeout(600)
def test_the_persona_is_learned_with_the_scripted_server(ev, tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.json"
    assert ev.main(["--scripted", "--no-questions", "--json-out", str(out)]) == 0
    facts = json.loads(out.read_text())["facts"]
    assert facts["missing"] == [] and facts["stale_current"] == []
    assert all(u["right"] for u in facts["updates"]), facts["updates"]
    assert all(d["right"] for d in facts["deletes"]), facts["deletes"]
    assert "quoted-rent" not in json.dumps(facts)  # the pasted e-mail taught nothing
