"""What the memory learned from its user, as evidence: conversations and facts by time.

Conversations and facts are Markdown in the folder, so search finds them like any
memory; this module gives them what documents do not have: a time (a fact's last update,
a conversation's turns), a passage that shows each turn with its date (so "when did I
first mention X?" can be answered), and a label that says what they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from gam_desktop.engine.answering.lexicon import ASKS_OWN_NAME, MONTHS
from gam_desktop.engine.answering.when import Window, spoken
from gam_desktop.engine.chats.intent import told_part
from gam_desktop.engine.chats.record import parse as parse_conversation
from gam_desktop.engine.retrieval.search import query_terms
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR, DELETED_FACTS_DIR, FACTS_DIR
from gam_desktop.engine.store.links import resolve_within
from gam_desktop.engine.store.markdown import body_of, front_value, parse_count, parse_time


def is_conversation(key: str) -> bool:
    return key.startswith(f"{CONVERSATIONS_DIR}/")


def is_fact(key: str) -> bool:
    return key.startswith(f"{FACTS_DIR}/")


def is_personal(key: str) -> bool:
    return is_conversation(key) or is_fact(key)


def time_of(text: str) -> datetime | None:
    """When a file was last true: its front matter's updated, else created, else started."""
    return _first_time(text, ("updated", "created", "started"))


def is_identity(key: str, text: str) -> bool:
    """The fact that gives the person's own name."""
    return is_fact(key) and front_value(text, "kind") == "identity"


def own_name(files: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The words of the person's own name, as their identity fact writes it ("The user's
    name is Ada Quill." -> "Ada", "Quill"): its capitalized words but the first."""
    for key, text in files:
        if is_identity(key, text):
            return frozenset(_NAME_WORD.findall(body_of(text))[1:])
    return frozenset()


_NAME_WORD = re.compile(r"(?<![\w'’])[A-Z][^\W\d_]+(?:[-'’][A-Z][^\W\d_]+)*")


def about_own_name(question: str, text: str) -> bool:
    """Whether `question` asks the person's own name, or writes a word of it: the fact that
    names them (`text`) answers nothing else. Its "name" matched "the name of the ferry"
    and "the vet's name", and a small model answered with the person's own."""
    if ASKS_OWN_NAME.search(question):
        return True
    named = {t for t in query_terms(body_of(text)) if len(t) > 1} - {"user", "name"}
    return bool(named & set(query_terms(question)))


FIRST = re.compile(r"\b(first|earliest|originally|initially|before)\b", re.IGNORECASE)


def asks_for_first(question: str) -> bool:
    """ "When did I first mention X?", "where did I live before…": the oldest counts."""
    return bool(FIRST.search(question))


def started_at(key: str, text: str) -> datetime | None:
    """When a conversation began, a fact was first stated, a memory was made."""
    return _first_time(text, ("started", "created", "updated"))


def _first_time(text: str, names: tuple[str, ...]) -> datetime | None:
    """The first of the front matter's `names` that holds a time (each read as one line:
    a time question reads those of every conversation and fact)."""
    for name in names:
        value = front_value(text, name)
        when = parse_time(value) if value is not None else None
        if when is not None:
            return when
    return None


def within(key: str, text: str, window: Window) -> bool:
    """A fact stated, or a conversation with a turn, inside `window`."""
    start, end = window
    if is_conversation(key):
        try:
            turns = parse_conversation(text).turns
        except ValueError:
            return False
        return any(start <= turn.time < end for turn in turns)
    when = time_of(text)
    return is_fact(key) and when is not None and start <= when < end


Turn = tuple[str, int]  # a conversation's id and a turn's number in it (from 1)


def superseded(root: Path, current: Iterable[str]) -> set[Turn]:
    """The turns whose facts have all been replaced or taken back since: each fact's
    tombstone (under facts/.deleted) names the turn it was learned from, and no current
    fact (the texts of `current`) comes from that turn. What such a turn said no longer
    holds, and read beside what replaced it, a small model answered with it."""
    ended = {turn for turn in _tombstone_turns(root) if turn is not None}
    return ended - {turn for text in current if (turn := _source(text)) is not None}


def _tombstone_turns(root: Path) -> Iterable[Turn | None]:
    base = root / DELETED_FACTS_DIR
    if resolve_within(root, base) is None or not base.is_dir():
        return
    for path in sorted(base.rglob("*.md")):
        if resolve_within(root, path) is not None and path.is_file():
            stat = path.stat()
            yield _turn_of_file(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _turn_of_file(path: str, _mtime_ns: int, _size: int) -> Turn | None:
    """A tombstone's turn, read once per version of the file: every question about what
    holds asks for all of them, and tombstones only accumulate."""
    try:
        return _source(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:  # removed since it was listed
        return None


def _source(text: str) -> Turn | None:
    conversation = front_value(text, "source_conversation")
    turn = parse_count(front_value(text, "turn"))
    return (conversation, turn) if conversation and turn else None


def personal_passage(
    key: str,
    text: str,
    window: Window | None,
    gone: set[Turn] | None = None,
    told_only: bool = False,
) -> str:
    """A conversation as its dated turns (those inside `window`, when one is given); a
    fact as its dated statement. With `gone` (a question about what holds), only the turns
    that tell something still held: none of `gone`, no question or request ("How much
    paint for 3 rooms?" was read as the number of rooms after it changed). With
    `told_only`, no question or request either: "Which bakery delivers my bread again?",
    asked weeks ago, told nothing, and took the place of a turn that named a bakery."""
    if is_fact(key):
        when = time_of(text)
        body = body_of(text)
        return f"Stated on {spoken(when)}: {body}" if when else body
    try:
        record = parse_conversation(text)
    except ValueError:
        return text
    turns = record.turns
    if gone is not None:
        turns = [t for n, t in enumerate(turns, 1) if (record.id, n) not in gone]
    if gone is not None or told_only:
        turns = [t for t in turns if told_part(t.question).strip()]
    if window is not None:
        turns = [t for t in turns if window[0] <= t.time < window[1]] or turns
    # The user's own words: answers came from the documents, which are searched themselves.
    return "\n\n".join(
        f"On {spoken(t.time)} at {t.time:%H:%M} UTC the user said: {' '.join(t.question.split())}"
        for t in turns
    )


# A dated turn or fact as `personal_passage` writes it: "On Friday 3 July 2026 at
# 09:15 UTC the user said: …", "Stated on Monday 6 July 2026: …"
_DATED = re.compile(
    r"^(?:On|Stated on) \w+ (\d{1,2}) (\w+) (\d{4})(?: at (\d\d):(\d\d) UTC the user said)?: ",
    re.MULTILINE,
)


class DatedTurn(NamedTuple):
    when: datetime  # a fact's is its day's start: it has no time of day
    text: str  # as the passage writes it, its date first
    said: str  # the person's words
    is_fact: bool


def dated_turns(passage_text: str) -> list[DatedTurn]:
    """What a personal passage says the person said, turn by turn (a fact is one)."""
    found = list(_DATED.finditer(passage_text))
    turns = []
    for match, after in zip(found, [*found[1:], None], strict=True):
        end = after.start() if after is not None else len(passage_text)
        month = MONTHS.get(match[2].lower())
        try:
            hour, minute = int(match[4] or 0), int(match[5] or 0)
            when = datetime(int(match[3]), month or 0, int(match[1]), hour, minute, tzinfo=UTC)
        except ValueError:  # no such day: not a date this module wrote
            continue
        turn = passage_text[match.start() : end].strip()
        said = passage_text[match.end() : end].strip()
        turns.append(DatedTurn(when, turn, said, is_fact=match[4] is None))
    return turns


def personal_label(key: str, text: str) -> str:
    """What a passage is, as an answer may name it."""
    when = time_of(text)
    date = spoken(when) if when else "an unknown date"
    if is_fact(key):
        return f"a fact the user stated on {date}"  # (no brackets: a label is bracketed)
    # Not its title: that is its first turn's words, which the window of other turns does
    # not hold (a label about one thing was read, and quoted, beside another's turn).
    return f"a conversation with the user, last on {date}"
