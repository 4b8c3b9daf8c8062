"""Stemming from many threads at once, as a parallel build's memorize calls do: each word
gets its own stem (one Snowball stemmer shared by threads mixed their words up and raised
an IndexError inside Snowball)."""

from __future__ import annotations

import itertools
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from gam_desktop.engine import textutil

pytestmark = pytest.mark.timeout(60)

STEMS = {
    "celebrations": "celebr", "requirements": "requir", "configurations": "configur",
    "photographed": "photograph", "refurbishing": "refurbish", "bookkeeping": "bookkeep",
    "transactions": "transact", "abbreviation": "abbrevi", "wholeheartedly": "wholeheart",
}  # fmt: skip


def test_words_stemmed_by_many_threads_at_once_get_their_own_stems() -> None:
    words = [
        f"{word}{'s' * n}" if n else word for n, word in itertools.product(range(40), STEMS)
    ]  # distinct words: the cache answers none of them

    def stem_all(offset: int) -> list[tuple[str, str]]:
        ordered = words[offset:] + words[:offset]
        return [(w, textutil.stem(w)) for w in ordered]

    textutil.stem.cache_clear()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns inside a stemWord call, as under load
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(stem_all, range(0, 64, 8)))
    finally:
        sys.setswitchinterval(interval)
    textutil.stem.cache_clear()
    for word, stemmed in itertools.chain.from_iterable(results):
        assert stemmed == textutil.stem(word), word
    assert all(textutil.stem(word) == stem for word, stem in STEMS.items())
