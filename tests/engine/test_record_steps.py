"""A saved turn keeps how its answer was found (issue 39): its steps, its sources' documents
and pages, and whether the person told something rather than asked; a reopened conversation
showed none of it. A step quoting "-->" cannot end the turn's marker comment."""

from __future__ import annotations

from gam_desktop.engine.chats.record import Turn, new_record, parse, render
from gam_desktop.engine.models import Citation


def test_steps_citations_and_statements_survive_the_file() -> None:
    record = new_record("When was BERT released?")
    steps = ['1. cat("README.md") -> # Mem (+8 lines)', '2. cat("x.md") -> <!-- a --> b']
    cited = Citation(path="x.md", source="handbook.pdf", span=[10, 90], pages=[2, 3])
    record.turns.append(
        Turn(
            record.started,
            "When was BERT released?",
            "In 2018.",
            ["x.md"],
            0.6,
            steps=steps,
            citations=[cited],
        )
    )
    record.turns.append(Turn(record.started, "I live in Porto.", "Noted.", statement=True))
    text = render(record)
    marker = next(line for line in text.splitlines() if line.startswith("<!-- turn {"))
    assert marker.count("-->") == 1  # only its own end
    first, second = parse(text).turns
    assert first.steps == steps and first.citations == [cited]
    assert second.statement and second.confidence is None and not second.steps
    assert "*Sources:" not in text.split("I live in Porto.")[1]  # nothing said of a statement
