"""One measure in each document a question names: "What was the maximum single-file size
in Lumenvault 3.0, and what is it in Lumenvault 4.0?" answered from each named document's
own sentence, not by a model shown both look-alikes' passages.

The 1.5B model answered that question "100 GB in 3.0, and 100 MB in 4.0": 100 is the 4.0
notes' figure of a known upload issue, and the 3.0 notes were not among its passages.
Each document the question names (by a version, a year or a name its file name holds and
no other's does) is read for its value of what is asked, as a comparison reads each
document of a kind (`compare.read_values`). Answered with no model call, so taken only
when it surely is what was asked (`_says_it`): in the kind of unit the question asks, from
a clause saying what is asked and not what was. Otherwise the question is the model's.
"""

from __future__ import annotations

import re

from gam_desktop.engine.ask import units
from gam_desktop.engine.ask.compare import (
    DURATION,
    EXTREMES,
    Asked,
    Compared,
    read_values,
    title,
    word_pairs,
)
from gam_desktop.engine.ask.evidence import VERSION, asked_units, qualifiers
from gam_desktop.engine.ask.listing import MAX_KEYS, documents_of
from gam_desktop.engine.ask.paragraphs import statements
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.ask.topic import ASKING
from gam_desktop.engine.ask.words import query_terms, tokenize

MAX_DOCUMENTS = 12
ASKS_VALUE = re.compile(
    r"^\s*compare\b|\b(?:what|how\s+(?:long|much|many|large|big|often|high|low|cold|warm|did"
    r"|has|have|does|do))\b",
    re.IGNORECASE,
)  # "At Tallowmere, after how many minutes …" too
# More is asked than each one's value: a reason, a list, which of them.
BEYOND = re.compile(
    r"\b(?:why|explain|describe|summari[sz]e|list|which|who|whose|where)\b", re.IGNORECASE
)
# The kind of measure a question asks for, by its words: "how long", "the single-file
# size", "what temperature". None of them, or two: no value of a document is sure to be it
# ("how much does it pay": no unit of money is read).
ASKED_KIND = {
    "time": re.compile(
        r"\bhow\s+(?:long|often|soon|quickly)\b|\b(?:time|interval|duration|length|period|"
        r"retention|timeout|delay|deadline|frequency)s?\b",
        re.IGNORECASE,
    ),
    "data": re.compile(r"\b(?:size|capacity|storage|quota)s?\b", re.IGNORECASE),
    "temperature": re.compile(r"\btemperatures?\b|\bhow\s+(?:cold|warm|hot)\b", re.IGNORECASE),
}
# A clause giving a value that was, not one that is: "no longer 30 minutes", "up from 20
# GB"; and "was" where the statement also says what is "now" ("was 60 days; it is now
# 30 days"), not a report's past tense ("The mean air temperature was 8.5 °C").
FORMER = re.compile(
    r"\b(?:previously|formerly|no\s+longer|used\s+to|up\s+from|down\s+from|instead\s+of|"
    r"until|old)\b",
    re.IGNORECASE,
)
WAS = re.compile(r"\b(?:was|were)\b", re.IGNORECASE)
NOW = re.compile(r"\b(?:now|currently|today)\b", re.IGNORECASE)
LENGTH = re.compile(r"\bhow\s+long\b|\b(?:length|duration)\b", re.IGNORECASE)
# Words that say how the values are asked for, not what is measured.
HOW_ASKED = frozenset(
    tokenize("through from to back each respectively version versions release releases")
)


def each_named(tools: MemoryTools, question: str) -> list[Compared] | None:
    """Each document `question` names with its value of what it asks, in the order it
    names them; None when it names fewer than two, asks more than their values, or one of
    them does not give one clearly."""
    values = named_values(tools, question)
    return values if values is not None and len(values) > 1 else None


def named_values(tools: MemoryTools, question: str) -> list[Compared] | None:
    """Each document `question` names (one or more) with its value of what it asks, when
    each surely is that (see `_says_it`): "At Tallowmere, after how many minutes is a page
    escalated?" is not left to a model that answers "15 minutes" from the sentence beside
    "after 30 minutes"; None otherwise."""
    kind = _asked_kind(question)
    if kind is None:
        return None
    named = qualifiers(question)
    found = _named_documents(tools, named)
    if found is None:
        return None
    documents, picked, naming = found
    topic = _topic(question, naming)
    if not topic:
        return None
    # "How long is the rotation": what it lasts, not "each rotation earns 1 day off"
    length = LENGTH.search(question) is not None
    asked = Asked("", topic, kind, "", None, "", word_pairs(question, topic), length)
    weights = {t: 1 / (1 + len(tools.index.containing([t]))) for t in topic}
    read = read_values(tools, {key: documents[key] for key in picked}, asked, weights)
    if read is None or any(value is None for value in read.values()):
        return None
    values = [value for value in read.values() if value is not None]
    texts = {key[0]: tools.corpus.source(key[1]) or "" for key in picked}
    # the words of a name its title gives with it ("Osprine Robotics") are no more asked
    titled = set().union(*(tokenize(title(text)) for text in texts.values()))
    topic = {t for t in topic if t not in titled or t not in tokenize(" ".join(named))}
    if not topic or not all(_says_it(v, question, topic, weights, texts[v.source]) for v in values):
        return None
    order = {key[0]: question.lower().find(name) for key, name in picked.items()}
    return sorted(values, key=lambda value: order.get(value.source, 0))


def _says_it(
    value: Compared, question: str, topic: set[str], weights: dict[str, float], text: str
) -> bool:
    """Whether `value` is surely what `question` asks of its document (`text`): the
    document says every word of `topic` (else it may not speak of the case
    asked: "on battery", "for enterprise accounts"), its clause says the rarest of them
    ("the break after a rotation", not "A rotation lasts 14 days") and any most or least
    asked ("the highest temperature", not the mean), and gives one value that is, not was
    ("was 60 days; it is now 30"), nor a range, nor the question's own figure. Its clause
    says half of `topic` at least, and, asked how long, what lasts."""
    clause = value.sentence
    words = set(tokenize(text))
    heading, item = _statement_of(text, clause)
    said = set(tokenize(f"{heading} {clause}"))
    former = FORMER.search(clause) or (WAS.search(clause) and NOW.search(item))
    rarest = max(weights[t] for t in topic)
    extremes = EXTREMES & topic
    return (
        all(_holds(words, t) for t in topic)
        and any(weights[t] == rarest and _holds(said, t) for t in topic)
        and 2 * sum(_holds(said, t) for t in topic) >= len(topic)
        # asked how long, what lasts ("A rotation lasts 14 days"), not what it earns
        and (not LENGTH.search(question) or DURATION.search(clause) is not None)
        and (not extremes or bool(extremes & said))
        and not former
        and not units.RANGE.search(clause)
        and value.value not in {m.base for m in units.values(question)}
    )


def _asked_kind(question: str) -> str | None:
    """The kind of measure `question` asks, and only that ("how long", "the single-file
    size"): None for a reason, a list, which of them, a second question, or no measure
    or two ("Compare the escalation of …": more than a figure may be meant)."""
    if not ASKS_VALUE.search(question) or BEYOND.search(question) or question.count("?") > 1:
        return None
    kinds = {units.MEASURE_OF[unit] for unit in asked_units(question)}
    kinds = kinds or {kind for kind, words in ASKED_KIND.items() if words.search(question)}
    return next(iter(kinds)) if len(kinds) == 1 else None


Documents = dict[tuple[str, str], list[tuple[str, int, int]]]


def _named_documents(
    tools: MemoryTools, named: list[str]
) -> tuple[Documents, dict[tuple[str, str], str], list[str]] | None:
    """The documents holding the names `named`; of those, each one whose file name a name
    names alone ("3.0" of lumenvault-3.0-release-notes.md), with that name; and the names
    any file name holds. None when none is named alone; when a version or year names none
    ("Lumenvault 5.0"), or a name holds several but not every one named ("2022" of two
    reports, asked of Maalouf's 2023, or "Orbit" of the Orbit notes but not of a Windows
    setup guide named beside them)."""
    holding = {n: tools.index.containing(tokenize(n)) for n in named if tokenize(n)}
    keys = [key for found in holding.values() if len(found) <= MAX_KEYS for key in found]
    documents = documents_of(tools, keys, MAX_DOCUMENTS) if keys else None
    if not documents:
        return None
    holders = {
        name: [key for key in documents if _names(key[0].lower().replace("_", " "), name)]
        for name in named
    }
    if any(not keys and VERSION.fullmatch(name) for name, keys in holders.items()):
        return None  # no such document to read
    picked = {keys[0]: name for name, keys in reversed(holders.items()) if len(keys) == 1}
    shared = [keys for keys in holders.values() if len(keys) > 1]
    if not picked or any(not set(picked) <= set(keys) for keys in shared):
        return None
    # a name no file name holds ("Atlantic", "Mote Isle") may be what is asked
    return documents, picked, [name for name, keys in holders.items() if keys]


def named_answer(values: list[Compared]) -> str:
    """The value, or each document's value by name, then the sentence giving each."""
    if len(values) == 1:
        return f"{values[0].said}.\n\n- **{values[0].document}**: “{values[0].sentence}”"
    head = "; ".join(f"{value.document}: {value.said}" for value in values)
    lines = [f"{head}.", ""]
    lines += [f"- **{value.document}**: “{value.sentence}”" for value in values]
    return "\n".join(lines)


def _names(naming: str, name: str) -> bool:
    """Whether `naming` holds `name` as a whole word or version ("3.0" not in "3.0.1"); a
    file name's underscores are taken for spaces ("borealis_oncall.md")."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w]|\.\d)", naming) is not None


def _holds(words: set[str], term: str) -> bool:
    """Whether `words` hold `term`, or what it denies ("acknowledged" of "unacknowledged":
    a sentence telling what happens when a page is not acknowledged says it)."""
    return term in words or (term.startswith("un") and term[2:] in words)


def _statement_of(text: str, clause: str) -> tuple[str, str]:
    """The heading and the statement (paragraph or list item) of `text` holding `clause`
    ("Defaults" over "Backup interval: every 15 minutes")."""
    for heading, item in statements(text):
        flat = " ".join(item.replace("**", "").split())
        if clause in flat:
            return heading, flat
    return "", clause


def _topic(question: str, names: list[str]) -> set[str]:
    """What is measured: the question's words but the documents' names, its figures and
    the words it asks with."""
    said = set(tokenize(" ".join(names)))
    terms = {t for t in query_terms(question) if not t.isdigit() and len(t) > 1}
    return terms - said - ASKING - HOW_ASKED
