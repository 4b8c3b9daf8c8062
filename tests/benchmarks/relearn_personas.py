"""Learn the facts of persona memories again from their saved conversations, with today's
engine, without answering anything: what a feed (eval_personas.py) would learn, in a third
of its time, so a change to learning is measured on the same turns. Each turn is learned
at its own time, in order; the conversations are copied as they are. Prints what each turn
taught; asserts nothing.

    .venv/bin/python tests/benchmarks/relearn_personas.py --base-url http://127.0.0.1:8089/v1 \\
        --from /tmp/personas-mem --to /tmp/personas-mem2 [--personas keziah]
    .venv/bin/python tests/benchmarks/eval_personas.py --base-url … --memories /tmp/personas-mem2 \\
        --skip-feed --half test

With --sessions there is no memory to learn again from: each persona's turns are learned
straight from tests/personas/<name>/sessions.json, at the times a feed gives them, into a
new memory's facts (no conversation is saved, nothing is answered), and the facts are
judged as eval_personas.py judges them (expected facts found, replaced or retracted values
still asserted): the learning alone, in a sixth of a feed's time.

    .venv/bin/python -u tests/benchmarks/relearn_personas.py --base-url http://127.0.0.1:8089/v1 \\
        --sessions --to /tmp/personas-facts [--personas keziah]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.chats.record import parse  # noqa: E402
from gam_desktop.engine.facts.learn import Learned, learn  # noqa: E402
from gam_desktop.engine.facts.record import read_facts  # noqa: E402
from gam_desktop.engine.llm.client import LLMClient  # noqa: E402
from gam_desktop.engine.llm.settings import CHAT_TEMPERATURE, LLMSettings  # noqa: E402
from gam_desktop.engine.models import META_FILE, GamMeta  # noqa: E402


def relearn(llm: LLMClient, source: Path, target: Path) -> tuple[int, int]:
    """`source`'s conversations copied into `target` (made anew) and their facts learned
    again there; (facts now, LLM calls)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("facts", ".gam"))
    files = (target / "conversations").rglob("*.md")
    records = sorted((parse(p.read_text(encoding="utf-8")) for p in files), key=lambda r: r.started)
    calls = 0
    for record in records:
        for number, turn in enumerate(record.turns, 1):
            known = read_facts(target)
            learned = learn(llm, turn.question, known, record.id, number, now=turn.time)
            calls += learned.calls
            write_learned(target, learned)
            taught = learned.summary() if learned else "nothing"
            print(f"  [{turn.time:%Y-%m-%d}] {turn.question[:60]!r}: {taught}", flush=True)
    return len(read_facts(target)), calls


def learn_sessions(llm: LLMClient, persona: dict, target: Path) -> tuple[int, int]:
    """`persona`'s user turns learned in order, each at its time, into `target`'s facts
    (made anew); (facts now, LLM calls)."""
    from tests.benchmarks.eval_personas import TURN_MINUTES, session_start

    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    (target / META_FILE).write_text(GamMeta().model_dump_json(indent=2) + "\n", encoding="utf-8")
    calls = 0
    for session in persona["sessions"]:
        for number, text in enumerate(session["turns"], 1):
            at = session_start(session) + timedelta(minutes=TURN_MINUTES * (number - 1))
            learned = learn(llm, text, read_facts(target), session["date"], number, now=at)
            calls += learned.calls
            write_learned(target, learned)
            taught = learned.summary() if learned else "nothing"
            print(f"  [{session['date']}] {text[:60]!r}: {taught}", flush=True)
    return len(read_facts(target)), calls


def write_learned(target: Path, learned: Learned) -> None:
    """`learned`'s changes written into the memory at `target`, as the app's commit would
    (without git)."""
    changes = learned.changes()
    for rel, text in changes.writes.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
    for rel in changes.deletes:
        (target / rel).unlink(missing_ok=True)


def judged(persona: dict, memory: Path) -> str:
    """What eval_personas.py says of the facts: found of expected, values still asserted."""
    from tests.benchmarks.eval_personas import judge_facts, stored_facts

    facts = stored_facts(memory)
    if facts is None:
        return "the facts cannot be read"
    said = judge_facts(*facts, persona)
    lines = [
        f"  expected facts {len(said['found'])}/{said['expected']}, missing {said['missing']}",
        f"  identity right: {said['identity_right']}; {said['stored']} current, "
        f"{said['tombstones']} tombstones",
    ]
    lines += [f"  still asserted ({a['rule']}): {a['fact']}" for a in said["still_asserted"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--from", dest="source", type=Path)
    parser.add_argument("--sessions", action="store_true", help="learn from sessions.json")
    parser.add_argument("--to", dest="target", type=Path, required=True)
    parser.add_argument("--personas", help="comma-separated (default: every memory in --from)")
    args = parser.parse_args(argv)
    # the chat role's settings, as the app learns: temperature 0 (CHAT_TEMPERATURE)
    settings = LLMSettings(base_url=args.base_url, model=args.model, workers=1)
    llm = LLMClient(settings.model_copy(update={"temperature": CHAT_TEMPERATURE}))
    wanted = args.personas.split(",") if args.personas else None
    if args.sessions:
        from tests.benchmarks.eval_personas import load_persona, personas

        for name in personas():
            if wanted is None or name in wanted:
                started = time.perf_counter()
                persona = load_persona(name)
                facts, calls = learn_sessions(llm, persona, args.target / name)
                seconds = time.perf_counter() - started
                print(f"{name}: {facts} facts, {calls} LLM calls, {seconds:.0f} s", flush=True)
                print(judged(persona, args.target / name), flush=True)
        return 0
    if args.source is None:
        parser.error("give --from, or --sessions")
    for source in sorted(p for p in args.source.iterdir() if p.is_dir()):
        if wanted is None or source.name in wanted:
            started = time.perf_counter()
            facts, calls = relearn(llm, source, args.target / source.name)
            seconds = time.perf_counter() - started
            print(f"{source.name}: {facts} facts, {calls} LLM calls, {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
