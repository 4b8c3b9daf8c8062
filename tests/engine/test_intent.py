"""What a chat message asks (issue 12): "I live in Porto. What is the launch planned
with?" asks only its question; "My sister is Anne." asks nothing."""

from __future__ import annotations

import pytest

from gam_desktop.engine.chats.intent import is_statement, question_part


@pytest.mark.parametrize(
    ("message", "asked"),
    [
        ("I live in Porto. What is the launch planned with?", "What is the launch planned with?"),
        ("Where is it? And when?", "Where is it? And when?"),
        ("Summarize the launch plan.", "Summarize the launch plan."),  # no "?": all of it
        (  # a full stop inside the question does not cut it
            "What is the escalation time at Borealis Inc. for P1 incidents?",
            "What is the escalation time at Borealis Inc. for P1 incidents?",
        ),
        ("What changed in version 2.1 of Osprine?", "What changed in version 2.1 of Osprine?"),
    ],
)
def test_the_question_part(message: str, asked: str) -> None:
    assert question_part(message) == asked


@pytest.mark.parametrize(
    ("message", "statement"),
    [
        ("My sister is Anne.", True),
        ("I moved to Braga last week.", True),
        ("We adopted a cat.", True),
        ("I want to know the launch date.", False),  # a request
        ("Please list the releases.", False),
        ("I live in Porto. Where is the office?", False),  # it asks something
        ("Summarize the launch plan.", False),  # not about the user
    ],
)
def test_a_statement(message: str, statement: bool) -> None:
    assert is_statement(message) is statement
