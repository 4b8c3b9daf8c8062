"""Moments as the window shows them, one way everywhere (the history's operations, a
conversation's start and its turns, a fact's dates, a memory's Created, an interrupted
operation's start): "Today 16:14", "Yesterday 09:12", else "28 Nov 2026 16:14" in local
time, the month in the locale's words and the time in its clock ("4:14 PM" in the United
States). Dates were shown three ways ("28 11 2026 16:14", "28 Nov 2026 16:16", "Today
16:16"), and the locale's short format reads "03/11/25" as two different days.

The engine keeps times as UTC datetimes, epoch seconds or ISO strings; `when` takes any."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, QLocale

Moment = datetime | float | int | str | None


def as_datetime(moment: Moment) -> datetime | None:
    """An aware datetime (a naive one or one without a zone is UTC); None when `moment` is
    none or not a time."""
    if moment is None or isinstance(moment, bool):
        return None
    if isinstance(moment, int | float):
        return datetime.fromtimestamp(moment, UTC)
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment.strip())
        except ValueError:
            return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _qt(moment: datetime) -> QDateTime:
    return QDateTime.fromMSecsSinceEpoch(round(moment.timestamp() * 1000)).toLocalTime()


def when(moment: Moment, now: datetime | None = None, in_sentence: bool = False) -> str:
    """The one way the window writes a moment: "Today 16:14", "Yesterday 09:12", "28 Nov
    2026 16:14" (local time; `now` for tests); "today 16:14" `in_sentence`. "" when there is
    no time, and a string that is no time as it is."""
    found = as_datetime(moment)
    if found is None:
        return moment if isinstance(moment, str) else ""
    local = _qt(found)
    today = _qt(now).date() if now is not None else QDateTime.currentDateTime().date()
    days = local.date().daysTo(today)
    clock = QLocale().toString(local.time(), QLocale.FormatType.ShortFormat)
    if days in (0, 1):
        word = "Today" if days == 0 else "Yesterday"
        return f"{word.lower() if in_sentence else word} {clock}"
    return f"{QLocale().toString(local.date(), 'd MMM yyyy')} {clock}"
