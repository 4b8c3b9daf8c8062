"""What a chat message asks: its question sentences, or nothing (a statement).

In a conversation people mix what they tell the memory with what they ask it: "I live in
Porto. What is the launch planned with?" asks only the second sentence, so only its names
are searched for (Porto is not something the memory must mention); "My sister is Anne."
asks nothing and is acknowledged, not answered with "the memory does not mention Anne".
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_FIRST_PERSON = re.compile(r"^\s*(i|i'm|i've|i'd|i'll|my|we|we're|we've|our)\b", re.IGNORECASE)
# "I need to know…" asks; "I need to return the books before 9 March" tells what
# the person has to do (a fact to keep): wanting or needing to do anything but learn
# something is their own plan, not a request.
_WANTS = r"(want|would like|need)(?! to (?!(know|find|see|learn|understand|check|ask|hear)\b))"
_REQUEST = re.compile(
    rf"^\s*(i ({_WANTS}|wonder|am looking|was wondering)|i'd like|i'm looking|"
    rf"i'm wondering|we {_WANTS}|please|can you|could you|tell me|show me)\b",
    re.IGNORECASE,
)


def question_part(message: str) -> str:
    """The message without the statements it makes before or after its question ("I live
    last week. What is…?"); a full stop inside a question ("Example Inc. for the X?", "2.1")
    does not cut it. The whole message when it asks nothing."""
    if "?" not in message:
        return message
    sentences = _SENTENCE_END.split(message.strip())
    asked = [s for s in sentences if not (_FIRST_PERSON.match(s) and not s.rstrip().endswith("?"))]
    return " ".join(asked) or message


def is_statement(message: str) -> bool:
    """Something the user tells rather than asks: no question mark, first person, not a
    request ("I want to know…", "Please…")."""
    return "?" not in message and bool(_FIRST_PERSON.match(message)) and not _REQUEST.match(message)


def told_part(message: str) -> str:
    """The sentences of `message` that tell rather than ask: no questions, no requests
    ("Can you tell me what the memory knows about launches?" tells nothing)."""
    sentences = _SENTENCE_END.split(message.strip())
    return " ".join(
        s for s in sentences if s.strip() and not s.rstrip().endswith("?") and not _REQUEST.match(s)
    )
