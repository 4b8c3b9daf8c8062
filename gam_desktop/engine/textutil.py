"""Small text helpers shared by the deterministic fallbacks, the scripted server and every
user-facing count ("1 file", "3 memories")."""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
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
