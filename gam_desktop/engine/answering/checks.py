"""The checks an answer goes through, in order (`CHECKS`). Each looks at a draft and either
passes it (None) or says what is wrong (`Finding`), with the draft repaired when it can be:
a quote put back in the source's own words, an answer replaced by the sentence that states
it. A finding without a repair rejects the draft: the memory does not say.

Every check knows the language (numbers, function words), never a subject."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from gam_desktop.engine.answering.lexicon import (
    AMOUNT_WORDS,
    ASKS_AMOUNT,
    ASKS_OWN_NAME,
    ASKS_WHO_IS,
    FUNCTION_WORDS,
    MONTHS,
    NOT_IN_PASSAGES,
    NOT_STATED,
)
from gam_desktop.engine.answering.passages import (
    Passage,
    holds,
    identifiers,
    is_heading,
    named_numbers,
    names,
    parts_of,
    qualified,
    question_weights,
    units_of,
    weight_of,
)
from gam_desktop.engine.answering.when import asks_for_current, on_the_clock, without_dates
from gam_desktop.engine.retrieval.search import tokenize
from gam_desktop.engine.textutil import AUXILIARIES

QUOTE_OVERLAP = 0.75  # share of a quote's words a source sentence must hold to be it
ANSWER_OVERLAP = 0.5  # share of an answer's own words its quotes must hold
_WORD = re.compile(r"[^\W_]+(?:[._'’-][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_TOKEN = re.compile(rf"\d{{1,2}}:\d{{2}}\b|{_WORD.pattern}")  # a word, or a time ("19:30")
_POSSESSIVE = re.compile(r"['’]s$")
_LETTERS = re.compile(r"[^\W\d_]+")
_POLAR = re.compile(r"\s*(yes|no)\b", re.IGNORECASE)
_AUXILIARY = re.compile(rf"\s*({'|'.join(AUXILIARIES)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Support:
    passage: Passage
    sentence: str  # as the source writes it

    @property
    def said(self) -> str:
        """The sentence under its passage's label: a version or a name an answer gives may be
        the document's ("2.4" of "Gizmo 2.4 notes"), not the sentence's."""
        sentence = _SECTION_NUMBER.sub(r"\1", self.sentence)
        return f"{self.passage.label}\n{sentence}"


# A heading's section number ("## 6.6. Checking…", "# 3. Setup") says where a part sits in
# its document, not a value it states: an answer "since 6.6" rested on it. (A version
# heading, "# 15.4", has no dot after its number and stays.)
_SECTION_NUMBER = re.compile(r"^(\s*#{1,6}\s+)\d+(?:\.\d+)*\.(?=\s|$)\s*")


@dataclass(frozen=True)
class Draft:
    question: str
    answer: str
    quotes: list[tuple[int, str]]  # (passage number, sentence) as the model gave them
    passages: list[Passage]
    support: list[Support] = field(default_factory=list)  # the quotes found in the sources
    cited: tuple[int, ...] = ()  # the passages the model says state the answer
    from_quote: bool = False  # the answer is the sentence that states it
    unknown: frozenset[str] = frozenset()  # the question's names no file of the memory writes
    own_name: frozenset[str] = frozenset()  # the words of the person's own name, if known


@dataclass(frozen=True)
class Finding:
    check: str
    why: str
    repaired: Draft | None = None  # None: the draft is rejected


class Check(Protocol):
    name: str

    def check(self, draft: Draft) -> Finding | None: ...


def words(text: str) -> list[str]:
    """The words of `text`, lowercased, a possessive's "'s" off ("Orla's" is "Orla"), a
    time of day on the 24-hour clock ("7.30pm" is "19:30")."""
    found = _WORD.findall(on_the_clock(text))
    return [_POSSESSIVE.sub("", w.lower()).strip(".'’-") for w in found]


def numbers(text: str) -> set[str]:
    """The numbers `text` writes, as values: "2,480" is 2480, "08" is 8, a date's parts are
    its numbers ("2021-03-07" and "March 7, 2021" alike)."""
    found = {_value(n.replace(",", "")) for n in _NUMBER.findall(on_the_clock(text))}
    return found | {str(MONTHS[w]) for w in words(text) if w in MONTHS}


def _value(number: str) -> str:
    return str(int(number)) if number.isdigit() else number


def own_words(text: str, question: str) -> set[str]:
    """The words of `text` that carry content and that the question did not already say, in
    any form ("pays" of "pay"; numbers, and a month's name, are checked as numbers)."""
    asked = set(words(question)) | set(tokenize(question))
    skip = FUNCTION_WORDS | MONTHS.keys()
    return {
        w
        for w in words(text)
        if w not in skip and not w.isdigit() and w not in asked and _stem(w) not in asked
    }


def _stem(word: str) -> str:
    stems = tokenize(word)
    return stems[0] if len(stems) == 1 else word


class Abstained:
    """The model said no passage states the answer, or gave none."""

    name = "abstained"

    def check(self, draft: Draft) -> Finding | None:
        if not draft.answer.strip():
            return Finding(self.name, "no passage states it")
        unsourced = not draft.quotes and not draft.cited
        # ("not stated in the given passages" is an abstention though it names passages)
        if NOT_IN_PASSAGES.search(draft.answer) or (NOT_STATED.search(draft.answer) and unsourced):
            return Finding(self.name, "the model says the passages do not state it")
        return None


class AnAmountForHowMuch:
    """ "How much" and "how many" ask for an amount: an answer giving none, or only a date's
    numbers, says something else about what was asked ("How much were the tickets?" "The
    tickets are for 8 June."), which a small model writes when the amount was never said.
    An amount is a number (not a day's) or a word for one ("three", "a dozen", "twice",
    "none", "all"); a year or a time still counts as a number."""

    name = "an amount for how much"

    def check(self, draft: Draft) -> Finding | None:
        # (a yes-or-no question only mentions an amount: "Did I tell you how many I need?")
        if not ASKS_AMOUNT.search(draft.question) or _AUXILIARY.match(draft.question):
            return None
        given = without_dates(draft.answer)
        if _NUMBER.search(given) or AMOUNT_WORDS & set(_LETTERS.findall(given.lower())):
            return None
        return Finding(self.name, "it gives no amount")


class QuotesInSources:
    """Each quote is a sentence of a passage shown (any passage: a wrong number is mended);
    a quote found nowhere is dropped. With none given or left, the sentence stating the
    answer's own words and numbers is its support (small models often quote nothing), else
    the few sentences that together state it (an answer joining two sentences, or two
    documents; never in place of quotes given and not found: those were made up); with
    none, nothing supports the answer. Passing, the draft carries the sources' sentences."""

    name = "quotes in sources"

    def check(self, draft: Draft) -> Finding | None:
        found = [s for n, text in draft.quotes if (s := locate(text, n, draft.passages))]
        if not found and (stating := stating_sentence(draft)) is not None:
            found = [stating]
        if not found and not draft.quotes:  # several sentences may each say a part of it
            covered = cover(draft)
            found = covered if unsupported(draft, covered, by_rarity=True) is None else []
        if not found and (about := polar_support(draft)) is not None:
            found = [about]
        support = list({(s.passage.number, s.sentence): s for s in found}.values())
        if not support:
            return Finding(self.name, "it quotes nothing the passages say")
        repaired = replace(draft, support=support)
        if len(support) < len(draft.quotes):
            return Finding(self.name, "a quote is not in the passages: left out", repaired)
        return Finding(self.name, "", repaired)  # passes, with the sources' own sentences


def locate(quote: str, number: int, passages: list[Passage]) -> Support | None:
    """The sentence of the passages that `quote` copies: its numbers all there and nearly
    all its words; the numbered passage first."""
    quoted = words(quote)

    def share(support: Support) -> float | None:
        sentence = support.sentence
        held = set(words(sentence))
        part = sum(w in held for w in quoted) / len(quoted)
        return part if part >= QUOTE_OVERLAP and numbers(quote) <= numbers(sentence) else None

    ordered = sorted(passages, key=lambda p: p.number != number)
    return _best_sentence(ordered, share) if quoted else None


def stating_sentence(draft: Draft) -> Support | None:
    """The sentence of the passages holding all the answer's numbers and the most of its own
    words (at least half of them), then the most of the question's words (an answer that is
    only a value, "40 grams", is stated by the sentence giving that value of what was
    asked); of the passages the model cited first, when one of them has such a sentence."""
    own = own_words(draft.answer, draft.question)
    wanted = numbers(draft.answer) - numbers(draft.question)
    asked = set(words(draft.question)) - FUNCTION_WORDS

    def held(support: Support) -> float | None:
        said = support.said
        held_words = set(words(said))
        count = len(own & held_words)
        if not wanted <= numbers(said):
            return None
        given = len(_counted(draft.answer, wanted, own - held_words))
        if count + given < ANSWER_OVERLAP * (len(own) + given):
            return None
        return count + len(asked & held_words) / (len(asked) + 1)  # the question's: second

    if not own and not wanted:
        return None
    cited = [p for p in draft.passages if p.number in draft.cited]
    return (_best_sentence(cited, held) if cited else None) or _best_sentence(draft.passages, held)


def polar_support(draft: Draft) -> Support | None:
    """A yes or no to a question that opens with an auxiliary ("Do I still…?" "No, you
    don't…") has no words of its own: it says whether the question holds, and the sentence
    it rests on is the cited passages' one holding the most of the question's rarer words.
    None for any other answer, or when no sentence of those passages holds one."""
    if not (_AUXILIARY.match(draft.question) and _POLAR.match(draft.answer)):
        return None
    if own_words(draft.answer, draft.question) or numbers(draft.answer) - numbers(draft.question):
        return None  # it says more than yes or no: the other ways find its support
    weights = question_weights(draft.question, [p.text for p in draft.passages])
    cited = [p for p in draft.passages if p.number in draft.cited]
    found = _best_sentence(cited, lambda support: weight_of(support.said, weights) or None)
    if found is not None and asks_for_current(draft.question):
        return _said_last_of(draft) or found
    return found


def _said_last_of(draft: Draft) -> Support | None:
    """Whether something still holds is what the person said of it last: of their
    sentences among the passages that write every name the question gives ("Are Noor and
    I still going to Ostrava?"; one name alone, "Noor", is in much else they said), the one
    said last. The model cites the older statement as often as the one that changed it
    ("no Ostrava after all")."""
    asked = [set(tokenize(name)) for name in names(draft.question)]
    if not asked:
        return None
    said: tuple[datetime, Support] | None = None
    for passage in draft.passages:
        if passage.said is None or (said is not None and passage.said <= said[0]):
            continue
        words = ((s, set(tokenize(s))) for s in units_of(passage.text))
        sentence = next((s for s, w in words if all(n <= w for n in asked)), None)
        if sentence is not None:
            said = (passage.said, Support(passage, sentence))
    return said[1] if said else None


def _best_sentence(
    passages: list[Passage], score: Callable[[Support], float | None]
) -> Support | None:
    """The sentence of `passages` scoring highest (the first of equals, a heading after
    them: one scoring by its passage's label alone says nothing); None scores out."""
    best: tuple[float, bool, Support] | None = None
    for passage in passages:
        for sentence in units_of(passage.text):
            support = Support(passage, sentence)
            value = score(support)
            if value is None:
                continue
            said = not is_heading(sentence)
            if best is None or (value, said) > best[:2]:
                best = (value, said, support)
    return best[2] if best else None


class AnswerFromQuotes:
    """The answer says what its quotes say: its numbers are theirs (or the question's), and
    most of its own words are theirs. Otherwise other sentences of the passages it read may
    say what its quotes do not (an answer of two documents quotes one of them); with none,
    the memory does not say it clearly (the closest sentence is shown). An answer with no
    words or numbers of its own restates the question."""

    name = "answer from quotes"

    def check(self, draft: Draft) -> Finding | None:
        why = unsupported(draft, draft.support)
        if why is None:
            return None
        if why == RESTATED:
            return Finding(self.name, why, replace(draft, from_quote=True))
        covered = cover(draft)
        if unsupported(draft, covered, by_rarity=True) is None:  # other sentences say it
            return Finding(self.name, f"{why}: other sentences do", replace(draft, support=covered))
        return Finding(self.name, why, replace(draft, from_quote=True))


RESTATED = "it only restates the question"


def _gain(missing_numbers: set[str], missing_words: set[str]) -> Callable[[Support], float | None]:
    """How much of what is missing a sentence says (a number counts twice); None: nothing."""

    def gain(support: Support) -> float | None:
        said = support.said
        found = 2 * len(missing_numbers & numbers(said)) + len(missing_words & set(words(said)))
        return float(found) if found else None

    return gain


def unsupported(draft: Draft, support: list[Support], by_rarity: bool = False) -> str | None:
    """What of the answer `support` does not say, if anything. `by_rarity`: its words
    weigh by how rare they are in the passages (sentences gathered by us, not quoted by the
    model: a word every passage says, or a common one, said somewhere beside the point,
    made half of a made-up claim "said" while its rarer words were said nowhere)."""
    stated = " ".join(s.said for s in support)
    new_numbers = numbers(draft.answer) - numbers(draft.question)
    invented = new_numbers - numbers(stated)
    own = own_words(draft.answer, draft.question)
    if not own and not new_numbers:
        return RESTATED
    if invented:
        return f"its quotes do not state {', '.join(sorted(invented))}"
    weight = _rarity(draft.passages) if by_rarity else lambda _: 1.0
    held = own & set(words(stated))
    # a number weighs as a word no sentence holds: a value is what an answer is most about
    given = len(_counted(draft.answer, new_numbers, own - held)) * weight("")
    whole = math.fsum(weight(w) for w in own) + given  # exact: a set's order changes per run
    if math.fsum(weight(w) for w in held) + given < ANSWER_OVERLAP * whole:
        return "its quotes do not say most of it"
    return None


def _counted(answer: str, stated: set[str], unsaid: set[str]) -> set[str]:
    """The numbers of `stated` (all found in the support) that the answer gives as what it
    says, each as much its content as a word: not one whose word right after it, what it
    counts, the support leaves unsaid ("22 years" where the support's 22 is a date's day)."""
    tokens = _TOKEN.findall(on_the_clock(answer))
    counted = set()
    for i, token in enumerate(tokens):
        if not _NUMBER.fullmatch(token) or (value := _value(token.replace(",", ""))) not in stated:
            continue
        after = words(tokens[i + 1])[0] if i + 1 < len(tokens) else ""
        if after not in unsaid:
            counted.add(value)
    return counted


def _rarity(passages: list[Passage]) -> Callable[[str], float]:
    """A word's weight: log(1 + N / (1 + n)), n of the passages' N sentences holding it."""
    sentences = [set(words(u)) for p in passages for u in units_of(p.text)]
    holding = Counter(w for sentence in sentences for w in sentence)
    return lambda word: math.log(1 + len(sentences) / (1 + holding[word]))


def cover(draft: Draft, most: int = 3) -> list[Support]:
    """The quotes, and sentences of the passages added one at a time (up to `most`), each
    stating the most of the answer's numbers and words still unsaid."""
    chosen = list(draft.support)
    for _ in range(most):
        said = " ".join(s.said for s in chosen)
        missing_numbers = numbers(draft.answer) - numbers(draft.question) - numbers(said)
        missing_words = own_words(draft.answer, draft.question) - set(words(said))
        if not missing_numbers and not missing_words:
            break

        best = _best_sentence(draft.passages, _gain(missing_numbers, missing_words))
        if best is None:
            break
        chosen.append(best)
    useful = _gain(numbers(draft.answer), own_words(draft.answer, draft.question))
    return [s for s in chosen if useful(s)] or chosen  # a quote saying none of it goes


def closest_sentences(question: str, passages: list[Passage], most: int = 2) -> list[Support]:
    """The `most` sentences of `passages` holding the most of the question's weight (its
    rarer words weigh more), best first; no heading, none holding no word of it. Shown
    when no answer held: a small model misreads a definition or a "… is not X" and says
    no passage states it, while the sentence it was shown does."""
    weights = question_weights(question, [p.text for p in passages])
    scored = [
        (weight, Support(p, sentence))
        for p in passages
        for sentence in units_of(p.text)
        if not is_heading(sentence) and (weight := weight_of(sentence, weights)) > 0
    ]
    scored.sort(key=lambda s: -s[0])  # stable: the passages' order among equals
    return [support for _weight, support in scored[:most]]


class AboutWhatIsAsked:
    """When the question gives identifiers ("2.1", "iso-9001", "ABCv2", or a whole number
    right after a name, "Gizmo 3", which any 3.x writes), the document an answer rests on
    writes at least one of them: a look-alike's sentence (another version's
    notes) answers another question, and a version no document writes is not in the memory.
    One is enough: a question may give a second identifier only to contrast it. An
    identifier right after a name is that name's ("the Harbor Protocol 2.0"): its document
    writes the name's words too, or another document's 2.0 would answer for it. Names
    without digits are not asked for: they are written too many ways ("EU", "European
    Union"); but a name no file of the memory writes at all (`Draft.unknown`) says that what
    is asked about is not in it."""

    name = "about what is asked"

    def check(self, draft: Draft) -> Finding | None:
        if draft.unknown and draft.support:
            return Finding(self.name, f"the memory never names {', '.join(sorted(draft.unknown))}")
        numbered = named_numbers(draft.question)
        asked = identifiers(draft.question) | numbered.keys()
        if not asked or not draft.support:
            return None
        documents = _documents(draft)
        own = "\n".join(
            documents[d] for d in dict.fromkeys(_document(s.passage) for s in draft.support)
        )
        named = numbered | qualified(draft.question)
        said = set(tokenize(own))
        for a in asked:
            written = writes(own, a) or (a in numbered and _in_series(own, a))
            if written and all(set(tokenize(n)) <= said for n in named.get(a, [])):
                return None
        whole = [" ".join([*reversed(named.get(a, [])), a]) for a in sorted(asked)]
        return Finding(self.name, f"its sources do not name {', '.join(whole)}")


class NotThePersonForAnother:
    """An answer that names the person themself (a word of their own name, which the
    question does not write) to a question that does not ask their name: the person is
    not their own landlord, dentist or neighbour. Shown their first turn ("Hi, I'm Ada
    Quill."), a small model gave their name for another person's it was never told."""

    name = "not the person for another"

    def check(self, draft: Draft) -> Finding | None:
        if not draft.own_name or ASKS_OWN_NAME.search(draft.question):
            return None
        said = set(_LETTERS.findall(draft.answer)) - set(_LETTERS.findall(draft.question))
        if said & draft.own_name:
            return Finding(self.name, "it answers with the person's own name")
        return None


class TheRoleAsked:
    """A question asking who fills a role ("What is the name of the club's treasurer?",
    "What's my sister's name?") is answered from passages that say the role: a name
    the sources give as someone else ("Mara Oduya, our club secretary"; "Tove is my neighbour")
    does not answer it, and a role the memory never names was never said. The whole passages
    of the answer's sentences count, as the role may be said a sentence before the name."""

    name = "the role asked"

    def check(self, draft: Draft) -> Finding | None:
        role = asked_role(draft.question)
        if not role or not draft.support:
            return None
        said = " ".join(f"{s.passage.label} {s.passage.text}" for s in draft.support)
        stated = set(words(said))
        stems = {_stem(w) for w in stated}
        if any(w in stated or _stem(w) in stems for w in role):
            return None
        return Finding(self.name, f"its sources never say who is the {' '.join(role)}")


def asked_role(question: str) -> list[str]:
    """The words of the role a question asks someone's name for, or none."""
    for pattern in ASKS_WHO_IS:
        if found := pattern.search(question):
            return [w for w in words(found.group(1)) if w not in FUNCTION_WORDS]
    return []


def _in_series(text: str, number: str) -> bool:
    """Whether `text` writes a version of the series `number` names ("3.0" or "3.2" of "3")."""
    return re.search(rf"(?<![\w.-]){number}\.\d", text) is not None


def _document(passage: Passage) -> str:
    return passage.document or passage.memory


def _documents(draft: Draft) -> dict[str, str]:
    """Each document shown, with all its passages' labels and texts (a label's file name
    parts are words too: "acme_refund_rules")."""
    texts: dict[str, list[str]] = {}
    shown = {(p.number, p.memory): p for p in draft.passages}
    shown |= {(s.passage.number, s.passage.memory): s.passage for s in draft.support}
    for p in shown.values():
        texts.setdefault(_document(p), []).append(f"{p.label.replace('_', ' ')}\n{p.text}")
    return {doc: "\n".join(parts) for doc, parts in texts.items()}


def writes(text: str, identifier: str) -> bool:
    """Whether `text` writes `identifier`: as a whole word, or, for one written with letters
    and digits joined ("ABCv2", "ISO9001"), with each run of letters and of digits a word of
    its own ("ABC version 2", "ISO 9001"); a "v" before the digits is "version", not a word."""
    if holds(text, identifier):
        return True
    if not re.fullmatch(r"\w+", identifier) or not re.search(r"\d", identifier):
        return False
    parts = parts_of(identifier)
    said = set(tokenize(text))
    return len(parts) > 1 and all(part in said for part in parts)


# The answering pipeline's checks, in order (ARCHITECTURE.md: each one's measured effect).
# AnswerFromQuotes is research's (its integrator quotes): here it changed no answer, as the
# sentences QuotesInSources finds already hold the answer's numbers and words.
CHECKS: tuple[Check, ...] = (
    Abstained(),
    AnAmountForHowMuch(),
    QuotesInSources(),
    AboutWhatIsAsked(),
    NotThePersonForAnother(),
    TheRoleAsked(),
)
