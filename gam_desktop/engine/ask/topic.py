"""Whether a figure an answer gives is one the evidence states about what was asked.

A small model asked the default backup interval of Lumenvault 3.1 answers "50 GB": the
release notes do state 50 GB, as the limit on a single file, in a list item that says
nothing of backups or intervals. A figure of the answer is "of another thing" when the
evidence states it only in a paragraph or list item (with its heading) that says far less
of what is asked than the best one, in another unit, or only in the sentence beside the
one saying it, in the same unit (see `off_topic_figures`). Which document a passage is
from is the entity check's job; what it is about is this one's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gam_desktop.engine.ask.evidence import (
    VERSION,
    asked_units,
    figures,
    misses_asked_unit,
)
from gam_desktop.engine.ask.paragraphs import statements
from gam_desktop.engine.ask.units import MEASURE_OF
from gam_desktop.engine.ask.words import query_terms, stem, tokenize
from gam_desktop.engine.textutil import STOPWORDS

MIN_SAID = 2  # words of what is asked the evidence must say beside a figure to tell
CLAUSE = re.compile(r"(?<=[.!?;])\s+")
MEASURED = re.compile(r"(?<![\w.,])(\d+(?:,\d{3})*(?:\.\d+)?)\s*([^\W\d_]+|%)")
MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
DATE = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}(?!\w)|\b{MONTH}\s+(\d{{1,2}})\b"
)
CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
# A single digit given as the value of a statement ("Maximum number of devices per account:
# **5**."): `figures` leaves single digits out, as too common to tell anything elsewhere.
VALUE_DIGIT = re.compile(r":\s*\**(\d)\**\s*\.?\s*$")  # not "Pair it: press **2** twice."
# Words a question uses to ask, not to say what about: "compare", "how did it change".
ASKING = frozenset(
    tokenize(
        "compare comparison change changed changes differ difference across between each "
        "every all both grow grew growth go went value number amount "
        "latest newest current recent according big large small fast quick quickly slow "
        "generous"
    )
)


def off_topic_figures(answer: str, evidence: str, question: str, names: str = "") -> list[str]:
    """The figures of `answer` that `evidence` states only of another thing than `question`
    asks about. Either where it says less than half as much of it as where it says the most
    of it beside a figure, and in another unit than there: "27 dead kittiwakes", in a
    paragraph naming puffins once, for "Mote Isle, Atlantic puffin: 980 occupied burrows";
    or in the sentence beside the one saying it, in the same unit (`_outranked`). What is
    asked about is the question's words but its figures and the words of `names` (the
    documents' names: which look-alike, not what about). Years, versions,
    days of a month and clock times are names, not values. Nothing is flagged when the
    evidence says little of it (another wording: it cannot tell), nor a figure it never
    states (`unsupported_values`' finding)."""
    units = _stating(evidence, question, names)
    best = max((said for said, _item, _stated in units), default=0)
    if best == 0:
        return []
    topic = _topic(question, names)
    best_units = {u for said, item, _s in units if said == best for _f, u in _measures(item)}
    given = figures(answer)
    asked = figures(question) | set(VERSION.findall(answer)) | _dates_and_times(answer)
    flagged = []
    for figure in sorted(given - asked):
        stating = [(said, item) for said, item, stated in units if figure in stated]
        if not stating:
            continue
        own_units = {u for _said, item in stating for f, u in _measures(item) if f == figure}
        elsewhere = (
            best >= MIN_SAID
            and bool(best_units)  # what the best place measures is known: another unit tells
            and 2 * max(said for said, _item in stating) < best
            and not own_units & best_units
        )
        if elsewhere or all(_outranked(figure, item, topic, given) for _said, item in stating):
            flagged.append(figure)
    return flagged


def unheard_of(
    answer: str, evidence: str, question: str, names: str, known: Callable[[str], bool]
) -> list[str]:
    """The words of what `question` asks about that the memory never uses (`known` tells
    whether a search term occurs anywhere in it), when every statement of `evidence` giving
    a figure of `answer` says nothing of what is asked: asked Osprine's annual revenue, a
    small model answers "$55 for each night on call", from a line on on-call pay, and no
    file of the memory says "revenue". A statement saying any word of the question is taken
    as another wording of it, and an answer giving no figure is not judged."""
    unknown = sorted(word for word in _topic(question, names) if not known(word))
    named = figures(question) | set(VERSION.findall(answer)) | _dates_and_times(answer)
    given = figures(answer) - named
    if not unknown or not given:
        return []
    stating = [
        said for said, _item, stated in _stating(evidence, question, names) if stated & given
    ]
    return unknown if stating and not any(stating) else []


def _dates_and_times(text: str) -> set[str]:
    """The numbers of `text` that are days of a month or hours and minutes ("14 June",
    "June 20", "08:00"): when, not how much."""
    found = {day for pair in DATE.findall(text) for day in pair if day}
    return found | {part for time in CLOCK.findall(text) for part in time}


def _outranked(figure: str, item: str, topic: set[str], given: set[str]) -> bool:
    """Whether `item` states `figure` only in a sentence (or clause) saying less of `topic`
    than another of its sentences stating another figure of the same unit, one the answer
    does not also give (`given`): "If a page is not acknowledged after 30 minutes, it
    escalates to the secondary. After 45 minutes it escalates to the engineering manager."
    asked when it escalates to the secondary, and answered "45 minutes"."""
    said = [
        (len(topic & set(tokenize(sentence))), _measures(sentence))
        for sentence in CLAUSE.split(item)
    ]
    own = [(n, {u for f, u in measures if f == figure}) for n, measures in said]
    own = [(n, units) for n, units in own if units]
    if not own:
        return False
    units = set().union(*(u for _n, u in own))
    rivals = [
        n
        for n, measures in said
        if any(u in units and f != figure and f not in given for f, u in measures)
    ]
    return bool(rivals) and max(rivals) > max(n for n, _u in own)


def _measures(sentence: str) -> set[tuple[str, str]]:
    """The figures of a sentence with what each measures or counts, by the word after it:
    ("30", "time") of "30 minutes", ("27", "dead") of "27 dead kittiwakes"; a figure
    followed by no word of its own ("from 5 to 1440") has none."""
    found = MEASURED.findall(sentence.replace("**", ""))
    measured = set()
    for number, unit in found:
        word = unit.lower()
        kind = MEASURE_OF.get(word) or MEASURE_OF.get(word.removesuffix("s"))
        if kind is not None or word not in STOPWORDS:
            measured.add((number.replace(",", ""), kind or stem(word)))
    return measured


def best_statement(evidence: str, question: str, names: str = "") -> tuple[int, str] | None:
    """The paragraph or list item of `evidence` stating a figure that says the most of what
    `question` asks about (with its heading when that says more of it; its one sentence
    that does, when that alone says half of it), and how much it says; None when none says
    half of it, or two say as much."""
    units = sorted(_stating(evidence, question, names), key=lambda unit: -unit[0])
    topic = _topic(question, names)
    if not units or 2 * units[0][0] < len(topic) or units[0][0] == 0:
        return None
    if len(units) > 1 and units[1][0] == units[0][0]:
        return None
    statement = _best_sentence(units[0][1], topic)
    if asked_units(question) and misses_asked_unit(statement, question) is not None:
        return None  # asked how many days, it states GB
    return units[0][0], statement


def _best_sentence(statement: str, topic: set[str]) -> str:
    """The one sentence of `statement` stating a figure that says the most of `topic`, when
    it alone says half of it; else all of `statement`."""
    sentences = [
        (len(topic & set(tokenize(sentence))), sentence)
        for sentence in re.split(r"(?<=[.!?])\s+", statement)
        if _stated(sentence)
    ]
    sentences.sort(key=lambda pair: -pair[0])
    if len(sentences) < 2 or sentences[1][0] == sentences[0][0]:
        return statement
    return sentences[0][1] if 2 * sentences[0][0] >= len(topic) else statement


def _topic(question: str, names: str) -> set[str]:
    """The words of what `question` asks about: its terms but its figures, the words it asks
    with and those of `names` (a document's name says which it is: "Tallowmere on-call
    policy", of a question about on-call policies)."""
    return {t for t in query_terms(question) if not t.isdigit()} - set(tokenize(names)) - ASKING


def _stating(evidence: str, question: str, names: str) -> list[tuple[int, str, set[str]]]:
    """Each paragraph or list item of `evidence` that states a figure: how many words of
    what `question` asks about it and its heading say, its text, its figures."""
    topic = _topic(question, names)
    units = []
    for heading, item in statements(evidence):
        stated = _stated(item)
        if stated and topic:
            said = topic & set(tokenize(f"{heading} {item}"))
            text = _plain(item)
            if topic & set(tokenize(heading)) - set(tokenize(item)):
                text = f"{heading}: {text}"
            units.append((len(said), text, stated))
    return units


def _stated(text: str) -> set[str]:
    """The figures `text` states, with a single digit it gives as a value."""
    return figures(text) | set(VALUE_DIGIT.findall(text))


def _plain(text: str) -> str:
    """A statement as a sentence: no list marker, bold or line breaks."""
    return " ".join(text.replace("**", "").split()).lstrip("-*•+ ")
