"""The scripted server's fact extraction and reconciliation: simple, predictable rules.

Extraction turns the user's first-person statements into facts about "the user" ("I live
in Lisbon." → "The user lives in Lisbon."; "My sister is Anne." → "The user's sister is
Anne."), and statements about a named person into facts about them; questions and
requests state nothing. Reconciliation compares each new fact with the existing ones
of the same subject: the same statement is NONE, "no longer" deletes what it negates,
the same subject and verb phrase with another value is an UPDATE, anything else an ADD.
"""

from __future__ import annotations

import re
from typing import Any

_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"^((?:[A-Z][a-z]+)(?: [A-Z][a-z]+)?) (is|was|has|lives|works|moved|likes)\b")
_VERB_S = {"have": "has", "am": "is", "do": "does", "go": "goes"}
_REQUEST = re.compile(
    r"^(please|can you|could you|tell me|remember|thanks|thank you|hi|hello)\b", re.I
)
_FACT_LINE = re.compile(r"^([FN]\d+): (.*) \(subject: (.*)\)$", re.MULTILINE)


def extract(user: str) -> dict[str, Any]:
    message = user.split("The user's message:\n", 1)[-1]
    facts = []
    for sentence in _SENTENCES.split(message.strip()):
        for clause in _clauses(sentence.strip()):
            fact = _fact(clause)
            if fact is not None:
                facts.append(fact)
    return {"facts": facts[:3]}


def _clauses(sentence: str) -> list[str]:
    """ "I live in Porto and I work as a nurse." is two statements; so is "A; B"."""
    sentence = re.sub(r"^(hi|hello|actually|also|well|so),?\s+", "", sentence, flags=re.I)
    parts = re.split(r";\s+| and (?=I )", sentence)
    return [part[:1].upper() + part[1:] for part in parts if part]


def _fact(sentence: str) -> dict[str, str] | None:
    if not sentence or sentence.endswith(("?", ":")) or _REQUEST.match(sentence):
        return None
    text = re.sub(r" (now|these days|nowadays)$", "", sentence.rstrip(".!")) + "."
    text = re.sub(r"\b(now|still) (?=\w)", "", text)  # "I now work" → "I work"
    name = re.match(r"^(?:I'm|I am|My name is) ([A-Z][a-z]+)\.$", text)
    if name:
        return _about_user(f"The user's name is {name.group(1)}.")
    if re.match(r"^(I'm|I am) ", text):
        rest = text.split(" ", 2 if text.startswith("I am") else 1)[-1]
        return _about_user(f"The user is {rest}")
    if text.startswith("My "):
        return _about_user("The user's " + text[3:])
    if text.startswith("I no longer "):
        verb, _, rest = text[len("I no longer ") :].partition(" ")
        return _about_user(f"The user no longer {_third_person(verb)} {rest}")
    if text.startswith("I "):
        verb, _, rest = text[2:].partition(" ")
        return _about_user(f"The user {_third_person(verb)} {rest}")
    named = _NAME.match(text)
    if named:
        return {"subject": named.group(1), "statement": text, "topic": "people"}
    return None


def _about_user(statement: str) -> dict[str, str]:
    return {"subject": "the user", "statement": statement, "topic": "personal"}


def _third_person(verb: str) -> str:
    if verb in _VERB_S:
        return _VERB_S[verb]
    if verb.endswith("ed") or verb.endswith("s"):
        return verb
    return verb + ("es" if verb.endswith(("sh", "ch", "o")) else "s")


def reconcile(user: str) -> dict[str, Any]:
    lines = _FACT_LINE.findall(user)
    existing = [(alias, text, subject) for alias, text, subject in lines if alias[0] == "F"]
    new = [(alias, text, subject) for alias, text, subject in lines if alias[0] == "N"]
    decisions: dict[str, dict[str, str]] = {a: {"id": a, "event": "NONE"} for a, _, _ in existing}
    for alias, text, subject in new:
        decisions[alias] = _decide(alias, text, subject, existing, decisions)
    return {"facts": list(decisions.values())}


def _decide(
    alias: str,
    text: str,
    subject: str,
    existing: list[tuple[str, str, str]],
    decisions: dict[str, dict[str, str]],
) -> dict[str, str]:
    for old_alias, old_text, old_subject in existing:
        if old_subject.lower() != subject.lower():
            continue  # two people are two people, however alike their names
        if _norm(old_text) == _norm(text):
            return {"id": alias, "event": "NONE"}
        if "no longer" in text and _norm(text.replace("no longer ", "")) == _norm(old_text):
            decisions[old_alias] = {"id": old_alias, "event": "DELETE"}
            return {"id": alias, "event": "NONE"}
        if _verb_phrase(old_text) == _verb_phrase(text) and "no longer" not in text:
            decisions[old_alias] = {"id": old_alias, "event": "UPDATE", "statement": text}
            return {"id": alias, "event": "NONE"}
    return {"id": alias, "event": "ADD"}


def _verb_phrase(statement: str) -> str:
    """ "The user lives in Lisbon." → "the user lives in": what a value is stated about."""
    words = _norm(statement).split()
    return " ".join(words[:-1]) if len(words) > 2 else " ".join(words)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w' ]", " ", text.lower()).split())
