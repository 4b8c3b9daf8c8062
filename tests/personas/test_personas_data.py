"""The personas of issue 37 (tests/personas): the data are well formed and the evaluation
(tests/benchmarks/eval_personas.py) runs end to end against the scripted server."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gam_desktop.engine.chats.library import list_conversations
from tests.benchmarks import eval_personas as ev
from tests.benchmarks.eval_answers import Server, normalize, occurs
from tests.benchmarks.eval_facts import plain

NAMES = ev.personas()
BRIEF_KINDS = {"current", "on_date", "update", "retraction", "similar_names", "injection"}


def turns_of(name: str) -> list[str]:
    return [text for _day, text in ev.user_turns(ev.load_persona(name))]


def renderings(day: date) -> list[str]:
    """A date as a gold answer may write it."""
    d, m = day.day, f"{day:%B}"
    suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
    return [f"{d} {m}", f"{m} {d}", f"{d}{suffix} {m}", f"{m} {d}{suffix}", day.isoformat()]


def said(gold: str, texts: list[str]) -> bool:
    return any(occurs(gold, normalize(t)) for t in texts)


def test_there_are_three_personas_or_more() -> None:
    assert len(NAMES) >= 3, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_sessions_are_dated_in_order_over_weeks(name: str) -> None:
    persona = ev.load_persona(name)
    sessions = persona["sessions"]
    days = [date.fromisoformat(s["date"]) for s in sessions]
    assert len(sessions) >= 8
    assert all(a < b for a, b in itertools.pairwise(days)), days
    assert (days[-1] - days[0]).days >= 35  # several weeks
    for session in sessions:
        assert 5 <= len(session["turns"]) <= 9, session["date"]
        assert all(isinstance(t, str) and t.strip() for t in session["turns"])
        ev.session_start(session)  # the time parses
    assert ev.ask_time(persona).date() == days[-1] + timedelta(days=1)


@pytest.mark.parametrize("name", NAMES)
def test_each_persona_holds_what_the_brief_asks(name: str) -> None:
    """An injected instruction in pasted text, a retraction, the person's name."""
    text = plain("\n".join(turns_of(name)))
    assert "ignore previous instructions" in text
    assert "forget what" in text and "no longer true" in text
    persona = ev.load_persona(name)
    assert plain(persona["name"].split()[0]) in plain(turns_of(name)[0])


@pytest.mark.parametrize("name", NAMES)
def test_questions_are_well_formed(name: str) -> None:
    questions = ev.load_questions(name)
    assert len(questions) >= 20
    kinds = Counter(q["kind"] for q in questions)
    assert set(kinds) <= set(ev.KINDS), kinds
    assert BRIEF_KINDS | {"never_said"} <= set(kinds), kinds
    assert kinds["never_said"] >= 2 and kinds["similar_names"] >= 2
    for q in questions:
        assert q["question"].strip().endswith("?"), q["id"]
        if q["kind"] == "never_said":
            assert q.get("abstain") is True and not q.get("answer_any") and not q.get("answer_all")
        else:
            assert not q.get("abstain"), q["id"]
            assert q.get("answer_any") or q.get("answer_all"), q["id"]


def test_question_ids_are_unique_across_personas() -> None:
    ids = [q["id"] for name in NAMES for q in ev.load_questions(name)]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]


@pytest.mark.parametrize("name", NAMES)
def test_every_gold_answer_was_said_by_the_person(name: str) -> None:
    """Each answerable question's gold (one alternative of `answer_any`, one of each item of
    `answer_all`) is in some user turn, or in the turns of the session it names (`date`),
    or is that session's date; a gold answer never names one of its forbidden values."""
    persona = ev.load_persona(name)
    texts = turns_of(name)
    sessions = {s["date"]: s["turns"] for s in persona["sessions"]}
    for q in ev.load_questions(name):
        if q.get("abstain"):
            continue
        groups = ([q["answer_any"]] if q.get("answer_any") else []) + [
            g if isinstance(g, list) else [g] for g in q.get("answer_all", [])
        ]
        where = texts
        dates: list[str] = []
        if q.get("date"):
            assert q["date"] in sessions, q["id"]
            where = sessions[q["date"]]
            dates = renderings(date.fromisoformat(q["date"]))
        for group in groups:
            assert any(said(g, where) or g in dates for g in group), (q["id"], group)
            for gold in group:
                assert not any(occurs(bad, normalize(gold)) for bad in q.get("answer_none", [])), (
                    q["id"],
                    gold,
                )
        if q["kind"] == "on_date":
            assert q.get("date"), q["id"]


@pytest.mark.parametrize("name", NAMES)
def test_never_said_is_never_said(name: str) -> None:
    text = plain("\n".join(turns_of(name)))
    for q in ev.load_questions(name):
        for word in q.get("absent", []):
            assert plain(word) not in text, (q["id"], word)


@pytest.mark.parametrize("name", NAMES)
def test_fact_rules_are_plain_and_about_what_was_said(name: str) -> None:
    """Rules are compared with facts lowercased and without accents (eval_facts.matches);
    an expected fact's words are the person's own."""
    persona = ev.load_persona(name)
    text = plain("\n".join(turns_of(name)))
    rules = persona["expected_facts"] + persona["not_current"]
    assert len({r["id"] for r in rules}) == len(rules)
    assert any(r["id"] == "identity" for r in persona["expected_facts"])
    assert any(r["id"] == "identity-other" for r in persona["not_current"])
    for rule in rules:
        for word in rule.get("all", []) + rule.get("any", []) + rule.get("none", []):
            assert word == plain(word), (rule["id"], word)
    for rule in persona["expected_facts"]:
        assert all(w in text for w in rule.get("all", [])), rule["id"]
        assert not rule.get("any") or any(w in text for w in rule["any"]), rule["id"]


def test_the_splits_cover_every_question_once_by_kind() -> None:
    """Each batch of questions (`batch`, 1 when absent) was split on its own, once, with the
    fixed seed: questions added later never moved an earlier one between halves."""
    splits = ev.load_splits()
    assert sorted(splits) == sorted(NAMES)
    for name in NAMES:
        questions = ev.load_questions(name)
        dev, test = set(splits[name]["dev"]), set(splits[name]["test"])
        assert not dev & test
        assert dev | test == {q["id"] for q in questions}
        made: dict[str, list[str]] = {"dev": [], "test": []}
        for batch in sorted({q.get("batch", 1) for q in questions}):
            these = [q for q in questions if q.get("batch", 1) == batch]
            for half, ids in ev.halves(these, ev.SEED).items():  # the fixed seed made them
                made[half] += ids
            kinds = Counter(q["kind"] for q in these)
            for kind, n in kinds.items():
                in_test = sum(q["kind"] == kind and q["id"] in test for q in these)
                assert in_test == (n + 1) // 2, (name, batch, kind)
        assert splits[name] == {half: sorted(ids) for half, ids in made.items()}


# -- the evaluation's parts ---------------------------------------------------------------


def test_an_abstention_counts_only_for_never_said() -> None:
    never = {"id": "n", "kind": "never_said", "abstain": True, "question": "?"}
    asked = {"id": "a", "kind": "update", "question": "?", "answer_any": ["5 May"],
             "answer_none": ["21 April"]}  # fmt: skip
    assert ev.verdict(never, "You haven’t told me that.")["correct"]
    assert ev.verdict(never, "The memory does not say.")["correct"]
    assert not ev.verdict(never, "Your blood type is O negative.")["correct"]
    assert not ev.verdict(asked, "You haven't told me that.")["correct"]
    assert ev.verdict(asked, "It is on 5 May at 8:15.")["correct"]
    wrong = ev.verdict(asked, "It is on 5 May or 21 April.")
    assert not wrong["correct"] and wrong["forbidden"] == ["21 April"]


def test_the_clock_sets_the_engines_now_and_gives_it_back() -> None:
    from gam_desktop.engine.models import utc_now

    at = datetime(2026, 3, 2, 9, 5, tzinfo=UTC)
    with ev.clock(at):
        assert utc_now() == at
        assert datetime.now(UTC) != at  # only the engine's clock
    assert utc_now() != at


def test_the_transcript_baseline_drops_the_oldest_turns_that_do_not_fit() -> None:
    persona = ev.load_persona(NAMES[0])
    server = Server("http://127.0.0.1:9/v1", "none")
    today = ev.ask_time(persona)
    whole = ev.TranscriptBaseline(persona, server, today, 32768)
    assert whole.dropped == 0 and whole.turns == len(ev.user_turns(persona))
    small = ev.TranscriptBaseline(persona, server, today, 1500)
    assert 0 < small.dropped < small.turns
    last_day, last_turn = ev.user_turns(persona)[-1]
    assert small.transcript.endswith(f"[{ev.said_on(last_day)}] {last_turn}")
    assert ev.said_on(ev.user_turns(persona)[0][0]) not in small.transcript


def test_bm25_finds_the_turns_of_a_date() -> None:
    persona = ev.load_persona("rosalind")
    bm25 = ev.TurnsBM25(persona, Server("http://127.0.0.1:9/v1", "none"), ev.ask_time(persona))
    hits = bm25.retrieve("What did I tell you I had bought, on 23 February?")
    assert any("smoker" in text for _day, text in hits)


# -- end to end -----------------------------------------------------------------------------


@pytest.mark.timeout(900)
def test_the_evaluation_runs_end_to_end_with_the_scripted_server(tmp_path: Path) -> None:
    """Three sessions of one persona through gam-request --conversation at their dates, then
    one question of three kinds asked of the three systems."""
    out = tmp_path / "report.json"
    code = ev.main(
        ["--scripted", "--personas", "rosalind", "--max-sessions", "3", "--half", "all",
         "--questions", "ro-current-voice,ro-date-bought,ro-never-blood",
         "--memories", str(tmp_path / "memories"), "--json-out", str(out)]
    )  # fmt: skip
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))["reports"][0]
    persona = ev.load_persona("rosalind")
    sessions = persona["sessions"][:3]
    assert len(report["turns"]) == sum(len(s["turns"]) for s in sessions)
    assert not [t for t in report["turns"] if t["error"]]
    assert sum(t["calls"] for t in report["turns"]) > 0
    # The clock: each session is one conversation started at its time, every fact is dated
    # on a session's day.
    memory = tmp_path / "memories" / "rosalind"
    started = sorted(c.started for c in list_conversations(memory))
    assert started == [ev.session_start(s) for s in sessions]
    days = {s["date"] for s in sessions}
    facts = report["facts"]
    assert facts["stored"] >= 1 and isinstance(facts["identity_right"], bool)
    assert {f["created"][:10] for f in facts["current"]} <= days
    assert report["asked_on"].startswith("2026-02-24")
    assert report["transcript"]["dropped_oldest"] == 0
    for system in ev.SYSTEMS:
        outcomes = report["outcomes"][system]
        assert [o["id"] for o in outcomes] == [
            "ro-current-voice",
            "ro-date-bought",
            "ro-never-blood",
        ]
        assert not [o for o in outcomes if o["error"]], outcomes
        if system != "project":  # one call each; the project may answer with none
            assert all(o["calls"] == 1 for o in outcomes), outcomes
        assert report["summaries"][system]["never_said"] == 1
    # Each question was asked in a copy: the memory holds only the sessions' conversations.
    assert len(list_conversations(memory)) == len(sessions)
