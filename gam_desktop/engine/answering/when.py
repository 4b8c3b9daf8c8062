"""Time in questions: "last week", "yesterday", "in October", "on 3 November", "now".

A question about when something was said is answered from the conversations and facts
of that time; a question about the current state prefers what was said last (seed 003's
recency weight). Dates are the user's local calendar days, approximated in UTC.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from gam_desktop.engine.answering.lexicon import MONTHS

RECENCY_WEIGHT = 0.2  # seed 003: (1 - w) * relevance + w * recency
RECENCY_DAYS = 30.0
CURRENT = re.compile(
    r"\b(current(ly)?|now|still|these days|nowadays|latest|most recent|at the moment|today)\b",
    re.IGNORECASE,
)
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH})\b(?: (\d{{4}}))?", re.I)
_MONTH_DAY = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (\d{{4}}))?", re.I)
_IN_MONTH = re.compile(rf"\bin ({_MONTH})\b(?: (\d{{4}}))?", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NAMED = "|".join(sorted((m.capitalize() for m in MONTHS), key=len, reverse=True))
_WRITTEN_DATES = (  # as `_calendar` reads them, but of text as written (see without_dates)
    _ISO,
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)? (?:{_NAMED})\b(?: \d{{4}})?"),
    re.compile(rf"\b(?:{_NAMED}) \d{{1,2}}(?:st|nd|rd|th)?\b(?:,? \d{{4}})?"),
)
# a time of day on a 12-hour clock, as English writes it: "7.30pm", "7:30 PM", "7.30 p.m."
_CLOCK = re.compile(r"\b(\d{1,2})[.:](\d{2})\s?([ap])\.?m\b\.?", re.IGNORECASE)
_DAYS_AGO = re.compile(r"\b(\d+|a|one|two|three) (day|week|month)s? ago\b", re.I)
_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3}

Window = tuple[datetime, datetime]  # [start, end)


SAID = re.compile(
    r"\b(say|said|tell|told|mention(ed)?|talk(ed)?|discuss(ed)?|ask(ed)?|chat(ted)?|"
    r"wr[io]te|note[ds]?|remember(ed)?|"
    # giving, sharing or letting the assistant know is telling it: "the date I gave you"
    r"(give|gave|given|giving)\s+you|shared?\s+with\s+you|let\s+you\s+know)\b",
    re.IGNORECASE,
)


def asks_what_was_said(question: str) -> bool:
    """ "What did I say last week?": conversations and facts answer; "what is planned this
    week?" is about the documents too."""
    return bool(SAID.search(question))


def asks_for_current(question: str) -> bool:
    return bool(CURRENT.search(question))


def recency(when: datetime | None, now: datetime) -> float:
    """The factor a hit's score is multiplied by: 1 for today, 0.8 for long ago."""
    if when is None:
        return 1 - RECENCY_WEIGHT
    age = max(0.0, (now - when).total_seconds() / 86400)
    return (1 - RECENCY_WEIGHT) + RECENCY_WEIGHT * math.exp(-age / RECENCY_DAYS)


def time_window(question: str, now: datetime) -> Window | None:
    """The span of time a question is about, or None when it names none (or names a date
    no calendar holds: year 9999 and a day, 3,000,000 days ago)."""
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    text = question.lower()
    try:
        relative = _relative(text, today)
        return relative if relative is not None else _calendar(text, today)
    except OverflowError:
        return None


def _relative(text: str, today: datetime) -> Window | None:
    day = timedelta(days=1)
    week_start = today - timedelta(days=today.weekday())
    month_start = today.replace(day=1)
    if "yesterday" in text:
        return today - day, today
    if re.search(r"\btoday\b|\bthis morning\b", text):
        return today, today + day
    if "last week" in text:
        return week_start - 7 * day, week_start
    if "this week" in text:
        return week_start, today + day
    if "last month" in text:
        previous = (month_start - day).replace(day=1)
        return previous, month_start
    if "this month" in text:
        return month_start, today + day
    ago = _DAYS_AGO.search(text)
    if ago:
        count = _WORDS.get(ago.group(1)) or int(ago.group(1))
        days = count * {"day": 1, "week": 7, "month": 30}[ago.group(2)]
        centre = today - timedelta(days=days)
        slack = timedelta(days=max(1, days // 7))
        return centre - slack, centre + day + slack
    return None


def on_the_clock(text: str) -> str:
    """`text` with its 12-hour times written on the 24-hour clock ("7.30pm" and "7:30 PM"
    are both "19:30"): one time written two ways is one value."""

    def written(found: re.Match[str]) -> str:
        hour, minutes, half = int(found.group(1)), found.group(2), found.group(3).lower()
        if not 1 <= hour <= 12:
            return found.group(0)
        return f"{hour % 12 + (12 if half == 'p' else 0)}:{minutes}"

    return _CLOCK.sub(written, text)


def without_dates(text: str) -> str:
    """`text` with its calendar dates ("8 June", "June 8th, 2026", "2026-06-08") left out:
    their numbers are a day's, not an amount's. A month is its name written with a capital,
    as English writes it: "up to 2 may be carried" holds no date."""
    for pattern in _WRITTEN_DATES:
        text = pattern.sub(" ", text)
    return text


def _calendar(text: str, today: datetime) -> Window | None:
    iso = _ISO.search(text)
    if iso:
        start = _date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
        return (start, start + timedelta(days=1)) if start else None
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        found = pattern.search(text)
        if found:
            month, day = MONTHS[found.group(month_group)], int(found.group(day_group))
            year = int(found.group(3)) if found.group(3) else _latest_year(month, today, day)
            start = _date(year, month, day)
            return (start, start + timedelta(days=1)) if start else None
    found = _IN_MONTH.search(text)
    if found:
        month = MONTHS[found.group(1)]
        year = int(found.group(2)) if found.group(2) else _latest_year(month, today)
        start = _date(year, month, 1)
        if start is None:
            return None
        end = _date(year + (month == 12), month % 12 + 1, 1)
        return (start, end) if end else None
    return None


def _latest_year(month: int, today: datetime, day: int = 1) -> int:
    """ "In October", asked in November 2026, is October 2026; asked in March, 2025. "On 25
    December", asked on 10 December, is last year's; 29 February, the last leap year's."""
    year = today.year if (month, day) <= (today.month, today.day) else today.year - 1
    for candidate in range(year, year - 8, -1):
        if _date(candidate, month, day) is not None:
            return candidate
    return year


def _date(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def spoken(day: datetime) -> str:
    """A day as people write it ("Friday 6 March 2026"): a small model matches the
    question's "on 6 March" and orders two days written so; digits it does neither."""
    return f"{day:%A} {day.day} {day:%B %Y}"


def describe_today(now: datetime) -> str:
    return f"Today is {spoken(now)}."
