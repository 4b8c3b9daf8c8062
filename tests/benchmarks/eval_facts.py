"""Evaluation of learning from conversations (issue 12) on a dialogue set. Prints figures.

    .venv/bin/python tests/benchmarks/eval_facts.py --scripted
    .venv/bin/python tests/benchmarks/eval_facts.py --base-url http://127.0.0.1:8089/v1 \
        --model qwen2.5-coder-1.5b-instruct [--timeout 300] [--json-out report.json]

The persona of tests/dialogues/persona.json talks to a new memory over five dated sessions
(each turn saved as a conversation turn at its date, then learned from); then:
- facts: expected facts found among the current ones (recall), current facts that are
  expected (precision), superseded or quoted values still current (must be none), updates
  recorded as tombstones with `replaced_by`, retractions no longer current;
- learning cost: LLM calls and tokens per turn (counted by a pass-through proxy);
- recall questions about the current state and the past, answered by the agent;
- the time to open a 1,000-turn conversation (load + working memory, no LLM).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
import unicodedata
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.chats import library as chats  # noqa: E402
from gam_desktop.engine.chats.conversation import working_memory  # noqa: E402
from gam_desktop.engine.chats.record import Turn, new_record, render  # noqa: E402
from gam_desktop.engine.facts.record import Fact  # noqa: E402
from gam_desktop.engine.llm import LLMSettings  # noqa: E402
from gam_desktop.engine.models import utc_now  # noqa: E402
from gam_desktop.engine.workflow import Workflow  # noqa: E402
from tests.benchmarks.eval_answers import CountingProxy  # noqa: E402

DIALOGUE = ROOT / "tests" / "dialogues" / "persona.json"
NOT_ASKED = "(not asked: this evaluation measures learning)"


def plain(text: str) -> str:
    """Lowercase without accents: "São João" matches "sao joao"."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def matches(statement: str, rule: dict[str, Any]) -> bool:
    text = plain(statement)
    return (
        all(w in text for w in rule.get("all", []))
        and (not rule.get("any") or any(w in text for w in rule["any"]))
        and not any(w in text for w in rule.get("none", []))
    )


def talk(workflow: Workflow, dialogue: dict[str, Any], proxy: CountingProxy) -> list[dict]:
    """Every session's turns, saved at their dates and learned from; per-turn costs."""
    turns = []
    now = utc_now()
    for session in dialogue["sessions"]:
        when = now - timedelta(days=session["days_ago"])
        conversation = None
        for i, message in enumerate(session["turns"]):
            at = when + timedelta(minutes=3 * i)
            saved = workflow.save_turn(message, NOT_ASKED, conversation, at=at)
            conversation = saved.conversation_id
            before = proxy.snapshot()
            started = time.perf_counter()
            learned = workflow.learn_from_turn(conversation, saved.turn, message, at=at)
            used = proxy.snapshot() - before
            turns.append(
                {
                    "message": message,
                    "summary": learned.summary() if learned else "nothing",
                    "added": [f.statement for f in learned.added],
                    "updated": [[o.statement, n.statement] for o, n in learned.updated],
                    "deleted": [f.statement for f in learned.deleted],
                    "problem": learned.problem,
                    "calls": used.calls,
                    "tokens": used.tokens,
                    "seconds": round(time.perf_counter() - started, 1),
                }
            )
            print(f"  [{session['days_ago']:>3} days ago] {message[:60]!r}: {turns[-1]['summary']}")
    return turns


NEGATION = re.compile(r"\b(no longer|not|never|anymore)\b|n't\b", re.IGNORECASE)


def negates(statement: str) -> bool:
    """ "The user no longer has the cat." says the old value is gone: it is not the old
    value still current."""
    return bool(NEGATION.search(statement))


def judge_facts(current: list[Fact], tombs: list[Fact], dialogue: dict[str, Any]) -> dict:
    expected = dialogue["expected_facts"]
    found = [e["id"] for e in expected if any(matches(f.statement, e) for f in current)]
    useful = [f for f in current if any(matches(f.statement, e) for e in expected)]
    stale = [
        {"rule": r["id"], "fact": f.statement}
        for r in dialogue["forbidden_current"]
        for f in current
        if matches(f.statement, r) and not negates(f.statement)
    ]
    by_id = {f.id: f for f in current}
    tomb_by_id = {t.id: t for t in tombs}

    def now_current(tomb: Fact) -> Fact | None:
        """The current fact a tombstone's replacements lead to (Porto → "moved to Braga"
        → "lives in Braga": the second update replaced the first replacement)."""
        seen = set()
        while tomb.replaced_by and tomb.replaced_by not in seen:
            seen.add(tomb.replaced_by)
            if tomb.replaced_by in by_id:
                return by_id[tomb.replaced_by]
            if tomb.replaced_by not in tomb_by_id:
                return None
            tomb = tomb_by_id[tomb.replaced_by]
        return None

    updates = []
    for rule in dialogue["updates"]:
        right = any(
            matches(t.statement, {"all": rule["old"]})
            and (successor := now_current(t)) is not None
            and matches(successor.statement, {"all": rule["new"]})
            for t in tombs
        )
        updates.append({"id": rule["id"], "right": right})
    deletes = []
    for rule in dialogue["deletes"]:
        gone = not any(
            matches(f.statement, {"all": rule["old"], "any": rule["any"]})
            and not negates(f.statement)  # "no longer has the cat" is the retraction itself
            for f in current
        )
        recorded = any(matches(t.statement, {"all": rule["old"]}) for t in tombs)
        deletes.append({"id": rule["id"], "right": gone and recorded})
    return {
        "expected": len(expected),
        "found": found,
        "missing": [e["id"] for e in expected if e["id"] not in found],
        "current": [f.statement for f in current],
        "tombstones": [[t.statement, t.replaced_by or None] for t in tombs],
        "recall": len(found) / len(expected),
        "precision": len(useful) / len(current) if current else 0.0,
        "stale_current": stale,
        "updates": updates,
        "deletes": deletes,
    }


def question_text(template: str, dialogue: dict[str, Any]) -> list[str]:
    """{date:N}, {iso:N} and {mdy:N}: the date N days ago as "14 September", "2026-09-14"
    and "September 14"."""
    out = template
    now = utc_now()
    for session in dialogue["sessions"]:
        day = now - timedelta(days=session["days_ago"])
        n = session["days_ago"]
        out = out.replace(f"{{date:{n}}}", f"{day.day} {day:%B}")
        out = out.replace(f"{{iso:{n}}}", f"{day:%Y-%m-%d}")
        out = out.replace(f"{{mdy:{n}}}", f"{day:%B} {day.day}")
    return [out]


def ask(workflow: Workflow, dialogue: dict[str, Any], proxy: CountingProxy) -> list[dict]:
    results = []
    for q in dialogue["questions"]:
        (text,) = question_text(q["q"], dialogue)
        gold = [question_text(g, dialogue)[0] for g in q["answer_any"]]
        before = proxy.snapshot()
        started = time.perf_counter()
        result = workflow.request(text)
        used = proxy.snapshot() - before
        answer = plain(result.answer)
        right = any(plain(g) in answer for g in gold) and not any(
            plain(w) in answer for w in q.get("answer_none", [])
        )
        results.append(
            {
                "id": q["id"],
                "kind": q["kind"],
                "question": text,
                "answer": result.answer,
                "sources": result.sources,
                "right": right,
                "calls": used.calls,
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
        print(f"  {'✓' if right else '✗'} {text}  →  {result.answer[:100]!r}")
    return results


def open_time(turns: int = 1000) -> float:
    """Milliseconds to open a `turns`-turn conversation: find, parse, working memory."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        record = new_record("A long conversation?", now=utc_now() - timedelta(days=30))
        for i in range(turns):
            when = record.started + timedelta(minutes=i)
            record.turns.append(Turn(when, f"Question {i}?", f"Answer {i}. " * 30, ["a.md"], 0.5))
        path = root / record.path
        path.parent.mkdir(parents=True)
        path.write_text(render(record), encoding="utf-8")
        started = time.perf_counter()
        loaded, _ = chats.load(root, record.id)
        working_memory(loaded)
        return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripted", action="store_true", help="the scripted server")
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--no-questions", action="store_true")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    dialogue = json.loads(DIALOGUE.read_text(encoding="utf-8"))
    with contextlib.ExitStack() as stack:
        if args.scripted:
            from gam_desktop.selfcheck.scripted_llm import RunningServer

            upstream, model = stack.enter_context(RunningServer()).base_url, "scripted"
        elif args.base_url and args.model:
            upstream, model = args.base_url, args.model
        else:
            parser.error("give --scripted, or --base-url and --model")
        proxy = stack.enter_context(CountingProxy(upstream))
        settings = LLMSettings(
            base_url=proxy.base_url, model=model, api_key="eval", timeout=args.timeout
        )
        memory = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "memory"
        memory.mkdir()
        workflow = Workflow(gam_dir=memory, settings=settings, chat_settings=settings)
        workflow.initialize()
        print(f"server {upstream}  model {model}  memory {memory}\n\n== sessions ==")
        turns = talk(workflow, dialogue, proxy)
        facts = judge_facts(workflow.facts(), workflow.facts(deleted=True), dialogue)
        print("\n== questions ==")
        questions = [] if args.no_questions else ask(workflow, dialogue, proxy)
        report = {
            "model": model,
            "turns": turns,
            "facts": facts,
            "questions": questions,
            "open_1000_turns_ms": round(open_time(), 1),
        }
    print_report(report)
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def print_report(report: dict[str, Any]) -> None:
    facts, turns, questions = report["facts"], report["turns"], report["questions"]
    print("\n== facts ==")
    print(f"  current: {facts['current']}")
    print(f"  tombstones (statement, replaced_by): {facts['tombstones']}")
    print(f"  recall     {len(facts['found'])}/{facts['expected']}  missing {facts['missing']}")
    print(f"  precision  {facts['precision']:.0%} of {len(facts['current'])} current facts")
    print(f"  stale or quoted values still current: {facts['stale_current'] or 'none'}")
    right = sum(u["right"] for u in facts["updates"])
    print(f"  updates right {right}/{len(facts['updates'])}: {facts['updates']}")
    right = sum(d["right"] for d in facts["deletes"])
    print(f"  retractions right {right}/{len(facts['deletes'])}")
    calls = [t["calls"] for t in turns]
    tokens = [t["tokens"] for t in turns]
    print("\n== learning cost ==")
    print(f"  LLM calls per turn: mean {sum(calls) / len(calls):.2f}, max {max(calls)}")
    print(f"  tokens per turn: mean {sum(tokens) / len(tokens):.0f}, max {max(tokens)}")
    print(f"  seconds per turn: mean {sum(t['seconds'] for t in turns) / len(turns):.1f}")
    if questions:
        print("\n== questions ==")
        for kind in ("current", "past"):
            of_kind = [q for q in questions if q["kind"] == kind]
            print(f"  {kind}: {sum(q['right'] for q in of_kind)}/{len(of_kind)} right")
    print(f"\n1,000-turn conversation opened in {report['open_1000_turns_ms']:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
