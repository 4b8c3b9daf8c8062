"""What a chat message asks (issue 12): "I live in Porto. What is the launch planned
with?" asks only its question; "My sister is Anne." asks nothing."""

from __future__ import annotations

import pytest

from gam_desktop.engine.chats.intent import is_statement, question_part, told_part


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
        ("What changed in version 2.1 of Pelliton?", "What changed in version 2.1 of Pelliton?"),
    ],
)
def test_the_question_part(message: str, asked: str) -> None:
    assert question_part(message) == asked


@pytest.mark.parametrize(
    ("message", "statement"),
    [
        ("My sister is Anne.", True),
        ("I moved to Leiden last week.", True),
        ("We adopted a cat.", True),
        ("I want to know the launch date.", False),  # a request
        ("Please list the releases.", False),
        ("I live in Porto. Where is the office?", False),  # it asks something
        ("Summarize the launch plan.", False),  # a verb addressed to the assistant
        # about someone or something, written as a sentence: told
        ("Bram moved to Tallinn last week.", True),
        ("The bakery on Quay Street closes at six now!", True),
        ("Forget what I said about the pottery class, it was cancelled.", True),
        ("Compare the two warranty periods.", False),
        ("Name every release that changed the cache.", False),
        ("what time does the office open.", False),  # a question word without its "?"
        ("Is there a limit on uploads.", False),  # an auxiliary before its subject
        ("oven repair Lars", False),  # a search, not a sentence
        # a reminder before it tells asks nothing; one before a question, or alone, asks
        ("You know how I said I swim on Tuesdays? That's no longer true.", True),
        ("Remember that I said the van was blue? It's green.", True),
        ("Do you remember when I said the van was blue? When was that?", False),
        ("Do you remember what I said about the van?", False),
        # what is pasted is shared: the person's own words around it say what they do
        ("Here's the club's notice, I'll paste it:\n---\nAre you coming? Reply.\n---", True),
        ("The club wrote:\n```\nMeet at six?\n```\nI'll go.", True),
        ("What does this notice mean?\n---\nMeet at six.\n---", False),
        ("Can you summarize it:\n---\nMeet at six.\n---", False),
        ("Summarize this:\n---\nMeet at six.", False),
    ],
)
def test_a_statement(message: str, statement: bool) -> None:
    assert is_statement(message) is statement


@pytest.mark.parametrize(
    ("message", "tells"),
    [
        ("I need to renew the boat's safety certificate before 20 January.", True),
        ("We need to buy a new van before the spring.", True),
        ("I want to move to Lisbon next year.", True),
        ("I need to know the warranty period.", False),
        ("I would like to see what the memory has on Porto.", False),
        ("I need the warranty period for the Model X.", False),
        ("I want you to list my facts.", False),
    ],
)
def test_what_the_person_has_to_do_is_told_wanting_to_learn_is_asked(
    message: str, tells: bool
) -> None:
    assert is_statement(message) is tells
    assert bool(told_part(message)) is tells
