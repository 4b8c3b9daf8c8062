"""The words of a text as search sees them, CJK-aware.

NFKC, lowercase; runs of letters or digits for alphabetic scripts and character bigrams
for Chinese, Japanese and Korean runs (whitespace splitting would score a Japanese query
at zero). A search term is a word stemmed (Snowball English): "knitting", "knits"
and "knit" are one term. The index keeps the words as written (grep finds files by
them) and groups them by stem for BM25.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from gam_desktop.engine.store.markdown import body_of
from gam_desktop.engine.textutil import STOPWORDS, stem

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # a word of ASCII text, lowercased
_PLAIN_WORD = re.compile(rf"[^\W_{_CJK}]+", re.UNICODE)  # one word as the index keeps it
# (and "I", "me", "my": every turn of a person's conversations has them; in a question they
# say who asks, not what about)
_QUESTION_WORDS = (
    *("long", "many", "much", "does", "did", "do", "until", "after", "before"),
    *("i", "me", "my"),
)


@functools.cache
def _query_stopwords() -> frozenset[str]:
    return frozenset(stem(w) for w in (*STOPWORDS, *_QUESTION_WORDS))


def words(text: str) -> list[str]:
    """The words of `text`, not stemmed: runs of letters or digits, and the character
    pairs of Chinese, Japanese and Korean runs (a lone character on its own)."""
    normal = unicodedata.normalize("NFKC", text).lower()
    if normal.isascii():  # most text: the same runs, found twice as fast
        return _ASCII_WORD.findall(normal)
    if not _IS_CJK.search(normal):
        return _TOKEN.findall(normal)
    found: list[str] = []
    for run in _TOKEN.findall(normal):
        if _IS_CJK.match(run):
            found.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        else:
            found.append(run)
    return found


def tokenize(text: str) -> list[str]:
    """The search terms of `text`: its words, stemmed."""
    return [stem(word) for word in words(text)]


def query_terms(query: str) -> list[str]:
    """The search terms of a question: "How long until…" would otherwise score the one
    passage that happens to say "how"."""
    stopwords = _query_stopwords()
    return [t for t in tokenize(query) if t not in stopwords] or tokenize(query)


def word_pieces(needle: str) -> list[tuple[str, bool]] | None:
    """What a text holding `needle` (lowercased) surely holds, as (piece, whole): each run
    of letters or digits of the needle lies inside one of the text's words (whole=False),
    each character pair of a CJK run is one of its words (whole=True). None when the
    needle has no letter or digit (the index cannot narrow a search for it)."""
    pieces: list[tuple[str, bool]] = []
    for run in _TOKEN.findall(needle):
        if _IS_CJK.match(run) and len(run) > 1:
            pieces.extend((run[i : i + 2], True) for i in range(len(run) - 1))
        else:
            pieces.append((run, False))
    return pieces or None


def is_one_word(needle: str) -> bool:
    """Whether `needle` is letters or digits only (no CJK): every text holding it holds it
    inside one of its words, so the words holding it name exactly the texts holding it."""
    return bool(_PLAIN_WORD.fullmatch(needle))


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    flat = " ".join(body_of(text).split())
    lower = flat.lower()
    at = min((i for t in terms if (i := lower.find(t)) >= 0), default=0)
    start = max(0, at - width // 4)
    return (
        ("…" if start else "")
        + flat[start : start + width]
        + ("…" if start + width < len(flat) else "")
    )
