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
        "month": 43200, "year": 525600, "yr": 525600,
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
UNIT = r"(?:°\s*[CF]\b|degrees?\s+(?:C|F|Celsius|Fahrenheit)\b|%|[A-Za-z]+\b)"
# "14 days", "5 °C", "-18 °C", "one week", "30m": the number, the space, the unit
VALUE = re.compile(rf"(?<![\w.,])({SIGN}{NUMBER})(\s*)({UNIT})", re.IGNORECASE)
# "between 1 and 5 °C", "2-4 days": the first number is in the second's unit
RANGE = re.compile(
    rf"(?<![\w.,])({NUMBER})\s*(?:[-–]|to|and|or)\s*{SIGN}{NUMBER}(\s*)({UNIT})", re.IGNORECASE
)


def unit_of(word: str, glued: bool = True) -> tuple[str, float] | None:
    """What `word` measures and its size in the kind's base unit; None for no unit (or a
    lone letter set apart from its number)."""
    plain = re.sub(r"\s+", "", word.lower())
    plain = {"degreesc": "°c", "degreec": "°c", "degreescelsius": "°c"}.get(plain, plain)
    forms = [plain, plain.removesuffix("s")] if len(plain) > 2 else [plain]
    for form in forms:
        if form in MEASURE_OF and (glued or form not in LETTERS):
            kind = MEASURE_OF[form]
            return kind, UNITS[kind][form]
    return None


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
        written = f"{written}{space and ' '}{unit}".replace("° C", "°C")
        found.append(Measure(written, amount, measured[1], measured[0]))
    return found


def measured(text: str) -> set[tuple[float, str]]:
    """Each number `text` gives in a unit, with its kind: as written and in the kind's base
    unit ("one week" is 1 and 10080 minutes of time); the first of a range too ("between 1
    and 5 °C")."""
    found = {(m.amount, m.kind) for m in values(text)} | {(m.base, m.kind) for m in values(text)}
    for first, space, unit in RANGE.findall(text):
        unit_kind = unit_of(unit, glued=not space)
        amount = number(first)
        if unit_kind is not None and amount is not None:
            found |= {(amount, unit_kind[0]), (amount * unit_kind[1], unit_kind[0])}
    return found
