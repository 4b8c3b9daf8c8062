"""The person's own name: one fact (`kind: identity`), set only by the user naming
themselves in their own words, never by another person's name.

The 1.5B model turned "my tutor Marta Holm…" into "The user is Marta Holm." and lost
the name the person gave in their first turn. Here a name is the user's only when their
own words say so: "Hi, I'm Iris", "my name is Iris", "call me Iris", or "I'm Iris Moreau."
opening the message when the model read the same name. Every extracted statement that
gives the user a name is dropped (the identity fact says it, once); statements about the
user by their name ("Iris lives in Porto.") are said of "the user", as all others are.
"""

from __future__ import annotations

import re

from gam_desktop.engine.facts import lexicon as lx
from gam_desktop.engine.facts.said import Said

IDENTITY_TOPIC = "identity"


def statement_of(name: str) -> str:
    return f"The user's name is {name}."


def name_in(statement: str) -> str:
    """The name an identity statement gives ("The user's name is Iris." → "Iris")."""
    found = lx.NAME_CLAIM.match(statement)
    return found.group(1).strip().rstrip(".") if found else ""


def confirmed_name(said: Said, model_name: str, claimed: list[str]) -> str:
    """The name the user gives themselves in this turn, or "": what their words surely say,
    else a name the model read (its `user_name`, or a statement naming the user) that their
    words give after "I'm", "I am", "my name is" or "call me"."""
    if said.name:
        return said.name
    for candidate in [model_name, *claimed]:
        name = " ".join(candidate.split()).strip(" .,!")
        if name and _self_named(said.own, name):
            return name
    return ""


def _self_named(own: str, name: str) -> bool:
    first = re.escape(name.split()[0])
    return bool(
        re.search(
            r"(?i:\bi'm|\bi\s+am|\bmy\s+name\s+is|\bmy\s+name's|\bcall\s+me)\s+"
            + first
            + r"\b(?!['’]s\b)",
            own,
        )
    )


def names_the_user(statement: str) -> str:
    """The name a statement gives the user ("The user's name is X", "The user is called
    X"), or ""."""
    claimed = lx.NAME_CLAIM.match(statement)
    return claimed.group(1).strip().rstrip(".") if claimed else ""


def full_name_given(statement: str, own: str) -> str:
    """ "The user is Iris Moreau." when the user wrote "I'm Iris Moreau": a name
    of two words or more (a single capitalized word may say where they are from)."""
    bare = lx.IS_A_NAME.match(statement)
    name = bare.group(1) if bare else ""
    return name if len(name.split()) > 1 and _self_named(own, name) else ""


def makes_the_user_someone(statement: str, own: str, name: str) -> bool:
    """ "The user is Marta Holm." when the user never said "I'm Marta…", or the user's own
    name said again (the identity fact holds it); "I'm Dutch" makes "The user is Dutch."
    theirs."""
    bare = lx.IS_A_NAME.match(statement)
    if bare is None:
        return False
    said = bare.group(1)
    return not _self_named(own, said) or (bool(name) and same_name(said, name))


def as_the_user(statement: str, subject: str, name: str) -> tuple[str, str]:
    """(statement, subject) with the user's own name said as "the user": "Iris lives in
    Porto." → "The user lives in Porto."; the first name alone counts ("Iris Moreau")."""
    if not name:
        return statement, subject
    names = sorted({name, name.split()[0]}, key=len, reverse=True)
    pattern = re.compile(rf"^(?:{'|'.join(map(re.escape, names))})\b(['’]s)?", re.IGNORECASE)
    rewritten = pattern.sub(lambda m: "The user's" if m.group(1) else "The user", statement)
    if rewritten != statement or subject.strip().lower() in {n.lower() for n in names}:
        return rewritten, "the user"
    return statement, subject


def same_name(a: str, b: str) -> bool:
    """ "Iris" and "Iris Moreau" are one name (the longer says more)."""
    x, y = a.lower().split(), b.lower().split()
    return bool(x) and bool(y) and (x[: len(y)] == y or y[: len(x)] == x)
