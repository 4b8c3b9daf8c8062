"""Small text helpers shared by the deterministic fallbacks, the scripted server and every
user-facing count ("1 file", "3 memories")."""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

WORD = re.compile(r"[^\W_]+", re.UNICODE)
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?。！？])(\s|$)", re.DOTALL)
# fmt: off
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
    "which", "we", "you", "they", "their", "our", "not", "but", "can", "into", "also", "than",
    "then", "these", "those", "such", "each", "other", "more", "most", "some", "any", "all",
    "one", "two", "how", "what", "when", "where", "who", "why", "use", "used", "uses", "using",
    "about", "over", "under", "between", "both", "only", "very",
})
# fmt: on


def keywords(text: str, n: int) -> list[str]:
    """The `n` most frequent non-stopwords, ties broken by first appearance."""
    words = [w.lower() for w in WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 1]
    counts = Counter(words)
    first_seen = {w: i for i, w in reversed(list(enumerate(words)))}
    return sorted(counts, key=lambda w: (-counts[w], first_seen[w]))[:n]


def first_sentence(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    match = _FIRST_SENTENCE.match(flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def initialism(word: str) -> str:
    """A word written in lowercase only, as English would: letters with no vowel between
    them are spoken one by one ("hvk" -> "HVK"); any other word stays as it is."""
    letters = word.isascii() and word.isalpha() and word.islower() and len(word) > 1
    return word.upper() if letters and not _VOWEL.search(word) else word


# English auxiliaries: one opening a sentence before its subject asks a question ("Is
# there…", "Did I…"), one that is answered yes or no when nothing else asks.
AUXILIARIES = (
    "is are was were am do does did have has had can could will would shall should may might must"
).split()

_VOWEL = re.compile(r"[aeiouy]")
_HEADING_LINE = re.compile(r"^\s*#")
_OPENS = re.compile(r"(?:^|[.!?]\s+|^\W+)$")  # what stands before a word that opens a sentence
WRITTEN_SCAN = 200  # occurrences of a word read to learn how it is written


def written_word(word: str, texts: Sequence[str]) -> str:
    """A word a file or folder name has in lowercase ("zylodb", "tarnwell", "frontdesk"),
    as the texts write it inside their sentences: the form most of its occurrences there
    take ("ZyloDB", "Tarnwell", "front-desk"; "update" stays "update"). An occurrence that
    opens a sentence or a line counts only when none inside a sentence does, unless it has
    a capital after its first letter (a sentence's start explains a first capital, never
    "DB"); one in a heading or a title in capitals never counts (title case). A word no
    text writes so: in capitals when it is an initialism, else as it is."""
    if word != word.lower() or not any(c.isalpha() for c in word):
        return word
    # a name joins what the text may hyphenate ("frontdesk": "front-desk")
    letters = "-?".join(re.escape(c) for c in word)
    pattern = re.compile(rf"(?<![\w-]){letters}(?![\w-])", re.IGNORECASE)
    inside: Counter[str] = Counter()  # forms that show how the word is written
    opening: Counter[str] = Counter()  # forms a sentence's start or a heading may explain
    for text in texts:
        for found in pattern.finditer(text):
            start = text.rfind("\n", 0, found.start()) + 1
            end = text.find("\n", found.end()) % (len(text) + 1)  # -1: the text's end
            before, line = text[start : found.start()], text[start:end]
            if _titled(line, found.start() - start):
                continue
            counted = inside if _says_how_it_is_written(found.group(0), before) else opening
            counted[found.group(0)] += 1
            if inside.total() >= WRITTEN_SCAN:
                break
    forms = inside or opening  # where it only opens sentences ("Acme Robotics rotates…")
    if not forms:
        return initialism(word)
    form, count = forms.most_common(1)[0]
    return form if count * 2 > forms.total() else word


def _titled(line: str, at: int) -> bool:
    """Whether the word at `at` of `line` stands in a title, written in title case: a
    heading, a line in capitals ("THE ACME — RULES"), a label of a few words before a colon
    that opens the line ("Restoring Spools with tarn: Unpacking…")."""
    label = line.find(": ")
    if 0 <= at < label and len(line[:label].split()) <= LABEL_WORDS:
        return True
    return bool(_HEADING_LINE.match(line)) or not any(c.islower() for c in line)


LABEL_WORDS = 8


def opens_sentence(text: str, at: int) -> bool:
    """Whether the word at `at` in `text` opens a sentence or a line: its first capital
    says nothing of how the word is written."""
    return bool(_OPENS.search(text[text.rfind("\n", 0, at) + 1 : at]))


def _says_how_it_is_written(form: str, before: str) -> bool:
    """Whether a word written as `form` after `before` on its line shows how it is written:
    inside a sentence (not its first word), or anywhere with a capital after its first
    letter ("ZyloDB", "QVX"), which no sentence's start explains."""
    return any(c.isupper() for c in form[1:]) or not _OPENS.search(before)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, as a person writes them: "1 file", "0 files", "3 memories",
    "1,200 documents". `many` gives a plural the rules below do not know ("child", "children");
    otherwise a consonant + y becomes "ies", s/x/z/ch/sh take "es", anything else "s"."""
    return f"{count:,} {noun if count == 1 else many or plural_of(noun)}"


def plural_of(noun: str) -> str:
    """The plural of a regular English noun ("memory", "file", "pass", "LLM call")."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


_STEMMERS = threading.local()  # a Snowball stemmer keeps its word in itself: one per thread


def _stemmer() -> Any:
    """Snowball's English stemmer of this thread, made on first use: its import takes a
    while (the app's start should not wait for it), and one stemmer shared by the threads
    of a parallel build mixes their words up (an IndexError inside Snowball)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """ "knitting", "knits" and "knit" are one search term (Snowball English;
    words with digits, like versions, stay as they are)."""
    return word if not word.isalpha() or len(word) < 4 else _stemmer().stemWord(word)
