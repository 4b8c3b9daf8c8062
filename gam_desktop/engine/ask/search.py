"""BM25 full-text search over a memory (rank-bm25), CJK-aware, cached on disk.

Tokens: NFKC, lowercase, stemmed words for alphabetic scripts and character bigrams for
Chinese, Japanese and Korean runs (whitespace splitting would score a Japanese
query at zero). Tokenized documents persist in `.gam/cache/bm25.json` keyed by
size and mtime, so a new process re-tokenizes only what changed; the BM25 model is
rebuilt from the cached tokens when the corpus changes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gam_desktop.engine.ask.corpus import Corpus
from gam_desktop.engine.store.changeset import atomic_write
from gam_desktop.engine.store.folder import CACHE_DIR
from gam_desktop.engine.store.links import check_writable_path
from gam_desktop.engine.textutil import STOPWORDS

CACHE_FILE = f"{CACHE_DIR}/bm25.json"
CACHE_VERSION = 2  # 2: stemmed tokens (the cache holds tokens, not scores)
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")


@functools.cache
def _bm25() -> Any:
    """The BM25 model class, made on the first search: rank-bm25 imports numpy, which the
    app's start (this module is imported for the find box) should not wait for."""
    from rank_bm25 import BM25Okapi

    class LuceneBM25(BM25Okapi):  # type: ignore[misc]  # rank-bm25 has no type hints
        """BM25 with Lucene's IDF, log(1 + (N - n + 0.5) / (n + 0.5)), which is never zero.
        rank-bm25's own IDF is zero for a word in half the files, and so is every score for
        it: in a new memory of one document (its memory, its original text, a README) a
        word the memory and its original share was found nowhere."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            for word, freq in nd.items():
                self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))
            self.average_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0

    return LuceneBM25


@functools.cache
def _stemmer() -> Any:
    """Snowball's English stemmer, loaded on first use (its import takes a while)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


_QUESTION_WORDS = ("long", "many", "much", "does", "did", "do", "until", "after", "before")


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """ "escalation", "escalates" and "escalate" are one search term (Snowball English;
    words with digits, like versions, stay as they are)."""
    return word if not word.isalpha() or len(word) < 4 else _stemmer().stemWord(word)


@functools.cache
def _query_stopwords() -> frozenset[str]:
    return frozenset(_stem(w) for w in (*STOPWORDS, *_QUESTION_WORDS))


def query_terms(query: str) -> list[str]:
    """The search terms of a question: "How long until…" would otherwise score the one
    passage that happens to say "how"."""
    stopwords = _query_stopwords()
    return [t for t in tokenize(query) if t not in stopwords] or tokenize(query)


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for run in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _IS_CJK.match(run):
            tokens.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        else:
            tokens.append(_stem(run))
    return tokens


@dataclass
class SearchHit:
    path: str
    score: float
    snippet: str


class SearchIndex:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.cache_path = corpus.root / CACHE_FILE
        self._tokens: dict[str, tuple[int, int, list[str]]] = {}  # path -> (mtime, size, tokens)
        self._model: Any = None  # rank-bm25's model (it has no type hints)
        self._paths: list[str] = []
        self._texts: dict[str, str] = {}  # the texts the model was built from, for snippets
        self._postings: dict[str, list[int]] = {}  # token -> indices of documents holding it
        self._built_generation = -1
        self._lock = threading.Lock()
        self.builds = 0  # how many times the BM25 model was (re)built: tests read it

    def _load_cache(self) -> None:
        try:
            data = json.loads(self.cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if data.get("version") == CACHE_VERSION:
            self._tokens = {p: (m, s, t) for p, (m, s, t) in data.get("files", {}).items()}

    def _save_cache(self) -> None:
        payload = {"version": CACHE_VERSION, "files": {p: list(v) for p, v in self._tokens.items()}}
        # A cache: in a read-only folder it only costs re-tokenizing next time.
        with contextlib.suppress(OSError):
            target = check_writable_path(self.corpus.root, CACHE_FILE)  # never through a link
            atomic_write(target, json.dumps(payload, ensure_ascii=False))

    def ensure_built(self) -> None:
        with self._lock:
            if self._model is not None and self._built_generation == self.corpus.generation:
                return
            if not self._tokens:
                self._load_cache()
            changed = False
            current = {}
            generation = self.corpus.generation
            files = self.corpus.snapshot()
            for path, file in files.items():
                cached = self._tokens.get(path)
                if cached and cached[0] == file.mtime_ns and cached[1] == file.size:
                    current[path] = cached
                else:
                    current[path] = (file.mtime_ns, file.size, tokenize(file.text))
                    changed = True
            changed = changed or set(current) != set(self._tokens)
            self._tokens = current
            self._paths = sorted(current)
            corpus = [current[p][2] or ["\u0000"] for p in self._paths]
            self._model = _bm25()(corpus) if corpus else None
            self._postings = {}
            for i, frequencies in enumerate(self._model.doc_freqs if self._model else []):
                for token in frequencies:
                    self._postings.setdefault(token, []).append(i)
            self._texts = {p: files[p].text for p in self._paths}
            self._built_generation = generation
            self.builds += 1
            if changed:
                self._save_cache()

    def containing(self, tokens: list[str]) -> list[str]:
        """The files whose text holds every one of `tokens`, from the postings."""
        self.ensure_built()
        with self._lock:
            postings, paths = self._postings, self._paths
        if not tokens:
            return []
        found = set(postings.get(tokens[0], ()))
        for token in tokens[1:]:
            found &= set(postings.get(token, ()))
        return [paths[i] for i in sorted(found)]

    def search(self, query: str, top_k: int = 5) -> list[SearchHit]:
        self.ensure_built()
        with self._lock:  # one consistent model, even if the watcher rebuilds meanwhile
            model, paths, texts = self._model, self._paths, self._texts
        terms = query_terms(query)
        if model is None or not terms:
            return []
        scores = model.get_scores(terms)
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[: max(1, top_k)]
        hits = []
        for i in ranked:
            if scores[i] <= 0:
                break
            hits.append(SearchHit(paths[i], float(scores[i]), snippet(texts[paths[i]], terms)))
        return hits


def snippet(text: str, terms: list[str], width: int = 160) -> str:
    body = text.split("\n---", 2)[-1] if text.startswith("---") else text
    flat = " ".join(body.split())
    lower = flat.lower()
    at = min((i for t in terms if (i := lower.find(t)) >= 0), default=0)
    start = max(0, at - width // 4)
    return (
        ("…" if start else "")
        + flat[start : start + width]
        + ("…" if start + width < len(flat) else "")
    )


def index_size(root: Path) -> int:
    path = Path(root) / CACHE_FILE
    return path.stat().st_size if path.exists() else 0
