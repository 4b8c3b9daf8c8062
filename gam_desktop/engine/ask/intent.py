"""What a chat message asks: its question sentences, or nothing (a statement).

In a conversation people mix what they tell the memory with what they ask it: "I live in
Porto. What is the launch planned with?" asks only the second sentence, so only its names
are searched for (Porto is not something the memory must mention); "My sister is Anne."
asks nothing and is acknowledged, not answered with "the memory does not mention Anne".
"""

from __future__ import annotations

import re

_QUESTION = re.compile(r"[^.!?\n]*\?")
_FIRST_PERSON = re.compile(r"^\s*(i|i'm|i've|i'd|i'll|my|we|we're|we've|our)\b", re.IGNORECASE)
_REQUEST = re.compile(
    r"^\s*(i (want|would like|need|wonder|am looking|was wondering)|i'd like|i'm looking|"
    r"i'm wondering|we (want|need|would like)|please|can you|could you|tell me|show me)\b",
    re.IGNORECASE,
)


def question_part(message: str) -> str:
    """The message's question sentences ("…?"), or the whole message when it has none."""
    asked = [q.strip() for q in _QUESTION.findall(message) if q.strip(" ?")]
    return " ".join(asked) if asked else message


def is_statement(message: str) -> bool:
    """Something the user tells rather than asks: no question mark, first person, not a
    request ("I want to know…", "Please…")."""
    return "?" not in message and bool(_FIRST_PERSON.match(message)) and not _REQUEST.match(message)
