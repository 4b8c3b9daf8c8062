"""Which documents meet a bound, or state the most or least of a measure: "Which companies
require the primary to acknowledge a page within 5 minutes or less?", "Which company has
the longest on-call rotation, and how long is it?" answered by reading each document of
the kind for its value, not by a model comparing eight passages.

The 1.5B model, shown the four policies' passages, named one of the two companies within
5 minutes, or all four; asked for the coldest survey it gave the lowest single reading of
one. Each document of the kind is read for the sentence (or clause) that says most of what
is asked with a value in the unit asked about: "A rotation lasts 14 days", "The mean air
temperature over the survey was 8.5 °C" (its clause, not "with a lowest reading of 3.1
°C"). Then the values are compared. When a document gives no such value, or two of its
sentences say as much with different values, the documents do not settle it and the
question is the model's.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from gam_desktop.engine.ask import units
from gam_desktop.engine.ask.corpus import reader_name
from gam_desktop.engine.ask.evidence import VERSION, qualifiers
from gam_desktop.engine.ask.listing import (
    ANY_KINDS,
    DOCUMENT_KINDS,
    MAX_KEYS,
    NEGATION,
    documents_of,
)
from gam_desktop.engine.ask.paragraphs import statements
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.ask.units import NUMBER, SIGN, UNIT, unit_of
from gam_desktop.engine.ask.words import query_terms, stem, tokenize

MAX_DOCUMENTS = 12  # documents of one kind compared; more and a list is no answer

BOUND = re.compile(
    rf"\b(?P<before>within|under|below|at\s+most|no\s+more\s+than|less\s+than|fewer\s+than|"
    rf"up\s+to|over|above|more\s+than|at\s+least|longer\s+than|shorter\s+than)\s+"
    rf"(?P<n1>{SIGN}{NUMBER})\s*(?P<u1>{UNIT})(?:\s+or\s+(?P<or1>less|fewer|more|"
    rf"under|over|shorter|longer|sooner))?"
    rf"|(?<![\w.,])(?P<n2>{SIGN}{NUMBER})\s*(?P<u2>{UNIT})\s+or\s+(?P<or2>less|fewer|more|"
    rf"under|over|shorter|longer|sooner)\b",
    re.IGNORECASE,
)
# How each bound compares: "within 5 minutes" holds 5, "under 10 days" does not hold 10.
AT_MOST = {"within", "at most", "no more than", "up to", "less", "fewer", "under", "shorter",
           "sooner"}  # fmt: skip
BELOW = {"under", "below", "less than", "fewer than", "shorter than"}
ABOVE = {"over", "above", "more than", "longer than"}
# The most or least of what: the kind of unit it is said in, or any.
SUPERLATIVES = {
    "longest": (max, "time"), "shortest": (min, "time"), "coldest": (min, "temperature"),
    "warmest": (max, "temperature"), "hottest": (max, "temperature"),
    "highest": (max, None), "lowest": (min, None), "largest": (max, None),
    "biggest": (max, None), "smallest": (min, None),
}  # fmt: skip
# What a superlative with no unit of its own ("the lowest …") measures, by the question's word.
MEASURE_WORDS = {stem("temperature"): "temperature"}
# A clause saying one of these gives a most or least of its own ("a lowest reading of 3.1
# °C" beside the mean): the question's superlative may be part of what it asks about.
EXTREMES = frozenset(
    stem(w) for w in [*SUPERLATIVES, "minimum", "maximum", "peak", "max", "min", "record"]
)
# A question naming one of these ("the lowest mean temperature") asks for it, not for an
# extreme reading beside it.
STATISTICS = frozenset(tokenize("mean average median typical total"))
# What the longest or shortest of a time is said with: "A rotation lasts 14 days" is its
# length, "each rotation earns 1 day off" is not.
# (The verb only: "the last 7 days of backups" is no length.)
DURATION = re.compile(r"\b(?:last(?:s|ed|ing)|long|length|duration)\b", re.IGNORECASE)
QUESTION = re.compile(r"^\s*(?:which|what)\s+([^\W\d_]+)(.*)$", re.IGNORECASE | re.DOTALL)
SECOND = re.compile(
    r",?\s*and\s+(?:how\s+(?:long|much|many|large|big|cold|warm|high|low)\s+(?:is|was|are|"
    r"were)\s+(?:it|they|that)|what\s+(?:was|is|are|were)\s+(?:it|they|that)|at\s+what\s+"
    r"(?:temperature|value|size|level))\s*(?=\?|$)",
    re.IGNORECASE,
)  # "…, and how long is it?": the value the answer gives anyway, nothing else
OTHER_PART = re.compile(r"\b(?:and|or|but|except|not|no|without)\b", re.IGNORECASE)
CLAUSE = re.compile(r"(?<=[.!?;])\s+|,\s+(?=with\b|while\b|whereas\b|but\b)")
KIND_WORDS = frozenset(tokenize("company companies document documents"))
# What the bound is to the documents, not what it bounds: "Which companies require the
# primary to acknowledge within 5 minutes" of "The primary must acknowledge within 5
# minutes" (a document saying "required" elsewhere is no closer to the answer for it).
# (The verbs only: "the longest requirements phase" asks about requirements.)
OBLIGED = re.compile(
    r"\b(?:requires?|required|needs?|needed|expects?|expected|demands?)\b(?!\s+(?:phase|"
    r"document|list|gathering|stage)s?\b)",
    re.IGNORECASE,
)
# Who or what any document may be about without saying the word ("Which company …" of
# policies that never say "company"; "Which researcher …" of reports by one).
GENERIC_KINDS = frozenset(
    tokenize(
        "company team organisation organization project product document file note record "
        "author researcher client customer vendor supplier"
    )
)


@dataclass
class Compared:
    """A document's value of what is asked, with the sentence saying it."""

    document: str  # as a reader names it
    value: float  # in the kind's base unit
    said: str  # the value as the document writes it ("14 days")
    sentence: str
    memories: list[str]  # the memories covering that sentence (what is cited)
    source: str = ""  # the document's file name, as the memories' front matter gives it


@dataclass
class Comparison:
    """The documents that meet the bound, or the one with the most or least."""

    chosen: list[Compared]
    others: list[Compared]
    superlative: str = ""  # "longest", or "" for a bound


@dataclass
class Asked:
    kind: str  # stem of what is listed ("compani")
    topic: set[str]  # stems of what is measured ("primari", "acknowledg", "page")
    unit_kind: str | None
    pick: str  # "max", "min", "at most", "below", "above", "at least"
    limit: float | None
    phrase: str  # the bound or the superlative as the question writes it
    # its words, side by side: ("acknowledg", "page")
    pairs: frozenset[tuple[str, str]] = frozenset()
    length: bool = False  # the longest or shortest: a clause saying what lasts says more


def compare_documents(tools: MemoryTools, question: str) -> Comparison | None:
    """The documents of the kind `question` lists that meet its bound ("within 5 minutes or
    less"), or the one with the most or least ("the longest rotation"), each with the
    sentence giving its value; None when the question is no such comparison, or the
    documents do not settle it."""
    asked = _parse(question)
    if asked is None or not asked.topic:
        return None
    holding = {t: tools.index.containing([t]) for t in asked.topic}
    found = sorted((t for t, keys in holding.items() if keys), key=lambda t: len(holding[t]))
    if not found or len(holding[found[0]]) > MAX_KEYS:
        return None
    # the documents holding its two rarest words
    documents = _documents(tools, [key for t in found[:2] for key in holding[t]])
    if documents is None or len(documents) < 2:
        return None
    weights = {t: 1 / (1 + len(keys)) for t, keys in holding.items()}  # the rarer, the more
    read = read_values(tools, documents, asked, weights)
    if read is None:
        return None
    values = _of_one_kind(read)
    if values is None or not _of_asked_kind(tools, read, asked, question):
        return None
    # The rest of the family, though they lack the words ("Refrigerators are held at 2 °C"
    # of "fridges"): one of them may be the answer, and must give a value too.
    family = _family(read)
    kin = _documents(tools, [k for word in family for k in tools.index.containing([word])])
    unread = {key: memories for key, memories in (kin or {}).items() if key[0] not in read}
    unread = {key: m for key, m in unread.items() if _name_words(key[0]) & family}
    more = read_values(tools, unread, asked, weights) if kin is not None else None
    if more is None or any(value is None for value in more.values()):
        return None
    values += [value for value in more.values() if value is not None]
    chosen = _chosen(values, asked)
    if chosen is None:
        return None
    others = [v for v in values if v not in chosen]
    superlative = asked.phrase if asked.pick in ("max", "min") else ""
    return Comparison(chosen, others, superlative)


def read_values(
    tools: MemoryTools,
    documents: dict[tuple[str, str], list[tuple[str, int, int]]],
    asked: Asked,
    weights: dict[str, float],
) -> dict[str, Compared | None] | None:
    """Each document's value of what is asked (None: it gives none clearly), with the
    memories covering the clause giving it; None when a document cannot be read."""
    read: dict[str, Compared | None] = {}
    for (name, digest), memories in documents.items():
        text = tools.corpus.source(digest)
        if not text:
            return None  # a document that cannot be read may be the answer
        value = _value(text, name, asked, weights)
        if value is None:
            read[name] = None
            continue
        said, amount, sentence = value
        at = _position(text, sentence)
        covering = [m for m, start, end in memories if start <= at < end]
        document = reader_name(name)
        read[name] = Compared(document, amount, said, sentence, covering or [memories[0][0]], name)
    return read


def _chosen(values: list[Compared], asked: Asked) -> list[Compared] | None:
    """The documents whose value is the most or least, or within the bound; None when all
    are the most (nothing told apart)."""
    if asked.pick in ("max", "min"):
        best = (max if asked.pick == "max" else min)(v.value for v in values)
        chosen = [v for v in values if v.value == best]
        return None if len(chosen) == len(values) else chosen
    limit = asked.limit if asked.limit is not None else 0.0
    return [v for v in values if _held(v.value, asked.pick, limit)]


def _held(value: float, pick: str, limit: float) -> bool:
    if pick == "at most":
        return value <= limit
    if pick == "below":
        return value < limit
    if pick == "above":
        return value > limit
    return value >= limit


def comparison_answer(comparison: Comparison) -> str:
    """The documents chosen by name, each with the sentence giving its value; then how
    many others there were, with their values."""
    chosen = comparison.chosen
    if not chosen:
        said = ", ".join(v.said for v in comparison.others)
        return f"None of the {len(comparison.others)} documents: they state {said}."
    names = [v.document for v in chosen]
    head = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    if comparison.superlative:
        head = f"{head}: {chosen[0].said}, the {comparison.superlative}"
    lines = [f"{head}.", ""]
    lines += [f"- **{v.document}**: “{v.sentence}”" for v in chosen]
    if comparison.others:
        said = ", ".join(v.said for v in sorted(comparison.others, key=lambda v: v.value))
        others = (
            "The other states"
            if len(comparison.others) == 1
            else (f"The other {len(comparison.others)} state")
        )
        lines += ["", f"{others} {said}."]
    return "\n".join(lines)


def _parse(question: str) -> Asked | None:
    match = QUESTION.match(question)
    if match is None or VERSION.search(question):
        return None
    kind = stem(match.group(1).lower())
    if kind not in DOCUMENT_KINDS | ANY_KINDS and kind not in KIND_WORDS:
        return None
    rest = SECOND.sub(" ", match.group(2))
    if re.search(r"[.?!]\s+\S", rest):
        return None  # "… longest rotation? Explain why.": more is asked than the values
    if len(BOUND.findall(rest)) > 1:
        return None  # "below 5 °C within 90 minutes": two bounds
    bound = BOUND.search(rest)
    superlatives = [w for w in re.findall(r"[a-z]+", rest.lower()) if w in SUPERLATIVES]
    if bool(bound) == bool(superlatives) or len(superlatives) > 1:
        return None  # neither, or both: not one comparison
    if bound is not None:
        written = bound.group("n1") or bound.group("n2")
        unit = unit_of(bound.group("u1") or bound.group("u2") or "", glued=False)
        word = (bound.group("or1") or bound.group("or2") or bound.group("before") or "").lower()
        amount = units.number(written)
        if unit is None or amount is None:
            return None
        measured, size = unit
        unit_kind: str | None = measured
        pick = _bound_pick(" ".join(word.split()), bool(bound.group("or1") or bound.group("or2")))
        phrase, limit = bound.group().strip(), amount * size
        rest = rest[: bound.start()] + " " + rest[bound.end() :]
    else:
        pick_fn, unit_kind = SUPERLATIVES[superlatives[0]]
        pick, phrase, limit = ("max" if pick_fn is max else "min"), superlatives[0], None
    if OTHER_PART.search(rest) or NEGATION.search(rest):
        return None  # "… and no pager", "… or longer shifts": more than one comparison
    topic = {t for t in query_terms(rest) if not t.isdigit() and len(t) > 1}  # not "'s"
    topic -= {stem(s) for s in SUPERLATIVES}
    # "the lowest" of what: only a measure the question names ("temperature") is compared
    unit_kind = unit_kind or next((MEASURE_WORDS[t] for t in topic if t in MEASURE_WORDS), None)
    if unit_kind is None:
        return None  # "the highest priority": a number of no unit, or of any
    topic -= KIND_WORDS | set(tokenize(" ".join(OBLIGED.findall(rest))))
    length = phrase in ("longest", "shortest")
    return Asked(kind, topic, unit_kind, pick, limit, phrase, word_pairs(rest, topic), length)


def word_pairs(text: str, topic: set[str]) -> frozenset[tuple[str, str]]:
    """The words of `topic` that `text` says side by side, in its order."""
    terms = query_terms(text)
    return frozenset(p for p in itertools.pairwise(terms) if set(p) <= topic)


def _bound_pick(word: str, trailing: bool) -> str:
    """How a value is held to the bound: "within 5 minutes", "5 minutes or less": at most;
    "under 10 days": below; "more than 3": above; "at least 2 GB", "2 GB or more": at
    least."""
    if trailing:
        return "at most" if word in AT_MOST else "at least"
    if word in BELOW:
        return "below"
    if word in ABOVE:
        return "above"
    return "at most" if word in AT_MOST else "at least"


def _of_asked_kind(
    tools: MemoryTools, read: dict[str, Compared | None], asked: Asked, question: str
) -> bool:
    """Whether the documents compared are what the question lists: "reports" have the word
    in their names; one of the "kitchens" at least says the word (on-call policies are
    no kitchens); and none is named by the question ("Which team at Acme …" is about one
    of them, not a comparison of all)."""
    names = [set(_name_words(name)) for name in read]
    if asked.kind in DOCUMENT_KINDS and not all(asked.kind in words for words in names):
        return False
    if asked.kind not in GENERIC_KINDS and not any(asked.kind in words for words in names):
        # "kitchens": one of them at least says it is one, or the others are meant
        holders = _documents(tools, tools.index.containing([asked.kind])) or {}
        if not {name for name, _digest in holders} & set(read):
            return False
    named = set(tokenize(" ".join(qualifiers(question))))
    return not any(named & words for words in names)


def _of_one_kind(read: dict[str, Compared | None]) -> list[Compared] | None:
    """The values of the documents of the kind compared: those sharing a word of their
    names with most of the documents that gave a value ("oncall", "policy"); None when
    one of them gave none (it may be the answer), a document outside them gave one (which
    kind is meant is unclear), or fewer than two did."""
    family = _family(read)
    valued = [name for name, value in read.items() if value is not None]
    kind = [name for name in read if _name_words(name) & family]
    values = [value for name in kind if (value := read[name]) is not None]
    if not family or len(values) < 2 or len(values) < len(kind) or len(values) < len(valued):
        return None  # one of the family gave none, or one of another family gave one
    return values


def _family(read: dict[str, Compared | None]) -> set[str]:
    """The words of their names most of the documents that gave a value share."""
    valued = [name for name, value in read.items() if value is not None]
    counts: dict[str, int] = {}
    for name in valued:
        for word in _name_words(name):
            counts[word] = counts.get(word, 0) + 1
    return {word for word, count in counts.items() if 2 * count > len(valued)}


def _name_words(name: str) -> set[str]:
    return {w for w in tokenize(name.rsplit(".", 1)[0]) if not w.isdigit()}


def _documents(
    tools: MemoryTools, keys: list[str]
) -> dict[tuple[str, str], list[tuple[str, int, int]]] | None:
    return documents_of(tools, keys, MAX_DOCUMENTS)


def _value(
    text: str, name: str, asked: Asked, weights: dict[str, float]
) -> tuple[str, float, str] | None:
    """The value document `name` gives of what is asked: as written, in the base unit, and
    the sentence or clause giving it. Its words count by their rarity (what "on-call"
    says of the question, "calls the phone" says too), its heading's half as much. None
    when none says half of it with a value of the unit asked about, or two say as much
    with different values, or the best says no more than another with another value but
    for a word less telling than its most telling ("On-call … each completed weekday
    rotation earns 1 day off" beside "The weekday rotation lasts 5 days")."""
    # the question's words the document uses: "require" is asked, "must" is written
    topic = (asked.topic - set(tokenize(name))) & set(tokenize(text))
    whole = sum(weights.get(t, 0.0) for t in topic)
    heaviest = max((weights.get(t, 0.0) for t in topic), default=0.0)
    # what the title says ("On-call policy") is said of all the document says
    untitled = topic - set(tokenize(title(text)))
    scored: list[tuple[float, str, float, str]] = []
    for heading, item in statements(text):
        flat = " ".join(item.replace("**", "").split()).lstrip("-*•+ ")
        for clause in _clauses(flat, asked.unit_kind):
            values = _values(clause, asked.unit_kind)
            own = topic & set(tokenize(clause))
            above = topic & set(tokenize(heading)) - own
            said = (
                sum(weights.get(t, 0.0) for t in own) + sum(weights.get(t, 0.0) for t in above) / 2
            )
            # the question's words as it joins them say more of it: "acknowledge a page",
            # not "the page is not acknowledged" of the escalation beside it
            joined = asked.pairs & word_pairs(clause, topic)
            said += sum(min(weights.get(a, 0.0), weights.get(b, 0.0)) for a, b in joined)
            if asked.length and own and untitled <= own and DURATION.search(clause):
                said += whole  # saying all that is asked, and how long it lasts
            scored.append((round(said, 9), values[0][0], values[0][1], clause))
    scored.sort(key=lambda item: -item[0])
    if not scored or scored[0][0] == 0 or 2 * scored[0][0] < whole:
        return None
    if asked.pick in ("max", "min") and any(_extreme(c, asked) for *_, c in scored):
        return None  # "a lowest reading of 3.1 °C": the most or least may be its own value
    said, written, amount, clause = scored[0]
    named = STATISTICS & asked.topic
    if named and not named & set(tokenize(clause)):
        return None  # "the lowest average": a minimum is none
    rival = next((s[0] for s in scored if s[2] != amount), 0.0)
    if said - rival < heaviest / 2 - 1e-9:
        return None  # another value, said almost as well: which is meant is unclear
    return written, amount, clause.rstrip(";,: ")


def title(text: str) -> str:
    """The document's title: its first heading, else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    heading = next((line for line in lines if line.startswith("#")), None)
    return (heading or (lines[0] if lines else "")).lstrip("# ")


def _clauses(text: str, unit_kind: str | None) -> list[str]:
    """The sentences of `text` giving one value of the unit asked about; one giving two
    ("The mean air temperature was 13.2 °C, the highest reading 19.4 °C") in its parts
    between commas that give one each."""
    found = []
    for sentence in CLAUSE.split(text):
        values = _values(sentence, unit_kind)
        if len(values) == 1:
            found.append(sentence)
        elif len(values) > 1:
            found += [p for p in re.split(r",\s+", sentence) if len(_values(p, unit_kind)) == 1]
    return found


def _extreme(clause: str, asked: Asked) -> bool:
    """Whether a part of `clause` (between commas) gives a most or least of its own in the
    unit asked about ("with a lowest reading of 3.1 °C"), unless the question names a
    statistic that part does not ("the lowest mean temperature"). "The maximum is 2
    consecutive rotations, then at least ten days off" gives a most of a count."""
    for part in re.split(r"[,;]\s+", clause):
        words = set(tokenize(part))
        if EXTREMES & words and _values(part, asked.unit_kind):
            named = STATISTICS & asked.topic
            if not named or named & words:
                return True
    return False


def _values(clause: str, unit_kind: str | None) -> list[tuple[str, float]]:
    return [(m.written, m.base) for m in units.values(clause, unit_kind)]


def _position(text: str, sentence: str) -> int:
    """Where in `text` `sentence` starts, as `_value` quotes it (without bold or line
    breaks); -1 when it is not there."""
    flat: list[str] = []
    origin: list[int] = []
    at, spaced = 0, True
    while at < len(text):
        if text.startswith("**", at):
            at += 2
            continue
        char = text[at]
        if not char.isspace():
            flat.append(char)
            origin.append(at)
        elif not spaced:
            flat.append(" ")
            origin.append(at)
        spaced = char.isspace()
        at += 1
    found = "".join(flat).find(sentence)
    return origin[found] if found >= 0 else -1
