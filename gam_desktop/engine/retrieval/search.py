"""BM25 full-text search over a memory, CJK-aware, its index kept on disk and updated
file by file.

Scoring is rank-bm25's BM25Okapi (k1 = 1.5, b = 0.75) with Lucene's IDF,
log(1 + (N - n + 0.5) / (n + 0.5)), which is never zero: rank-bm25's own is zero for a
word in half the files, and in a new memory of one document (its memory, its original
text, a README) a word the memory and its original share was found nowhere. The scores
are computed from the postings (postings.py) term by term, with rank-bm25's arithmetic,
so they are the numbers it gave and the order is its order (ties by path); but a query
reads only the postings of its terms (rank-bm25 took ~290 ms a query at 100,000 files).

The index follows the corpus: files whose size or mtime changed are read and indexed
again, nothing else; a new process loads it from `.gam/cache/search.sqlite3` instead of
reading every file.

With an embedding model (vectors.py, issue 35), BM25's ranking and the ranking by meaning
(the nearest texts by cosine) are fused by reciprocal rank (k = 60), each to FUSE_DEPTH
texts: a paraphrase that shares no word with its passage is found. The hits are the same
`SearchHit`s, their score the fused one. Without embeddings, or while they are failing or
being computed, search is BM25 alone: the very hits it gave before.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from gam_desktop.engine.chats.record import user_words
from gam_desktop.engine.llm.embeddings import Embedder
from gam_desktop.engine.retrieval.corpus import ORIGINAL, Corpus, title_of
from gam_desktop.engine.retrieval.postings import Doc, Postings
from gam_desktop.engine.retrieval.vectors import Semantic, fuse
from gam_desktop.engine.retrieval.words import (
    is_one_word,
    query_terms,
    snippet,
    tokenize,
    word_pieces,
    words,
)
from gam_desktop.engine.store.folder import CACHE_DIR, CONVERSATIONS_DIR
from gam_desktop.engine.store.links import LinkedPathError, check_writable_path
from gam_desktop.engine.store.markdown import front_value
from gam_desktop.engine.textutil import stem

__all__ = ["SearchHit", "SearchIndex", "index_size", "query_terms", "snippet", "tokenize"]

CACHE_FILE = f"{CACHE_DIR}/search.sqlite3"
OLD_CACHE_FILE = f"{CACHE_DIR}/bm25.json"  # tokens of every file, as JSON (before 14)
K1, B = 1.5, 0.75  # rank-bm25's defaults
BUILD_FROM_NOTHING = 2_000  # this many files new to an empty index: built part by part,
BUILD_CHUNK = 8_000  # so many files a part (and a transaction)
UPDATE_CHUNK = 500  # files per transaction of an update
MANY_KEYS = 20_000  # grep's candidates ordered by the ranks of all paths (made once a change)
FUSE_DEPTH = 50  # texts of each ranking fused (more than any caller asks for)
T = TypeVar("T")


@dataclass
class SearchHit:
    path: str
    score: float
    snippet: str


@dataclass
class Holding:
    """The corpus keys whose text may hold a grep pattern, sorted, and which of them are
    only candidates (every other one surely holds it)."""

    keys: list[str]
    unsure: set[str]


class SearchIndex:
    def __init__(self, corpus: Corpus, embedder: Embedder | None = None) -> None:
        self.corpus = corpus
        self._store: Postings | None = None
        self._synced = -1  # the corpus generation the index follows
        self._order: np.ndarray | None = None  # rank of each document id by key, for grep
        self._lock = threading.RLock()
        self.indexed = 0  # how many texts were (re)indexed: tests read it
        self._changes = 0  # how often the indexed texts changed (the vectors follow them)
        self.semantic = (  # search by meaning, with an embedding model
            Semantic(embedder, self._lock, self._open, self._searched_text, lambda: self._changes)
            if embedder is not None
            else None
        )

    # -- following the corpus -------------------------------------------------------------

    def _searched_text(self, key: str) -> str | None:
        """What search reads of `key` (None when it is gone): the vectors' text too."""
        text = self.corpus.text(key)
        return _searched(key, text) if text is not None else None

    def ensure_built(self) -> None:
        """Index what changed in the corpus since the last look (nothing, usually). When
        the index cannot be written (a full disk, a read-only folder), it is used as it
        is, and written the next time."""
        with contextlib.suppress(sqlite3.OperationalError):
            self._reading(self._follow)
        if self.semantic is not None:  # what changed gets its vectors, behind
            self.semantic.catch_up()

    def _reading(self, use: Callable[[], T]) -> T:
        """`use` the index; when its database turns out damaged (a full disk, a crash, a
        file cut short), it is made again from the files and used again."""
        with self._lock:
            try:
                return use()
            except sqlite3.OperationalError:  # locked too long, a full disk: not damage
                raise
            except sqlite3.DatabaseError:
                self._reset()
                self._follow()
                return use()

    def _follow(self) -> None:
        if self.corpus.generation == 0 and self.corpus.refreshed_at == float("-inf"):
            self.corpus.refresh()  # never looked at: an empty table would empty the index
        store = self._open()
        if store.follow_others():  # another process indexed meanwhile: compare again
            self._synced, self._order = -1, None
            self._changes += 1
        generation = self.corpus.generation
        if generation == self._synced:
            return
        stale, gone, stats = self._differences(store)
        if gone:
            with store.writing():
                store.remove(k for key in gone for k in (key, key + ORIGINAL))
        direct = store.count == 0 and len(stale) >= BUILD_FROM_NOTHING
        size = BUILD_CHUNK if direct else UPDATE_CHUNK
        for start in range(0, len(stale), size):
            chunk = stale[start : start + size]
            with store.writing():  # a chunk at a time: another process may write between
                store.remove(k for key in chunk for k in (key, key + ORIGINAL))
                docs = (doc for key in chunk for doc in self._docs_of(key, stats[key]))
                self.indexed += store.add(docs, direct=direct)
        if gone or stale:
            self._order = None
            self._changes += 1
        self._synced = generation

    def _differences(
        self, store: Postings
    ) -> tuple[list[str], list[str], dict[str, tuple[int, int]]]:
        """(the files to index again, sorted; the files gone; the stats of the files): from
        what the corpus says changed since the last look, or else by comparing them all."""
        changed = self.corpus.changed_since(self._synced) if self._synced >= 0 else None
        stats = self.corpus.stats(changed)
        if changed is None:  # (an original is removed with its memory, never alone)
            gone = store.stats.keys() - stats.keys()
        else:
            gone = {k for k in changed if k not in stats and k in store.ids}
        stale = sorted(k for k, stat in stats.items() if store.stats.get(k) != stat)
        return stale, sorted(gone), stats

    def _docs_of(self, key: str, stat: tuple[int, int]) -> list[Doc]:
        """The texts of a file to index: itself and its original wording (if any)."""
        text = self.corpus.text(key, fresh=True)
        if text is None:  # gone meanwhile: the next refresh says so
            return []
        searched = _searched(key, text)
        plain = searched is text and _plain(text)  # (else grep reads the file itself)
        docs = [Doc(key, *stat, words(searched), title_of(key, text), plain)]
        original = self.corpus.text(key + ORIGINAL)  # (its memory was just read)
        if original is not None:
            # its stat is its memory's: -1, not compared
            docs.append(Doc(key + ORIGINAL, -1, -1, words(original), "", _plain(original)))
        return docs

    def _open(self) -> Postings:
        if self._store is None:
            path = self._writable(CACHE_FILE)
            old = self._writable(OLD_CACHE_FILE)
            if old is not None:  # hundreds of megabytes at 100,000 files, never read again
                with contextlib.suppress(OSError):
                    old.unlink(missing_ok=True)
            self._store = self._loaded(path)
        return self._store

    @staticmethod
    def _loaded(path: Path | None) -> Postings:
        """The index at `path`, made anew if it is damaged; kept in memory only if it
        cannot be written (or another process holds it locked for long)."""
        for _ in range(2 if path is not None else 0):
            try:
                return _opened(path)
            except (sqlite3.OperationalError, OSError):  # not ours to delete
                break
            except sqlite3.DatabaseError:  # damaged: made anew
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)  # type: ignore[union-attr]
        return _opened(None)

    def _writable(self, rel: str) -> Path | None:
        """Where the index may be written, never through a link (a `.gam/cache` linked
        elsewhere would get the memory's words); None when nowhere."""
        try:
            target = check_writable_path(self.corpus.root, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
        except (LinkedPathError, OSError):
            return None
        return target

    def _reset(self) -> None:
        """Start again from nothing (the database was damaged)."""
        if self._store is not None:
            with contextlib.suppress(sqlite3.Error):
                self._store.close()
            if self._store.path is not None:
                with contextlib.suppress(OSError):
                    self._store.path.unlink()
        self._store, self._synced, self._order = None, -1, None
        self._changes += 1

    def close(self) -> None:
        """Close the database (the memory closes): Windows opens files without
        FILE_SHARE_DELETE, so an index left open keeps its folder from being deleted or
        moved. A later use opens it again."""
        with self._lock:
            store, self._store, self._synced, self._order = self._store, None, -1, None
            if store is not None:
                with contextlib.suppress(sqlite3.Error):
                    store.close()

    # -- asking ---------------------------------------------------------------------------

    def search(self, query: str, top_k: int = 5) -> list[SearchHit]:
        self.ensure_built()
        terms = query_terms(query)
        top_k = max(1, top_k)
        near = self.semantic.nearest(query, FUSE_DEPTH) if self.semantic and terms else None
        if near is None:  # BM25 alone, as without embeddings
            # one consistent index, even if the watcher updates it meanwhile
            ranked = self._reading(lambda: self._scored(terms, top_k)) if terms else []
        else:
            depth = max(top_k, FUSE_DEPTH)
            lexical = self._reading(lambda: self._scored(terms, depth))
            ranked = fuse([[key for key, _ in lexical], near])[:top_k]
        return [
            SearchHit(key, score, snippet(self.corpus.text(key) or "", terms))
            for key, score in ranked
        ]

    def _scored(self, terms: list[str], top_k: int) -> list[tuple[str, float]]:
        store = self._open()
        if store.count == 0:
            return []
        scores = np.zeros(len(store.alive))
        average = store.total_length / store.count
        fetched: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term in terms:  # as rank-bm25 did: term by term, a repeated term twice
            if term not in fetched:
                fetched[term] = store.postings(store.words_of_stem(term))
            ids, tfs = fetched[term]
            if not len(ids):
                continue
            idf = math.log(1 + (store.count - len(ids) + 0.5) / (len(ids) + 0.5))
            lengths = store.lengths[ids]
            scores[ids] += idf * (tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * lengths / average)))
        return _best(scores, store.keys, top_k)

    def embed_pending(self) -> int:
        """Embed now every text that has no vector yet (the evaluation and the tests wait
        for it; searches do it behind); how many pieces. 0 without embeddings or when the
        endpoint fails (which `notices` then tells)."""
        if self.semantic is None:
            return 0
        self.ensure_built()
        return self.semantic.embed_all()

    def notices(self) -> list[str]:
        """What the user should be told about search and was not yet, each thing once (no
        embedding model, the endpoint failing, a backlog being embedded)."""
        return self.semantic.notices() if self.semantic is not None else []

    def containing(self, tokens: list[str]) -> list[str]:
        """The files whose text holds every one of `tokens` (search terms), by path."""
        self.ensure_built()
        return self._reading(lambda: self._containing(tokens)) if tokens else []

    def _containing(self, tokens: list[str]) -> list[str]:
        store = self._open()
        found = store.postings(store.words_of_stem(tokens[0]))[0]
        for token in tokens[1:]:
            found = np.intersect1d(found, store.postings(store.words_of_stem(token))[0])
        return sorted(key for i in found if (key := store.keys[i]) is not None)

    def holding(self, needle: str) -> Holding | None:
        """The keys whose lowercased text may hold `needle` (lowercased), by path: those
        with words holding its pieces. None when the index cannot narrow it down."""
        pieces = word_pieces(needle)
        if pieces is None:
            return None
        self.ensure_built()
        return self._reading(lambda: self._holding(needle, pieces))

    def _holding(self, needle: str, pieces: list[tuple[str, bool]]) -> Holding:
        store = self._open()
        found = np.zeros(0, np.int64)
        for n, (piece, whole) in enumerate(pieces):
            held = [piece] if whole else store.words_holding(piece)
            ids = store.documents(held) if held else np.zeros(0, np.int64)
            found = ids if n == 0 else np.intersect1d(found, ids, assume_unique=True)
            if not len(found):
                break
        # Texts whose words are not their text's runs (NFKC changed them): always read.
        irregular = np.array(sorted(store.irregular), np.int64)
        found = np.union1d(found, irregular)
        if len(found) > MANY_KEYS:  # sorting 100,000 paths takes 150 ms; their ranks, 15
            keys = [store.keys[i] for i in found[np.argsort(self._ranks(store)[found])]]
        else:
            keys = sorted(store.keys[i] for i in found)
        unsure = {store.keys[i] for i in irregular} if is_one_word(needle) else set(keys)
        return Holding(keys, unsure)

    def _ranks(self, store: Postings) -> np.ndarray:
        """Each document id's place in the order of keys (made again after changes)."""
        if self._order is None or len(self._order) != len(store.keys):
            ranked = sorted((k, i) for i, k in enumerate(store.keys) if k is not None)
            self._order = np.zeros(len(store.keys), np.int64)
            self._order[[i for _, i in ranked]] = np.arange(len(ranked))
        return self._order

    def titles(self) -> dict[str, str]:
        """The title of every file indexed (not of the originals), by path."""
        self.ensure_built()
        found = self._reading(lambda: self._open().titles())
        return {k: t for k, t in found.items() if not k.endswith(ORIGINAL)}


def _opened(path: Path | None) -> Postings:
    store = Postings(path, stem)
    store.load()
    return store


def _best(scores: np.ndarray, keys: list[str | None], top_k: int) -> list[tuple[str, float]]:
    """The `top_k` best scoring documents (score > 0), best first, ties by key."""
    found = np.flatnonzero(scores > 0)
    if len(found) > top_k:
        cut = np.partition(scores[found], len(found) - top_k)[len(found) - top_k]
        found = found[scores[found] >= cut]
    ranked = sorted(found.tolist(), key=lambda i: (-scores[i], keys[i]))[:top_k]
    return [(key, float(scores[i])) for i in ranked if (key := keys[i]) is not None]


def _searched(key: str, text: str) -> str:
    """What search reads of a file: a conversation is its title and what the person said
    in it. The memory's answers restate other notes, and each turn's metadata names the
    files it read: a conversation was found by words its person never said (a chat about
    a bike repair ranked for a question about a book club), and a long one lost to a
    short fact by the length its answers gave it."""
    if not key.startswith(f"{CONVERSATIONS_DIR}/"):
        return text
    said = user_words(text)
    return f"{front_value(text, 'title') or ''}\n{said}" if said else text


def _plain(text: str) -> bool:
    """Whether the words indexed are the runs of the text as grep reads it (lowercased)."""
    return unicodedata.is_normalized("NFKC", text)


def index_size(root: Path) -> int:
    path = Path(root) / CACHE_FILE
    return path.stat().st_size if path.exists() else 0
