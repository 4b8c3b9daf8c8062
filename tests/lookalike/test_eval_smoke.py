"""Smoke test of the look-alike evaluation (tests/benchmarks/eval_answers.py): three
documents, three questions, the scripted server in-process. It checks the report's shape,
the scorer and the citation check, not the answers' quality."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[0] / "benchmarks" / "eval_answers.py"
DOCS = [
    "tallowmere-oncall-policy.md",
    "brindlewave-oncall-policy.md",
    "lumenvault-4.0-release-notes.md",
]
QUESTIONS = [
    "oncall-escalation-tallowmere",
    "current-interval-default",
    "unanswerable-lumenvault-5.0",
]


def load_script():
    spec = importlib.util.spec_from_file_location("eval_answers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_answers"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ev():
    return load_script()


def test_corpus_and_gold_are_consistent(ev):
    questions = ev.load_questions()
    documents = ev.load_documents()
    docs = {p.name for p in (HERE / "docs").iterdir()}
    assert len(docs) >= 12 and set(documents) == docs
    assert len(questions) >= 24 and len({q["id"] for q in questions}) == len(questions)
    assert sum(q["kind"] == "unanswerable" for q in questions) >= 3
    for q in questions:
        assert set(q["source_docs"]) <= docs, q["id"]
        assert q.get("answer_any") or q.get("answer_all"), q["id"]
        if q["kind"] == "unanswerable":
            assert not q["source_docs"]
            continue
        # every gold answer is in its documents (so a system could find it)
        text = ev.normalize(" ".join((HERE / "docs" / d).read_text() for d in q["source_docs"]))
        items = q.get("answer_all", []) + ([q["answer_any"]] if q.get("answer_any") else [])
        for item in items:
            options = item if isinstance(item, list) else [item]
            assert any(ev.occurs(g, text) for g in options), (q["id"], options)
    for path in (HERE / "docs").iterdir():
        assert 300 <= len(path.read_text().split()) <= 900, path.name


def test_scorer(ev):
    questions = {q["id"]: q for q in ev.load_questions()}
    escalation = questions["oncall-escalation-tallowmere"]
    assert ev.score(escalation, "Tallowmere escalates after a 30-minute wait.")["correct"]
    assert ev.score(escalation, "After **30 mins**.")["correct"]
    assert not ev.score(escalation, "It escalates after 10 minutes.")["correct"]
    assert not ev.score(escalation, "After 130 minutes.")["correct"]
    fast = questions["oncall-fast-ack"]
    assert ev.score(fast, "Brindlewave (5 min) and Quillfern (3 min).")["correct"]
    every = ev.score(fast, "Brindlewave, Quillfern, Tallowmere and Osprine.")
    assert not every["correct"] and every["forbidden"] == ["Tallowmere", "Osprine"]
    puffins = questions["field-puffins-okafor-lind"]
    assert ev.score(puffins, "He counted 1315 burrows.")["correct"]
    assert not ev.score(puffins, "He counted 1,240 burrows.")["correct"]
    missing = questions["unanswerable-lumenvault-5.0"]
    assert ev.score(missing, "The memory does not contain anything about Lumenvault 5.0.")[
        "correct"
    ]
    assert ev.score(missing, "200 GB", confidence=0.1)["correct"]  # abstained by confidence
    assert not ev.score(missing, "200 GB", confidence=0.9)["correct"]
    assert ev.split_sources("After 30 minutes [2].\nSources: [2], [4]") == (
        "After 30 minutes.",
        [2, 4],
    )
    assert "scaffolding" in ev.flags_of("The top-level folders are: topic/. Try something else.")


@pytest.mark.timeout(60)
def test_evaluation_runs_on_the_scripted_server(ev, tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(HERE / "docs" / name, docs / name)
    chosen = [q for q in ev.load_questions() if q["id"] in QUESTIONS]
    questions_file = tmp_path / "questions.json"
    questions_file.write_text(json.dumps(chosen))
    memory = tmp_path / "memory"
    out = tmp_path / "report.json"
    args = ["--scripted", "--docs", str(docs), "--questions-file", str(questions_file)]
    args += ["--memory", str(memory), "--workers", "2", "--json-out", str(out)]
    assert ev.main(args) == 0
    printed = capsys.readouterr().out
    assert "== totals ==" in printed and "== memory quality ==" in printed
    report = json.loads(out.read_text())

    assert report["build"]["exit_code"] == 0 and report["build"]["calls"] > 0
    assert report["memory_quality"]["memories"] > 0
    assert 0 <= report["memory_quality"]["numbers_kept_micro"] <= 1
    for system in ("project", "baseline"):
        outcomes, summary = report[system]["outcomes"], report[system]["summary"]
        assert [o["id"] for o in outcomes] == [q["id"] for q in chosen]
        for o in outcomes:
            assert {"correct", "abstained"} <= set(o["verdict"]) and o["seconds"] >= 0
            # The project asks nothing about a name the memory never mentions (it abstains),
            # nor what the named document's own sentence settles ("read from the document").
            asked = o["usage"]["calls"] >= 1 and o["usage"]["prompt"] > 0
            settled = "read from the document named" in (o["extra"].get("notes") or "")
            assert asked or (system == "project" and (o["verdict"]["abstained"] or settled)), o
            assert {"total", "valid", "missing", "off_source"} <= set(o["citations"])
        unasked = sum(o["usage"]["calls"] == 0 for o in outcomes)  # unknown names, see above
        assert summary["questions"] == 3 and summary["calls"] >= 3 - unasked
        assert summary["prompt_tokens"] > 0 and summary["median_seconds"] >= 0
        assert set(summary["by_kind"]) == {"disambiguation", "latest", "unanswerable"}
    assert report["baseline"]["summary"]["calls"] == 3  # one call per question
    assert report["project"]["summary"]["citations_total"] >= 0

    # the citation check on the built memory: valid, from a look-alike, and made up
    index = ev.MemoryIndex(memory)
    by_doc: dict[str, str] = {}
    for path in memory.rglob("*.md"):
        doc = index.document_of(path)
        if doc and ".git" not in path.parts:
            by_doc.setdefault(doc, str(path.relative_to(memory)))
    question = next(q for q in chosen if q["id"] == "oncall-escalation-tallowmere")
    right, look_alike = (
        by_doc["tallowmere-oncall-policy.md"],
        by_doc["brindlewave-oncall-policy.md"],
    )
    check = ev.check_citations([right, look_alike, "nowhere/made_up.md"], question, index)
    assert (check["valid"], check["off_source"], check["missing"]) == (1, 1, 1)
    assert ev.check_citations([f"{right}#0-100"], question, index)["valid"] == 1
    baseline = ev.check_citations(["tallowmere-oncall-policy.md"], question, None, docs)
    assert baseline["all_valid"]

    # a saved report judged again gives the same verdicts
    again = ev.rescore(out, questions_file, docs, echo=False)
    for system in ("project", "baseline"):
        assert again[system]["summary"]["correct"] == report[system]["summary"]["correct"]
        assert (
            again[system]["summary"]["citations_valid"]
            == report[system]["summary"]["citations_valid"]
        )
