"""One measure in each document a question names: "What was the maximum single-file size
in Lumenvault 3.0, and what is it in Lumenvault 4.0?" answered from each named document's
own sentence, not by a model shown both look-alikes' passages.

The 1.5B model answered that question "100 GB in 3.0, and 100 MB in 4.0": 100 is the 4.0
notes' figure of a known upload issue, and the 3.0 notes were not among its passages.
Each document the question names (by a version, a year or a name that its file name or
title holds, and no other document's does) is read for its value of what is asked, as a
comparison reads each document of a kind (`compare.read_values`). When one of them gives
none clearly, or they give values of different kinds, the question is the model's.
"""

from __future__ import annotations

import re

from gam_desktop.engine.ask import units
from gam_desktop.engine.ask.compare import Asked, Compared, read_values, word_pairs
from gam_desktop.engine.ask.evidence import VERSION, asked_units, qualifiers
from gam_desktop.engine.ask.listing import MAX_KEYS, documents_of
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
# A measure the question asks for: "how long", "the maximum single-file size".
MEASURED = re.compile(
    r"\bhow\s+(?:long|much|many|large|big|often|high|low|cold|warm|far|old)\b|\b(?:time|size|"
    r"interval|duration|length|period|limit|temperature|retention|frequency|delay|timeout|"
    r"deadline|capacity|speed|rate|price|cost|fee|pay|budget)s?\b",
    re.IGNORECASE,
)
LENGTH = re.compile(r"\bhow\s+long\b|\b(?:length|duration)\b", re.IGNORECASE)
# Words that say how the values are asked for, not what is measured.
HOW_ASKED = frozenset(tokenize("through from to each respectively version versions release"))


def each_named(tools: MemoryTools, question: str) -> list[Compared] | None:
    """Each document `question` names with its value of what it asks, in the order it
    names them; None when it names fewer than two, asks more than their values, or one of
    them does not give one clearly."""
    values = _named_values(tools, question)
    return values if values is not None and len(values) > 1 else None


def one_named(tools: MemoryTools, question: str) -> Compared | None:
    """The value of what `question` asks that the one document it names gives, when that
    document gives one clearly in a sentence saying at least half of what is asked: the
    answer to stand in for the model's when the model's fails its checks ("after 15
    minutes", from the sentence beside "after 30 minutes")."""
    values = _named_values(tools, question)
    if values is None or len(values) != 1:
        return None
    value = values[0]
    topic = _topic(question, qualifiers(question))
    said = topic & set(tokenize(value.sentence))
    return value if 2 * len(said) >= len(topic) else None


def _named_values(tools: MemoryTools, question: str) -> list[Compared] | None:
    if not _asks_a_measure(question):
        return None
    named = qualifiers(question)
    found = _named_documents(tools, named)
    if found is None:
        return None
    documents, picked, naming = found
    topic = _topic(question, naming)
    if not topic:
        return None
    kinds = {units.MEASURE_OF[unit] for unit in asked_units(question)}
    kind = next(iter(kinds)) if len(kinds) == 1 else None
    # "How long is the rotation": what it lasts, not "each rotation earns 1 day off"
    length = LENGTH.search(question) is not None
    asked = Asked("", topic, kind, "", None, "", word_pairs(question, topic), length)
    weights = {t: 1 / (1 + len(tools.index.containing([t]))) for t in topic}
    read = read_values(tools, {key: documents[key] for key in picked}, asked, weights)
    if read is None or any(value is None for value in read.values()):
        return None
    values = [value for value in read.values() if value is not None]
    if len({_kind(value.said) for value in values}) != 1:
        return None  # "20 GB" of one, "30 days" of another: not one measure
    order = {key[0]: question.lower().find(name) for key, name in picked.items()}
    return sorted(values, key=lambda value: order.get(value.source, 0))


def _asks_a_measure(question: str) -> bool:
    """Whether `question` asks only a measure ("how long", "the single-file size"): not
    a reason, a list or which of them; one question."""
    if not ASKS_VALUE.search(question) or BEYOND.search(question) or question.count("?") > 1:
        return False
    # "Compare the escalation of …" names no measure: more than a figure may be meant
    return bool(MEASURED.search(question) or asked_units(question))


Documents = dict[tuple[str, str], list[tuple[str, int, int]]]


def _named_documents(
    tools: MemoryTools, named: list[str]
) -> tuple[Documents, dict[tuple[str, str], str], list[str]] | None:
    """The documents holding the names `named`; of those, each one a name names alone
    ("3.0" of the 3.0 notes), with that name; and the names any of them is named by. None
    when none is named alone, or a version names none ("Lumenvault 5.0")."""
    holding = {n: tools.index.containing(tokenize(n)) for n in named if tokenize(n)}
    keys = [key for found in holding.values() if len(found) <= MAX_KEYS for key in found]
    documents = documents_of(tools, keys, MAX_DOCUMENTS) if keys else None
    if not documents:
        return None
    titled = {key: _naming(key[0], tools.corpus.source(key[1]) or "") for key in documents}
    picked: dict[tuple[str, str], str] = {}
    for name in named:
        holders = [key for key, text in titled.items() if _names(text, name)]
        if len(holders) == 1:
            picked.setdefault(holders[0], name)
        elif not holders and "." in name and VERSION.fullmatch(name):
            return None  # no such document to read
    if not picked:
        return None
    # a name no document's own name holds ("Atlantic", "Mote Isle") may be what is asked
    naming = [name for name in named if any(_names(text, name) for text in titled.values())]
    return documents, picked, naming


def each_named_answer(values: list[Compared]) -> str:
    """Each document's value by name, then the sentence giving each."""
    head = "; ".join(f"{value.document}: {value.said}" for value in values)
    lines = [f"{head}.", ""]
    lines += [f"- **{value.document}**: “{value.sentence}”" for value in values]
    return "\n".join(lines)


def one_named_answer(value: Compared) -> str:
    """The value, then the document and its sentence giving it."""
    return f"{value.said}.\n\n- **{value.document}**: “{value.sentence}”"


def _naming(name: str, text: str) -> str:
    """What names a document: its file name and its title (first line)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return f"{name} {first}".lower()


def _names(naming: str, name: str) -> bool:
    """Whether `naming` holds `name` as a whole word or version ("3.0" not in "3.0.1")."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w]|\.\d)", naming) is not None


def _topic(question: str, names: list[str]) -> set[str]:
    """What is measured: the question's words but the documents' names, its figures and
    the words it asks with."""
    said = set(tokenize(" ".join(names)))
    terms = {t for t in query_terms(question) if not t.isdigit() and len(t) > 1}
    return terms - said - ASKING - HOW_ASKED


def _kind(written: str) -> str:
    found = units.values(written)
    return found[0].kind if found else ""
