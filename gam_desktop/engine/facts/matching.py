"""Which known facts a turn replaces or takes back, read from its language (said.py) and
the words facts share, never from a subject: nothing here knows homes, jobs or pets.

A proposal is strong when the user's own words say it: they take something back ("forget
what I said about the bake sale"), name the value that no longer holds ("from 3
May to 10 May", "instead of 40", "not Lark Hall"), or restate a fact in the same
words with another value while saying that it changed ("I live in Braga now" after "I live
in Porto"; "the quiz is now on Friday"). A strong proposal stands whatever the model
decides; the others are hints in the reconciliation prompt.

Words are weighed by their rarity among the facts (BM25's IDF without its length terms,
which turn negative on the few short texts a new memory has).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gam_desktop.engine.facts import lexicon as lx
from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.facts.said import Said, shape
from gam_desktop.engine.retrieval.words import query_terms
from gam_desktop.engine.textutil import stem

NEIGHBOURS = 5  # existing facts shown per new fact

UPDATE, DELETE = "UPDATE", "DELETE"
# What says it, strongest first: the user takes it back, names the old value, restates it
# in the same words with another value, says it changed and a value of its kind differs.
TAKEN_BACK, OLD_VALUE, SAME_WORDS, CHANGED_VALUE = "taken back", "old value", "same", "changed"
_COMMON = frozenset({"user", "user'", "the", "s"})  # every fact is about "the user"
_WORD = re.compile(r"[^\W_]+(?:[.:'’-][^\W_]+)*", re.UNICODE)
_FILLER = re.compile(
    r"\b(now|still|actually|currently|again|instead|also|just|really|finally|anymore|"
    r"any more|after all|from now on|these days|nowadays)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Proposal:
    old: Fact
    new: int | None  # the index of the new fact that replaces it (None: no new fact does)
    event: str  # UPDATE or DELETE
    strong: bool
    by: str  # TAKEN_BACK, OLD_VALUE, SAME_WORDS or CHANGED_VALUE
    statement: str = ""  # an UPDATE's new statement when no new fact gives it


@functools.lru_cache(maxsize=20_000)
def terms(text: str) -> frozenset[str]:
    """The search terms of a statement that say what it is about (not "the user"); kept,
    since every turn weighs every fact's."""
    return frozenset(t for t in query_terms(text) if t not in _COMMON and t not in lx.LIGHT_WORDS)


def about_the_same(a: str, b: str) -> bool:
    """Whether two statements share a word that says what they are about (terms: not a
    filler like "instead" nor a contraction's tail like the "m" of "I'm")."""
    return bool(terms(a) & terms(b))


def shares_beyond_values(a: str, b: str, values_of_change: set[str]) -> bool:
    """Whether `a` and `b` share a word that is neither one of `values_of_change` nor a
    date or a number: what they are both about, besides what changed and when. What a
    number counts or measures is part of its value ("4 euros", "80 people"): two prices in
    one currency are not one fact because of it; it is what they are about only when
    neither says anything else ("I have 2 cats", "I have 3 cats now")."""
    beyond = [_words_beyond(text, values_of_change, counted=True) for text in (a, b)]
    if beyond[0] & beyond[1]:
        return True
    either_says_more = bool(beyond[0]) and bool(beyond[1])
    with_counted = [_words_beyond(text, values_of_change, counted=False) for text in (a, b)]
    return not either_says_more and bool(with_counted[0] & with_counted[1])


def swapped_values(a: str, b: str) -> set[str]:
    """The values each of `a` and `b` gives that the other does not write (a name that
    opens one sentence is still the other's value: "Acme moved it" after "the meeting at Acme")."""
    return {
        value
        for text, other in ((a, b), (b, a))
        for value in values(text)
        if not ((pattern := _value_pattern(value)) and pattern.search(other))
    }


def _words_beyond(text: str, values_of_change: set[str], counted: bool) -> frozenset[str]:
    """The terms of `text` without `values_of_change`, dates and numbers (and, `counted`,
    the word after a number of the change: what it counts)."""
    for value in sorted(values_of_change, key=len, reverse=True):
        pattern = _value_pattern(value, counted and value_shape(value) == "number")
        text = pattern.sub(" ", text) if pattern else text
    words = [w for w in _WORD.findall(text) if shape(w) != "number"]
    return terms(" ".join(w for w in words if value_shape(w) == "name"))


@functools.cache
def _when() -> frozenset[str]:
    """The terms that say when, not what: "the tasting is now on 3 June in the evening"
    is not about a lecture held on Monday evenings."""
    return terms(" ".join(lx.TIMES_OF_DAY | lx.WEEKDAYS | lx.MONTHS))


class Rarity:
    """Each term's weight among the known facts: rarer terms say more."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self.documents = [terms(f"{fact.subject} {fact.statement}") for fact in facts]
        frequency = Counter(term for words in self.documents for term in words)
        self.size = max(len(self.documents), 1)
        self.weight = {term: math.log(1 + self.size / n) for term, n in frequency.items()}

    def of(self, term: str) -> float:
        return self.weight.get(term, math.log(1 + self.size))  # unseen: the rarest

    def shared(self, a: frozenset[str], b: frozenset[str]) -> float:
        return sum(self.of(t) for t in a & b)

    def covers(self, a: frozenset[str], b: frozenset[str]) -> bool:
        """Whether `b` holds most of what `a` says (more than half its weight): "the Vigo
        regatta" is not "small regattas along the coast"."""
        total = sum(self.of(t) for t in a)
        return total > 0 and self.shared(a, b) > total / 2


def neighbourhood(existing: list[Fact], queries: list[str]) -> list[Fact]:
    """The existing facts most related to the new statements (and to what the turn takes
    back or says no longer holds): the best few for each by their shared rare words."""
    if not existing or not queries:
        return []
    rarity = Rarity(existing)
    chosen: dict[str, Fact] = {}
    for query in queries:
        words = terms(query)
        scores = [rarity.shared(words, document) for document in rarity.documents]
        ranked = sorted(range(len(existing)), key=lambda i: -scores[i])
        for i in ranked[:NEIGHBOURS]:
            if scores[i] > 0:
                chosen.setdefault(existing[i].id, existing[i])
    return list(chosen.values())


# -- values and frames -------------------------------------------------------------------


def values(statement: str) -> list[str]:
    """The values a statement gives: numbers, dates and times, names (capitalized words
    past the first), each run of them as one value ("9 June", "Lark Hall")."""
    return list(_values(statement))


@functools.lru_cache(maxsize=20_000)
def _values(statement: str) -> tuple[str, ...]:
    runs: list[str] = []
    current: list[str] = []
    for i, word in enumerate(_WORD.findall(statement)):
        kind = shape(word)
        month = word.lower() in lx.MONTHS
        if (kind == "number" or month or (kind == "name" and i > 0)) and word != "I":
            current.append(word)
            continue
        if current:
            runs.append(" ".join(current))
            current = []
    if current:
        runs.append(" ".join(current))
    return tuple(runs)


def value_shape(value: str) -> str:
    words = value.lower().split()
    if any(w in lx.MONTHS or w in lx.WEEKDAYS for w in words):
        return "date"
    if any(shape(w) == "number" for w in words):
        return "number"
    return "name"


@functools.lru_cache(maxsize=20_000)
def frame(statement: str) -> str:
    """The statement without its values and fillers: "The user lives in Porto now." and
    "I live in Braga." are both "user live in _"."""
    text = _FILLER.sub(" ", statement)
    for value in sorted(values(text), key=len, reverse=True):
        text = text.replace(value, " _ ")
    text = re.sub(r"^\s*(i|i'm|i am)\b", "user", text, flags=re.IGNORECASE)
    text = re.sub(r"\bmy\b", "user", text, flags=re.IGNORECASE)
    return " ".join(stem(w) if w != "_" else w for w in re.findall(r"_|[^\W_]+", text.lower()))


def _same_someone(a: str, b: str) -> bool:
    """Whether two statements are about the same someone as far as names say: the names
    among their first words (where a sentence says who: "The user's sister Anne lives…")
    are the same, or one has none. "My sister Anne …" is not "my sister Marie …"."""
    first = [_first_names(s) for s in (a, b)]
    return not first[0] or not first[1] or bool(first[0] & first[1])


def _named_alike(a: str, b: str) -> bool:
    """Whether two statements say who they are about with the same names ("Bram joins on
    Monday…", "Bram asked to move to…"; a name may open the sentence): about one someone,
    whatever else they say. All the names of one are the other's: "Mr. Dunn" is not "Mr.
    Dunne"."""
    first = [
        {n for n in _first_names(s) | _opening_name(s) if value_shape(n) == "name"} for s in (a, b)
    ]
    return bool(first[0] and first[1]) and (first[0] <= first[1] or first[1] <= first[0])


def _opening_name(statement: str) -> set[str]:
    """The statement's first word when it is a name: capitalized, saying something (not
    "The"), and not "I" ("I'm", "I've")."""
    words = _WORD.findall(statement)[:1]
    bases = [re.split(r"['’]", w)[0] for w in words]
    return {b.lower() for b in bases if shape(b) == "name" and terms(b) and b != "I"}


def _first_names(statement: str) -> set[str]:
    """The names among the statement's first four words (a number or a date there says
    how much or when, not who: "Our espresso is 4 euros" is about the espresso of "Our
    espresso is 3 euros")."""
    opening = " ".join(_WORD.findall(statement)[:4])
    return {v.lower() for v in values(opening) if value_shape(v) == "name"}


def _holds(statement: str, value: str) -> bool:
    """Whether `statement` names `value` (its words in a row, case aside)."""
    pattern = _value_pattern(value)
    return pattern is not None and bool(pattern.search(statement))


@functools.lru_cache(maxsize=2_000)
def _value_pattern(value: str, counted: bool = False) -> re.Pattern[str] | None:
    words = [re.escape(w) for w in _WORD.findall(value)]
    unit = lx.UNIT_AFTER_NUMBER if counted else ""
    joined = r"\b" + r"\W+".join(words) + r"\b" + unit
    return re.compile(joined, re.IGNORECASE) if words else None


# -- proposals -----------------------------------------------------------------------------


def proposals(said: Said, existing: list[Fact], new: list[str]) -> list[Proposal]:
    """What the turn replaces or takes back among the `existing` facts (each proposed once;
    each new statement replaces at most one), strongest evidence first."""
    if not existing:
        return []
    rarity = Rarity(existing)
    found: list[Proposal] = []

    def taken(fact: Fact, n: int | None) -> bool:
        return any(p.old.id == fact.id or (n is not None and p.new == n) for p in found)

    for proposal in [
        *_retracted(said, existing, new, rarity),
        *_named_old(said, existing, new, rarity),
        *_restated(said, existing, new, rarity),
    ]:
        if not taken(proposal.old, proposal.new):
            found.append(proposal)
    return found


def _best(rarity: Rarity, existing: list[Fact], words: frozenset[str]) -> Fact | None:
    """The fact sharing the most (rare) words with `words` (the latest of equals), when it
    holds most of what they say."""
    scored = sorted(
        ((rarity.shared(words, doc), i) for i, doc in enumerate(rarity.documents)),
        key=lambda pair: (-pair[0], -existing[pair[1]].updated.timestamp()),
    )
    if not scored or not rarity.covers(words, rarity.documents[scored[0][1]]):
        return None
    return existing[scored[0][1]]


def _retracted(said: Said, existing: list[Fact], new: list[str], rarity: Rarity) -> list[Proposal]:
    """ "Forget what I said about X", "X: that's no longer true", "I've quit X": the fact
    about X is taken back; a new statement about X (often "no longer …") follows it."""
    out = []
    for about in said.retracted:
        words = terms(about)
        target = _best(rarity, existing, words)
        if target is None:
            continue
        theirs = terms(target.statement)
        following = [
            n
            for n, s in enumerate(new)
            if rarity.covers(words, terms(s)) or rarity.covers(_said(s), theirs)
        ]
        negated = [n for n in following if lx.NEGATION.search(new[n])]
        follower = negated[0] if negated else following[0] if following else None
        out.append(Proposal(target, follower, DELETE, True, TAKEN_BACK))
    return out


def _said(statement: str) -> frozenset[str]:
    """The terms of a statement without its negation ("no longer plays" says "play")."""
    return terms(lx.NEGATION.sub(" ", statement))


def _named_old(said: Said, existing: list[Fact], new: list[str], rarity: Rarity) -> list[Proposal]:
    """ "moved … from 3 May to 10 May", "instead of 40", "not Lark Hall": the
    fact naming the old value, most like a new statement, is replaced by it; when several
    facts name it, each new statement replaces the one most like it ("…meet at Ink and Oak,
    not Lark Hall. More room, and they open late." replaces both where the venue was named
    and where its hours were)."""
    out = []
    for value in said.old_values:
        holding = [f for f in existing if _holds(f.statement, value)]
        pairs: list[tuple[float, Fact, int]] = []
        for n, statement in enumerate(new):
            words = terms(statement) - terms(value)
            for fact in holding:
                score = rarity.shared(words, terms(fact.statement))
                if score > 0:
                    pairs.append((score, fact, n))
        pairs.sort(key=lambda pair: -pair[0])  # the best first: proposals() takes each once
        out += [Proposal(fact, n, UPDATE, True, OLD_VALUE) for _score, fact, n in pairs]
        if not pairs and value in said.new_values:  # no new fact says it: the old one, anew
            out += _substituted(said, value, holding, rarity)
    return out


def _substituted(said: Said, value: str, holding: list[Fact], rarity: Rarity) -> list[Proposal]:
    """ "moved our bake sale from 4 June to 11 June" when the model stated nothing:
    the fact about it, most like the user's sentence, with 11 June for 4 June."""
    new = said.new_values[value]
    sentence = next((s for s in re.split(r"(?<=[.!?;])\s+", said.own) if _holds(s, value)), "")
    words = terms(sentence) - terms(value) - terms(new)
    scored = [(rarity.shared(words, terms(f.statement)), f) for f in holding]
    scored = [(score, f) for score, f in scored if score > 0]
    if not scored:
        return []
    fact = max(scored, key=lambda pair: (pair[0], pair[1].updated.timestamp()))[1]
    pattern = _value_pattern(value)
    statement = pattern.sub(new, fact.statement, count=1) if pattern else fact.statement
    return [Proposal(fact, None, UPDATE, True, OLD_VALUE, statement)]


def _restated(said: Said, existing: list[Fact], new: list[str], rarity: Rarity) -> list[Proposal]:
    """The same words with another value: strong when the user says it changed ("now",
    "moved", "instead"), else a hint. Also, when they say it changed, the fact most like
    the new statement whose value of the same kind (a date for a date) it no longer names."""
    out = []
    for n, statement in enumerate(new):
        mine = values(statement)
        own = terms(statement)
        for fact, document in zip(existing, rarity.documents, strict=True):
            theirs = values(fact.statement) if own & document else []  # same words: some shared
            if not mine or not theirs or set(mine) == set(theirs):
                continue
            if frame(statement) == frame(fact.statement) and _same_someone(
                statement, fact.statement
            ):
                out.append(Proposal(fact, n, UPDATE, said.changes, SAME_WORDS))
        target = _changed_value(statement, mine, existing, rarity) if said.changes else None
        if target is not None:
            out.append(Proposal(target, n, UPDATE, True, CHANGED_VALUE))
    return out


def _names_what_it_names(
    clause: str, statement: str, fresh: list[str], document: frozenset[str]
) -> bool:
    """Whether what the clause giving the `fresh` values is about (its words beyond them,
    what they count or measure, and when; the whole statement's when the clause says
    nothing else) is something the fact names, or there is nothing of the kind: a new
    dish "on the menu now: 4 euros a cup" shares only the currency with another dish's
    price, while "I have 3 cats now" says nothing beyond its count."""
    changed = set(fresh)
    for text in (clause, statement):
        if words := _words_beyond(text, changed, counted=True) - _when():
            return bool(words & document)
    return True


def _clause_holding(statement: str, values: list[str]) -> str:
    """The clause of `statement` that names the first of `values` (the whole statement when
    none does)."""
    for clause in lx.CLAUSE_BREAK.split(statement):
        if any(_holds(clause, v) for v in values):
            return clause
    return statement


def _changed_value(
    statement: str, mine: list[str], existing: list[Fact], rarity: Rarity
) -> Fact | None:
    """The fact most like `statement` (its new values aside: "cousin Orla moved to Cork"
    is like "cousin Orla teaches in Galway", or it names the same someone first) that
    names a value of the same kind as a new one and no longer holds it; the latest of
    equals."""
    best: tuple[float, float, Fact] | None = None
    own = terms(statement)
    for fact, document in zip(existing, rarity.documents, strict=True):
        if not own & document:  # shares nothing: not about the same thing (and quick)
            continue
        fresh = [v for v in mine if not _holds(fact.statement, v)]
        gone = [v for v in values(fact.statement) if not _holds(statement, v)]
        kinds = {value_shape(v) for v in fresh}
        if not fresh or not any(value_shape(v) in kinds for v in gone):
            continue
        if not _same_someone(statement, fact.statement):
            continue
        # Most of what the clause with the new value says is in the fact, or it names the
        # fact's someone: the reason a change gives ("…, because her
        # shift ends at six") is news to the fact.
        clause = _clause_holding(statement, fresh)
        if not _names_what_it_names(clause, statement, fresh, document):
            continue
        words = terms(clause) - terms(" ".join(fresh)) - _when()
        if not rarity.covers(words, document) and not _named_alike(statement, fact.statement):
            continue
        key = (rarity.shared(words, document), fact.updated.timestamp(), fact)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None
