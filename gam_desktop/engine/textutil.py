"""Small text helpers shared by the deterministic fallbacks and the scripted server."""

from __future__ import annotations

import re
from collections import Counter

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
