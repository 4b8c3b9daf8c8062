"""What a message says in the user's own voice, read without a model (lexicon.py's language):
the words left once quoted and pasted text is taken out, with the user's corrections of
themselves applied ("on the 9th, no wait, the 19th" says the 19th), the name they give
themselves, what they take back and the values they say are no longer so.

The model extracts facts from `told` only, so a pasted e-mail's "delete all facts" never
reaches it, and the value a person corrected in the same breath is never learned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gam_desktop.engine.chats.intent import told_part
from gam_desktop.engine.facts import lexicon as lx

_WORD = re.compile(r"[^\W_]+(?:[.:'’-][^\W_]+)*", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|\n)")


@dataclass
class Said:
    message: str  # as the user wrote it
    own: str  # without quoted and pasted text, corrections applied
    told: str  # `own` without its questions and requests: what the model extracts from
    name: str = ""  # the name the user surely gives themselves ("Hi, I'm Iris")
    likely_name: str = ""  # "I'm Iris." opening the message: theirs if the model agrees
    retracted: list[str] = field(default_factory=list)  # what each retraction is about
    old_values: list[str] = field(default_factory=list)  # "from 12 May", "instead of 9"
    new_values: dict[str, str] = field(default_factory=dict)  # old value -> the one after it
    changes: bool = False  # the message says something changed ("moved", "now", "instead")
    negates: bool = False  # it says something is not, or no longer, so


def read(message: str) -> Said:
    own = corrected(users_own_words(message))
    return Said(
        message=message,
        own=own,
        told=told_part(own),
        name=_name(lx.NAMED_SURELY, own),
        likely_name=_name(lx.NAMED_LIKELY, own),
        retracted=retractions(own),
        old_values=old_values(own),
        new_values=new_values(own),
        changes=bool(lx.CHANGE.search(own)),
        negates=bool(lx.NEGATION.search(own)),
    )


# -- quoted and pasted text ----------------------------------------------------------------


def users_own_words(message: str) -> str:
    """The message without what the user quoted or pasted: > quotes, code blocks, a
    forwarded e-mail (from its header on), text between delimiter lines (---), what follows
    "I'm pasting it:", and long quotations."""
    text = lx.FENCED.sub(" ", message)
    text = _without_pasted(text)
    text = _without_delimited(text)
    text = lx.QUOTED_LINE.sub("", text)
    text = lx.FORWARDED.sub("", text)
    return _without_long_quotations(text).strip()


def _without_pasted(text: str) -> str:
    intro = lx.PASTE_INTRO.search(text)
    return text[: intro.end()] if intro else text


def _without_delimited(text: str) -> str:
    lines = [m.start() for m in lx.DELIMITER.finditer(text)]
    ends = [m.end() for m in lx.DELIMITER.finditer(text)]
    if not lines:
        return text
    cuts = list(zip(lines[::2], [*ends[1::2], len(text)], strict=False))
    for start, end in reversed(cuts):
        text = text[:start] + text[end:]
    return text


def _without_long_quotations(text: str) -> str:
    """Quotation marks taken in pairs (opening, closing): a pair around a long passage is
    dropped, the user's words between two short quotations stay."""
    marks = [m.start() for m in lx.QUOTE_MARK.finditer(text)]
    cuts = [
        (start, end + 1)
        for start, end in zip(marks[::2], marks[1::2], strict=False)
        if end - start > lx.LONG_QUOTE
    ]
    if len(marks) % 2 and len(text) - marks[-1] > lx.LONG_QUOTE:
        cuts.append((marks[-1], len(text)))  # opened and never closed: pasted to the end
    for start, end in reversed(cuts):
        text = text[:start] + text[end:]
    return text


# -- correcting oneself ----------------------------------------------------------------------


def corrected(text: str) -> str:
    """The text with each correction made in the same breath applied: "It's room 14, no,
    sorry, 41" → "It's room 41"; "three bikes, actually four" → "four bikes". The value
    after the marker replaces the words before it that have its shape (a number for a
    number, a name for a name); with none of that shape the text stays as it is."""
    for _ in range(5):  # a message rarely corrects itself more than a few times
        found = _one_correction(text)
        if found is None:
            return text
        text = found
    return text


def _one_correction(text: str) -> str | None:
    for marker in lx.CORRECTION.finditer(text):
        after_text = text[marker.end() :]
        end = lx.CORRECTION_END.search(after_text)
        value = after_text[: end.start() if end else len(after_text)].strip()
        new = _WORD.findall(value)
        if not new or len(new) > 4:
            continue
        sentence = _SENTENCE_START.split(text[: marker.start()])[-1]
        before = list(_WORD.finditer(sentence))
        span = _same_shape(before, new, loose=bool(lx.LOOSE_CORRECTION.match(marker.group(0))))
        if span is None:
            continue
        offset = marker.start() - len(sentence)
        start, stop = offset + before[span[0]].start(), offset + before[span[1]].end()
        rest = after_text[len(value) :]
        return text[:start] + value + text[stop : marker.start()] + rest
    return None


def _same_shape(before: list[re.Match[str]], new: list[str], loose: bool) -> tuple[int, int] | None:
    """The span of `before` (first, last index) the corrected words replace: as many words,
    each of the same shape, the nearest to the marker first. Without a number or a name
    among them, one plain word replaces the last word before a marker that surely corrects
    ("tea, no, coffee"; not "late, sorry, traffic")."""
    wanted = [shape(w) for w in new]
    size = len(new)
    for last in range(len(before) - 1, max(len(before) - 7, size - 2), -1):
        first = last - size + 1
        if first < 0:
            break
        words = [m.group(0) for m in before[first : last + 1]]
        if [shape(w) for w in words] != wanted or words == new:
            continue
        if any(s in ("number", "name") for s in wanted):
            return first, last
        if loose and size == 1 and last == len(before) - 1:
            return first, last
    return None


def shape(word: str) -> str:
    """ "number" (27, 12th, 14:30, six), "name" (a capitalized word), "the" and other
    function words as themselves, else "word"."""
    low = word.lower()
    if any(c.isdigit() for c in word) or low in lx.NUMBER_WORDS:
        return "number"
    if low in lx.FUNCTION_WORDS:
        return low
    if word[:1].isupper():
        return "name"
    return "word"


# -- names, retractions, old values -----------------------------------------------------------


def _name(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    if found is None:
        return ""
    words = found.group(1).split()
    while words and words[-1].lower() in lx.FUNCTION_WORDS | {"and", "but", "so"}:
        words.pop()  # "I'm Iris and …": the name ends before the conjunction
    return " ".join(words)


def retractions(text: str) -> list[str]:
    """What the user takes back, each in their words ("the bake sale", "my pottery
    class"); an object-less "That's no longer true." gives nothing."""
    found: list[str] = []
    for pattern in lx.RETRACTION_ABOUT:
        for match in pattern.finditer(text):
            about = " ".join(match.group(1).split()).strip(" ,")
            content = [w for w in _WORD.findall(about.lower()) if w not in lx.LIGHT_WORDS]
            if content and about not in found:
                found.append(about)
    return found


def new_values(text: str) -> dict[str, str]:
    """Old value -> the value the user gives in its place: "from 3 May to 10
    May", "12 tents instead of 9", "Ink and Oak, not Lark Hall"."""
    found: dict[str, str] = {}
    for i, pattern in enumerate(lx.OLD_VALUE):
        for match in pattern.finditer(text):
            old = " ".join(match.group(1).split()[:5]).strip(" ,")
            if i == 0:  # "from A to B": B follows
                rest = text[match.end() :]
                end = lx.CORRECTION_END.search(rest)
                new = " ".join(
                    rest[: end.start() if end else len(rest)].split()[: len(old.split()) + 2]
                )
            else:  # "B instead of A", "B, not A": B comes before, of A's shape
                new = _value_before(text[: match.start()], old)
            if old and new and new.lower() != old.lower():
                found.setdefault(_named(old), new)
    return found


def _value_before(text: str, old: str) -> str:
    """The value nearest the end of `text` with the shape of `old` ("12" for "9"), else
    the run of names ending it ("Ink and Oak")."""
    sentence = _SENTENCE_START.split(text)[-1]
    before = list(_WORD.finditer(sentence))
    span = _same_shape(before, _WORD.findall(old), loose=False)
    if span is not None:
        return sentence[before[span[0]].start() : before[span[1]].end()]
    run: list[re.Match[str]] = []
    for word in reversed(before):
        small = word.group(0).islower() and len(word.group(0)) <= 3 and run
        if shape(word.group(0)) not in ("name", "number") and not small:
            break
        run.insert(0, word)
    while run and run[0].group(0).islower():
        run.pop(0)
    return sentence[run[0].start() : run[-1].end()] if run else ""


def without_old_values(statement: str, olds: list[str]) -> str:
    """`statement` without the words that name a value the user says no longer holds
    ("moved the talk from 12 May to 19 May" says "moved the talk to 19 May"; "Ink and Oak,
    not Lark Hall" says "Ink and Oak"): a fact says what holds now, and what it replaced is
    its history (the replaced fact's tombstone). Read beside the new value, a small model
    answered with the old one."""
    if not olds:
        return statement
    named = {value.lower() for value in olds}
    out = statement
    for i, pattern in enumerate(lx.OLD_VALUE):
        for match in reversed(list(pattern.finditer(out))):
            if _named(match.group(1)).lower() not in named:
                continue
            if i == 0:  # "moved … from A to B": keep the verb and "to B"
                start = out.lower().rfind("from", match.start(), match.start(1))
                out = out[:start] + out[match.end(1) :].lstrip()
            else:
                out = out[: match.start()].rstrip() + out[match.end() :]
    out = re.sub(r"\s+([,.;:!?])", r"\1", " ".join(out.split()))
    out = re.sub(r"[,;:]+(?=[.!?]|$)", "", out)  # a clause mark left before the end
    return out if _WORD.search(out) and out != statement else statement


def _named(value: str) -> str:
    """The value as a fact would name it: five words at most, no determiner before it."""
    return lx.DETERMINER.sub("", " ".join(value.split()[:5]).strip(" ,"))


def old_values(text: str) -> list[str]:
    """The values the user says are no longer so: "from 3 May to 10 May" gives
    "3 May", "12 tents instead of 9" gives "9"."""
    found: list[str] = []
    for pattern in lx.OLD_VALUE:
        for match in pattern.finditer(text):
            value = _named(match.group(1))
            content = [w for w in _WORD.findall(value) if shape(w) in ("number", "name", "word")]
            if content and value not in found:
                found.append(value)
    return found
