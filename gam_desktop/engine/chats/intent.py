"""What a chat message asks: its question sentences, or nothing (a statement).

In a conversation people mix what they tell the memory with what they ask it: "I live in
Porto. What is the launch planned with?" asks only the second sentence, so only its names
are searched for (Porto is not something the memory must mention); "My sister is Anne."
asks nothing and is acknowledged, not answered with "the memory does not mention Anne".
"""

from __future__ import annotations

import re

from gam_desktop.engine.textutil import AUXILIARIES

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


# A message that asks without a question mark opens with a question word ("what time is
# load-in"), an auxiliary before its subject ("is there a limit on…"), or a verb that tells
# the assistant what to do ("List every…", "Compare…", "Name all…").
_ASKING = re.compile(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|whether|"
    + "|".join(AUXILIARIES)
    + r"|let|list|name|give|show|tell|find|search|look|compare|contrast|summari[sz]e|"
    r"explain|describe|define|count|calculate|remind|help|write|draft|translate|check|get|"
    r"enumerate|identify|state|provide|outline|suggest|recommend|quote|cite|recall|repeat|"
    r"say|read|open|add|delete|remove|make|create|go)\b",
    re.IGNORECASE,
)
# A message written as sentences ends as one does (a keyword search, "oven repair
# Lars", does not): a full stop, an exclamation mark or an ellipsis, perhaps inside a
# closing quote or bracket.
_SENTENCE_DONE = re.compile(r"[.!…][\"'”’)\]]*\s*$")


# "You know how I said I swim on Tuesdays? Not any more." reminds before it tells: the
# question asks nothing, and what follows it is the message.
_REMINDER = re.compile(
    r"^\s*(?:you know|(?:do you )?remember)\s+(?:how|that|when|what)\b[^?]*\?", re.IGNORECASE
)


# What a person pastes between delimiter lines or in a code fence is theirs to share, not
# what they ask ("Here's the club's notice, I'll paste it:" and the notice after it); an
# opening line with no closing one runs to the end.
_PASTED = re.compile(r"^(?:-{3,}|```).*?(?:^(?:-{3,}|```)[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)


def is_statement(message: str) -> bool:
    """Something the user tells rather than asks: no question mark and not a request
    ("I want to know…", "Please…"); either in the first person ("My sister is Anne."), or
    written as sentences about someone or something ("Bram moved to Tallinn last week.")
    that open with no question word and no verb addressed to the assistant ("List…",
    "Summarize…"). "Forget what I said about…" and "Keep a list of…" are told: learning
    the facts does what they ask. A reminder before it ("You know how I said…?") asks
    nothing, and neither does what they paste: their own words around it say."""
    own = _PASTED.sub(" ", message).strip()
    pasted, message = own != message.strip(), own
    reminder = _REMINDER.match(message)
    if reminder and message[reminder.end() :].strip():
        message = message[reminder.end() :].strip()
    if "?" in message or _REQUEST.match(message):
        return False
    if _FIRST_PERSON.match(message):
        return True
    # (a message that introduces what it pastes ends with a colon: "I'll paste it:")
    done = _SENTENCE_DONE.search(message) or (pasted and message.endswith(":"))
    return bool(done) and not _ASKING.match(message)


def told_part(message: str) -> str:
    """The sentences of `message` that tell rather than ask: no questions, no requests
    ("Can you tell me what the memory knows about launches?" tells nothing)."""
    sentences = _SENTENCE_END.split(message.strip())
    return " ".join(
        s for s in sentences if s.strip() and not s.rstrip().endswith("?") and not _REQUEST.match(s)
    )
