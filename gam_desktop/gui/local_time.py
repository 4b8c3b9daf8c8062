"""Moments as the person's locale writes them (QLocale), never as ISO text: the history's
operations, a conversation's start, a fact's date, an interrupted operation's start.

The engine keeps times as UTC datetimes, epoch seconds or ISO strings; these turn any of them
into local time in the locale's own order, separators and clock ("3/11/25 2:05 PM" in the
United States, "03.11.25 14:05" in Germany)."""

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


def date_time(moment: Moment, long: bool = False) -> str:
    """Date and time in the locale's short (or long) format; "" when there is no time, and a
    string that is no time as it is."""
    found = as_datetime(moment)
    if found is None:
        return moment if isinstance(moment, str) else ""
    kind = QLocale.FormatType.LongFormat if long else QLocale.FormatType.ShortFormat
    return QLocale().toString(_qt(found), kind)


def time_of_day(moment: datetime) -> str:
    """The local time of day in the locale's clock ("14:05", "2:05 PM")."""
    return QLocale().toString(_qt(moment).time(), QLocale.FormatType.ShortFormat)


def day(moment: datetime, with_year: bool) -> str:
    """A local day, the month by its locale's short name ("3 Nov", "3 Nov 2025"; "3. Nov."
    in German)."""
    local = _qt(moment).date()
    return QLocale().toString(local, "d MMM yyyy" if with_year else "d MMM")
