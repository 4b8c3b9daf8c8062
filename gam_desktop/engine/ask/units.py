"""Units of measure and the numbers said in them: "14 days", "5 °C", "-18 °C", "30m",
"fourteen days". One table for every check that reads a quantity (the asked unit, a figure
of another thing, the comparison of documents, a made-up measure), so they agree on what
"5 m" or "2 wk" is."""

from __future__ import annotations

import re
from typing import NamedTuple

# Units by what they measure, each with its size in the kind's base unit (minutes, MB).
UNITS: dict[str, dict[str, float]] = {
    "time": {
        "second": 1 / 60, "sec": 1 / 60, "s": 1 / 60, "minute": 1, "min": 1, "m": 1,
        "hour": 60, "hr": 60, "h": 60, "day": 1440, "d": 1440, "week": 10080, "wk": 10080,
        "fortnight": 20160, "month": 43200, "year": 525600, "yr": 525600,
    },
    "data": {
        "byte": 1 / 1024**2, "kb": 1 / 1024, "kib": 1 / 1024, "kilobyte": 1 / 1024,
        "mb": 1, "mib": 1, "megabyte": 1, "gb": 1024, "gib": 1024, "g": 1024, "gig": 1024,
        "gigabyte": 1024, "tb": 1024**2, "tib": 1024**2, "terabyte": 1024**2,
    },
    "temperature": {"°c": 1, "celsius": 1},
    "share": {"%": 1, "percent": 1},
}  # fmt: skip
# The forms of each kind, and the kind of each form.
MEASURES = {kind: set(units) for kind, units in UNITS.items()}
MEASURE_OF = {unit: kind for kind, units in UNITS.items() for unit in units}
# One letter is a unit only glued to its number ("30m", "200G"): "5 m" may be metres and
# "the 4 s" a plural.
LETTERS = frozenset(unit for unit in MEASURE_OF if len(unit) == 1 and unit.isalpha())

NUMBER_WORDS = {
    word: str(number)
    for number, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORDS = sorted(NUMBER_WORDS, key=len, reverse=True)  # "fourteen" before "four"
NUMBER = r"(?:\d+(?:,\d{3})*(?:\.\d+)?|(?:" + "|".join(_WORDS) + r")\b)"
SIGN = r"(?:[-−]|minus\s+)?"
UNIT = r"(?:[°º]\s*[CF]\b|℃|degrees?\s+(?:C|F|Celsius|Fahrenheit)\b|%|per\s+cent\b|[A-Za-z]+\b)"
# "14 days", "5 °C", "-18 °C", "one week", "30m": the number, the space, the unit
VALUE = re.compile(rf"(?<![\w.,])({SIGN}{NUMBER})(\s*)({UNIT})", re.IGNORECASE)


def unit_of(word: str, glued: bool = True) -> tuple[str, float] | None:
    """What `word` measures and its size in the kind's base unit; None for no unit (or a
    lone letter set apart from its number)."""
    plain = re.sub(r"\s+", "", word.lower()).replace("º", "°")
    plain = SPELLED.get(plain, plain)
    forms = [plain, plain.removesuffix("s")] if len(plain) > 2 else [plain]
    for form in forms:
        if form in MEASURE_OF and (glued or form not in LETTERS):
            kind = MEASURE_OF[form]
            return kind, UNITS[kind][form]
    return None


SPELLED = {
    "degreesc": "°c", "degreec": "°c", "degreescelsius": "°c", "degreecelsius": "°c",
    "℃": "°c", "percent": "%", "pct": "%",
}  # fmt: skip


def number(text: str) -> float | None:
    """The value of a number as written: "1,240", "-18", "minus 4", "fourteen"."""
    plain = re.sub(r"^(?:[-−]|minus\s+)", "-", text.lower().replace(",", ""))
    sign = -1.0 if plain.startswith("-") else 1.0
    plain = plain.lstrip("-")
    plain = NUMBER_WORDS.get(plain, plain)
    try:
        return sign * float(plain)
    except ValueError:
        return None


class Measure(NamedTuple):
    written: str  # "5 °C", "30m"
    amount: float  # as written: 30
    size: float  # of its unit in the kind's base unit: 30m is 30 × 1 minute
    kind: str  # "time"
    unit: str  # as written: "m"

    @property
    def base(self) -> float:
        return self.amount * self.size


def values(text: str, kind: str | None = None) -> list[Measure]:
    """The measures `text` states (of `kind`, else of any)."""
    found = []
    for written, space, unit in VALUE.findall(text):
        measured = unit_of(unit, glued=not space)
        amount = number(written)
        if measured is None or amount is None or kind not in (None, measured[0]):
            continue
        shown = f"{written}{space and ' '}{unit}".replace("° C", "°C")
        found.append(Measure(shown, amount, measured[1], measured[0], unit))
    return found


# How a text may give a measure that `values` leaves to the reader: "a 7-day window",
# "5 to 7 business days", "an hour", "3 s". What a measure of an answer is checked against
# is read this leniently: a right answer flagged is worse than a made-up one let through.
HYPHENATED = re.compile(rf"(?<![\w.,])({NUMBER})-({UNIT})", re.IGNORECASE)
QUALIFIED = re.compile(
    rf"(?<![\w.,])({SIGN}{NUMBER})\s+(?:business|working|calendar|full|whole|consecutive|"
    rf"rolling|more|additional|extra)\s+({UNIT})",
    re.IGNORECASE,
)
ONE = re.compile(rf"\b(?:an?|per|each|every)\s+({UNIT})", re.IGNORECASE)
SPACED = re.compile(rf"(?<![\w.,])({SIGN}{NUMBER})\s+([A-Za-z])\b")
RANGE = re.compile(
    rf"(?<![\w.,])({SIGN}{NUMBER})\s*(?:[-–]|to|and|or)\s*{SIGN}{NUMBER}(\s*)({UNIT})",
    re.IGNORECASE,
)  # "between 1 and 5 °C", "-5 to -2 °C": the first number is in the second's unit


def measured(text: str) -> set[tuple[float, str]]:
    """Each number `text` gives in a unit, with its kind: as written and in the kind's base
    unit ("one week" is 1 and 10080 minutes of time), read leniently (see above)."""
    given = [(m.amount, m.kind, m.size) for m in values(text)]
    for pattern in (HYPHENATED, QUALIFIED, SPACED):
        for written, unit in pattern.findall(text):
            given.append((number(written), *(unit_of(unit) or (None, 0.0))))
    for first, _space, unit in RANGE.findall(text):
        given.append((number(first), *(unit_of(unit) or (None, 0.0))))
    for unit in ONE.findall(text):
        given.append((1.0, *(unit_of(unit, glued=False) or (None, 0.0))))
    found = set()
    for amount, kind, size in given:
        if amount is not None and kind is not None:
            found |= {(amount, kind), (amount * size, kind)}
    return found


def same_measure(amount: float, size: float, kind: str, given: set[tuple[float, str]]) -> bool:
    """Whether `given` (of `measured`) holds a measure as written, or the same in its kind's
    base unit within 3% ("12 months" is a year; "1000 GB" a terabyte)."""
    if (amount, kind) in given:
        return True
    base = amount * size
    return any(k == kind and abs(b - base) <= 0.03 * max(abs(b), abs(base)) for b, k in given)
