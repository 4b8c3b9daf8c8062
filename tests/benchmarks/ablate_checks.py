"""The measured effect of each check of the general answering pipeline, with no model call:
the drafts an eval_corpora.py or eval_personas.py run recorded (its --json-out) are checked
again with every check, then with each one switched off, and scored as the eval scores them.
Prints a table; asserts nothing.

    .venv/bin/python tests/benchmarks/ablate_checks.py /tmp/evalout/dev-*.json

A check's effect is the score with it minus the score without it: what it pays.
(Only recorded drafts are replayed: a new answerer needs model calls.)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gam_desktop.engine.answering.checks import (  # noqa: E402
    CHECKS,
    Check,
    Draft,
    closest_sentences,
)
from gam_desktop.engine.answering.lexicon import NOT_CLEARLY, NOT_IN_MEMORY  # noqa: E402
from gam_desktop.engine.answering.passages import Passage, unknown_names  # noqa: E402
from gam_desktop.engine.answering.pipeline import (  # noqa: E402
    FROM_QUOTE,
    NOT_FOUND,
    check_draft,
    own_name,
)
from gam_desktop.engine.retrieval.tools import MemoryTools  # noqa: E402
from tests.benchmarks.eval_answers import score  # noqa: E402
from tests.benchmarks.eval_corpora import sets  # noqa: E402
from tests.benchmarks.eval_personas import load_questions as persona_questions  # noqa: E402
from tests.benchmarks.eval_personas import personas, verdict  # noqa: E402


def drafts(
    recorded: list[dict[str, Any]],
    question: str,
    unknown: frozenset[str] = frozenset(),
    own: frozenset[str] = frozenset(),
) -> list[Draft]:
    """The drafts of one question, in the order the answerers made them."""
    made = []
    for entry in recorded:
        if entry["reading"] is None:
            continue
        passages = [Passage(**p) for p in entry["passages"]]
        reading = entry["reading"]
        answer = reading["answer"] if reading.get("found", True) else ""
        quotes = [(q["passage"], q["text"]) for q in reading.get("quotes", [])]  # older runs
        cited = tuple(reading.get("passages", []))
        made.append(
            Draft(question, answer, quotes, passages, cited=cited, unknown=unknown, own_name=own)
        )
    return made


def replay(made: list[Draft], checks: tuple[Check, ...]) -> tuple[str, float]:
    """The answer text and confidence the pipeline gives with `checks`."""
    for draft in made:
        held = check_draft(draft, checks)
        if held is None:
            continue
        quoted = " ".join(s.sentence for s in held.support)
        if held.from_quote:
            return f"{NOT_CLEARLY} {quoted}", FROM_QUOTE
        return f"{held.answer} {quoted}", 0.8
    closest = closest_sentences(made[0].question, made[-1].passages) if made else []
    if closest and not made[0].unknown:  # as pipeline.answer shows them
        return f"{NOT_CLEARLY} {' '.join(s.sentence for s in closest)}", FROM_QUOTE
    return NOT_IN_MEMORY, NOT_FOUND


def judges() -> dict[str, Callable[[str, float], bool]]:
    """Each question's id and how its answer is scored, as eval_corpora.py and
    eval_personas.py score it: their --json-out files can both be replayed."""
    found: dict[str, Callable[[str, float], bool]] = {}
    for _docs, file in sets().values():
        for q in json.loads(file.read_text(encoding="utf-8")):
            found[q["id"]] = lambda text, conf, q=q: bool(score(q, text, conf)["correct"])
    for name in personas():
        for q in persona_questions(name):
            found[q["id"]] = lambda text, _conf, q=q: bool(verdict(q, text)["correct"])
    return found


def effects(
    paths: list[str], variants: dict[str, tuple[Check, ...]]
) -> Iterator[tuple[str, dict[str, dict[str, bool]]]]:
    """For each recorded set or persona: each question's rightness under each variant."""
    judge = judges()
    for path in paths:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
        # eval_corpora writes its reports, eval_personas them under "reports"
        for report in loaded["reports"] if isinstance(loaded, dict) else loaded:
            recorded = report.get("readings", {})
            outcomes = next(
                (o for n, o in report["outcomes"].items() if n in ("project", "project-general")),
                [],
            )
            tools = MemoryTools(Path(report["memory"]))
            own = own_name(tools)
            right: dict[str, dict[str, bool]] = {}
            for out in outcomes:
                unknown = frozenset(unknown_names(tools, out["question"]))
                made = drafts(recorded.get(out["question"], []), out["question"], unknown, own)
                for name, checks in variants.items():
                    text, confidence = replay(made, checks)
                    right.setdefault(out["id"], {})[name] = judge[out["id"]](text, confidence)
            yield report.get("set") or report["persona"], right


def main(paths: list[str]) -> int:
    variants = {"all checks": CHECKS}
    variants |= {f"without {c.name}": tuple(x for x in CHECKS if x is not c) for c in CHECKS}
    print(f"{'set':<10} " + "".join(f"{name:>30}" for name in variants))
    for name, right in effects(paths, variants):
        cells = [f"{sum(r[v] for r in right.values())}/{len(right)}" for v in variants]
        print(f"{name:<10} " + "".join(f"{c:>30}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
