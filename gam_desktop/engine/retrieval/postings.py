"""The search index on disk: the indexed texts and their words' postings, in SQLite.

`.gam/cache/search.sqlite3` (not in git; made again when missing, unreadable or of another
format) holds, per indexed text (a memory, its original wording, a README, ...), its key,
the size and mtime of the file it was read from, its length in words and its title; and
per word (as written, lowercased, not stemmed: grep finds files by the words holding a
pattern, BM25 groups the words of a stem) the texts holding it and how often.

A change rewrites nothing: a changed text is a new document (its old one leaves `docs`
and is ignored wherever it is still listed), whose postings are rows of `recent`; once
those are many they become one more part of each word's postings, and a word with too
many parts has them joined into one. A 10-file change costs those 10 files, not the
index. Another process (the app and gam-request on one memory) may write meanwhile:
`PRAGMA data_version` says so, and the table of documents is read again.
"""

from __future__ import annotations

import contextlib
import sqlite3
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

FORMAT = "3"  # the tables and what is indexed: another value is read as no index
RECENT_LIMIT = 200_000  # rows of `recent` before they are merged into the parts
MAX_PARTS = 12  # a word's postings in more parts than this are joined into one
IdArray = npt.NDArray[np.int64]
Ints = npt.NDArray[np.int64] | npt.NDArray[np.int32]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs(
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, length INTEGER NOT NULL, plain INTEGER NOT NULL, title TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vocab(stem TEXT, word TEXT, PRIMARY KEY(stem, word)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS parts(
    word TEXT NOT NULL, part INTEGER NOT NULL, ids BLOB NOT NULL, tfs BLOB NOT NULL,
    PRIMARY KEY(word, part)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recent(
    word TEXT NOT NULL, id INTEGER NOT NULL, tf INTEGER NOT NULL, PRIMARY KEY(word, id))
    WITHOUT ROWID;
"""


@dataclass
class Doc:
    """A text to index: its key, the stat of the file it came from, its words."""

    key: str
    mtime_ns: int
    size: int
    words: list[str]
    title: str
    plain: bool  # its words are the runs of its lowercased text (NFKC changes nothing)


class Postings:
    """The index of one memory, and the table of its documents kept in memory (ids,
    stats, lengths). Not thread-safe: SearchIndex holds a lock around every use."""

    def __init__(self, path: Path | None, stem: Callable[[str], str]) -> None:
        self.path = path  # None: kept in memory only (a folder that cannot be written)
        self.stem = stem
        self.ids: dict[str, int] = {}  # key -> id
        # key -> (mtime_ns, size) of the file when indexed (not for a text that is part of
        # a file, its mtime_ns -1: a memory's original)
        self.stats: dict[str, tuple[int, int]] = {}
        self.keys: list[str | None] = []  # id -> key (None: no longer indexed)
        self.alive: npt.NDArray[np.bool_] = np.zeros(0, bool)
        self.lengths: npt.NDArray[np.float64] = np.zeros(0)
        self.count = 0  # documents indexed
        self.total_length = 0  # their words, together
        self.irregular: set[int] = set()  # documents whose words are not their text's runs
        self._db = self._connect()
        self._seen_version = -1
        self._recent_rows = 0
        self._vocabulary: str | None = None  # every word, one a line: what grep scans

    # -- opening --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """The database, made anew when it is unreadable or of another format."""
        for attempt in range(2):
            db = sqlite3.connect(
                str(self.path) if self.path else ":memory:",
                isolation_level=None,  # transactions are explicit
                check_same_thread=False,  # the watcher's thread and tasks share it (locked)
                timeout=30,
            )
            try:
                db.execute("PRAGMA cache_size=-16000")  # 16 MB
                if self._format(db) == FORMAT:
                    return db
                db.close()
            except sqlite3.OperationalError:  # locked, unreadable: never deleted
                db.close()
                raise
            except sqlite3.DatabaseError:  # not a database, or damaged
                db.close()
            if self.path is not None and attempt == 0:
                self.path.unlink(missing_ok=True)
                for extra in ("-journal", "-wal", "-shm"):
                    self.path.with_name(self.path.name + extra).unlink(missing_ok=True)
        raise sqlite3.DatabaseError(f"cannot make the search index at {self.path}")

    @staticmethod
    def _format(db: sqlite3.Connection) -> str | None:
        """The index's format, after making the tables in an empty database."""
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables == 0:
            db.executescript(_SCHEMA)
            db.execute("INSERT INTO meta VALUES ('format', ?), ('parts', 0)", (FORMAT,))
        row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self._db.close()

    @property
    def db(self) -> sqlite3.Connection:
        """The connection: the vectors' tables (vectors.py) live in the same database."""
        return self._db

    def load(self) -> None:
        """The table of documents, as the database has it now: read in one pass (a new
        process pays it before its first search: ~0.3 s at 200,000 texts; three scans of
        the table, then each column sorted into place by numpy, took ~1.3 s)."""
        db = self._db
        top = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'docs'").fetchone()
        size = (top[0] if top else 0) + 1  # every id ever given: parts still list old ones
        self.alive = np.zeros(size, bool)
        self.lengths = np.zeros(size)
        keys: list[str | None] = [None] * size
        ids: dict[str, int] = {}
        stats: dict[str, tuple[int, int]] = {}
        irregular: set[int] = set()
        lengths = array("q")
        for doc_id, key, length, mtime_ns, file_size, plain in db.execute(
            "SELECT id, key, length, mtime_ns, size, plain FROM docs"
        ):
            keys[doc_id] = key
            ids[key] = doc_id
            lengths.append(length)
            if mtime_ns >= 0:
                stats[key] = (mtime_ns, file_size)
            if not plain:
                irregular.add(doc_id)
        places = np.fromiter(ids.values(), np.int64, len(ids))  # (in the order rows came)
        self.alive[places] = True
        self.lengths[places] = np.frombuffer(lengths, np.int64) if len(lengths) else 0
        self.keys, self.ids, self.stats, self.irregular = keys, ids, stats, irregular
        self.count, self.total_length = len(ids), int(self.lengths.sum())
        self._recent_rows = db.execute("SELECT count(*) FROM recent").fetchone()[0]
        self._vocabulary = None
        self._seen_version = self._data_version()

    def _data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def follow_others(self) -> bool:
        """Whether another process changed the index since it was read; if so, its table
        of documents is read again."""
        if self._data_version() == self._seen_version:
            return False
        self.load()
        return True

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One write transaction; the table of documents follows what it did (or, when it
        fails, what the database still has)."""
        self._db.execute("BEGIN IMMEDIATE")  # no other process writes until COMMIT
        try:
            self.follow_others()
            yield
            self._db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            with contextlib.suppress(sqlite3.Error):
                self.load()
            raise
        self._seen_version = self._data_version()

    # -- writing --------------------------------------------------------------------------

    def remove(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        gone = [self.ids.pop(key) for key in keys if key in self.ids]
        for key in keys:
            self.stats.pop(key, None)
        self._db.executemany("DELETE FROM docs WHERE id = ?", ((i,) for i in gone))
        for doc_id in gone:
            self.alive[doc_id] = False
            self.keys[doc_id] = None
            self.count -= 1
            self.total_length -= int(self.lengths[doc_id])
            self.irregular.discard(doc_id)

    def add(self, docs: Iterable[Doc], direct: bool = False) -> int:
        """Index `docs` (keys not indexed now), read one at a time; returns how many. With
        `direct` (a build from nothing) their postings become a part of their own at once,
        not rows of `recent`."""
        top = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'docs'").fetchone()
        next_id = (top[0] if top else 0) + 1  # ids never given twice: parts keep old ones
        names: dict[str, int] = {}  # the words of the batch, numbered
        wids, ids, tfs = array("i"), array("i"), array("i")  # one posting per row (int32:
        # a build from nothing holds millions of them)
        rows = []
        for doc in docs:
            length = len(doc.words) or 1  # an empty text counts one word, as in rank-bm25
            rows.append((next_id, doc.key, doc.mtime_ns, doc.size, length, doc.plain, doc.title))
            self._note(next_id, doc, length)
            counts = Counter(doc.words)
            wids.extend([names.setdefault(word, len(names)) for word in counts])
            ids.extend([next_id] * len(counts))
            tfs.extend(counts.values())
            next_id += 1
        self._db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        words = list(names)
        self._new_words(words)
        if direct:
            self._add_part(words, _array(wids), _array(ids), _array(tfs))
            return len(rows)
        postings = zip(map(words.__getitem__, wids), ids, tfs, strict=True)
        self._db.executemany("INSERT INTO recent VALUES (?, ?, ?)", postings)
        self._recent_rows += len(ids)
        if self._recent_rows > RECENT_LIMIT:
            self.merge_recent()
        return len(rows)

    def _new_words(self, words: list[str]) -> None:
        """`words` in the vocabulary (those new to it added to the copy grep scans)."""
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS batch(stem TEXT, word TEXT)")
        self._db.executemany("INSERT INTO batch VALUES (?, ?)", ((self.stem(w), w) for w in words))
        added = self._db.execute(
            "INSERT OR IGNORE INTO vocab SELECT stem, word FROM batch WHERE true RETURNING word"
        ).fetchall()
        self._db.execute("DELETE FROM batch")
        if self._vocabulary is not None and added:
            self._vocabulary += "\n".join(w for (w,) in added) + "\n"

    def _note(self, doc_id: int, doc: Doc, length: int) -> None:
        """A document added: the table kept in memory follows."""
        if doc_id >= len(self.keys):
            grow = max(doc_id + 1, len(self.keys) * 2)
            self.keys += [None] * (grow - len(self.keys))
            self.alive = np.concatenate([self.alive, np.zeros(grow - len(self.alive), bool)])
            self.lengths = np.concatenate([self.lengths, np.zeros(grow - len(self.lengths))])
        self.ids[doc.key] = doc_id
        if doc.mtime_ns >= 0:
            self.stats[doc.key] = (doc.mtime_ns, doc.size)
        self.keys[doc_id] = doc.key
        self.alive[doc_id] = True
        self.lengths[doc_id] = length
        self.count += 1
        self.total_length += length
        if not doc.plain:
            self.irregular.add(doc_id)

    def merge_recent(self) -> None:
        """The rows of `recent` become one more part of each word's postings."""
        rows = self._db.execute("SELECT word, id, tf FROM recent").fetchall()
        names: dict[str, int] = {}
        wids = np.array([names.setdefault(word, len(names)) for word, _, _ in rows], np.int32)
        ids = np.array([row[1] for row in rows], np.int32)
        tfs = np.array([row[2] for row in rows], np.int32)
        self._add_part(list(names), wids, ids, tfs)
        self._db.execute("DELETE FROM recent")
        self._recent_rows = 0

    def _add_part(self, words: list[str], wids: Ints, ids: Ints, tfs: Ints) -> None:
        """Postings (one per row: word number, document, count) as one more part of each
        word's; a word then in more than MAX_PARTS parts has them joined into one."""
        part = int(self._db.execute("SELECT value FROM meta WHERE key = 'parts'").fetchone()[0]) + 1
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'parts'", (part,))
        keep = self._alive(ids)
        if not keep.all():
            wids, ids, tfs = wids[keep], ids[keep], tfs[keep]
        order = np.lexsort((ids, wids))  # by word, then by document
        wids, ids, tfs = wids[order], ids[order], tfs[order]
        if not len(wids):
            return
        starts = np.flatnonzero(np.diff(wids, prepend=-1))
        ends = np.append(starts[1:], len(wids)).tolist()
        steps = np.diff(ids, prepend=0)
        steps[starts] = ids[starts]  # each word's first document counted from 0
        step_widths = _widths(np.maximum.reduceat(steps, starts)).tolist()
        tf_widths = _widths(np.maximum.reduceat(tfs, starts)).tolist()
        self._db.executemany(
            "INSERT INTO parts VALUES (?, ?, ?, ?)",
            (
                (words[w], part, _packed(steps[a:b], sw), _packed(tfs[a:b], tw))
                for w, a, b, sw, tw in zip(
                    wids[starts].tolist(),
                    starts.tolist(),
                    ends,
                    step_widths,
                    tf_widths,
                    strict=True,
                )
            ),
        )
        touched = [words[w] for w in wids[starts].tolist()]
        for group in _groups(touched):
            query = f"SELECT word FROM parts WHERE word IN ({_marks(group)}) GROUP BY word"
            for (word,) in self._db.execute(query + f" HAVING count(*) > {MAX_PARTS}", group):
                self._join(word, part)

    def _join(self, word: str, part: int) -> None:
        """A word's parts as one, without the documents no longer indexed."""
        ids, tfs = self._parts([word])
        order = np.argsort(ids, kind="stable")
        self._db.execute("DELETE FROM parts WHERE word = ?", (word,))
        self._db.execute(
            "INSERT INTO parts VALUES (?, ?, ?, ?)",
            (word, part, _pack(ids[order], delta=True), _pack(tfs[order])),
        )

    # -- reading --------------------------------------------------------------------------

    def words_of_stem(self, stem: str) -> list[str]:
        return [w for (w,) in self._db.execute("SELECT word FROM vocab WHERE stem = ?", (stem,))]

    def words_holding(self, piece: str) -> list[str]:
        """Every word indexed that holds `piece` (the vocabulary is read once, then kept:
        a scan of it in SQLite took 20-100 ms)."""
        if self._vocabulary is None:
            words = "\n".join(w for (w,) in self._db.execute("SELECT word FROM vocab"))
            self._vocabulary = f"\n{words}\n"
        text, found = self._vocabulary, dict[str, None]()
        at = text.find(piece)
        while at >= 0:
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            found[text[start:end]] = None
            at = text.find(piece, end)
        return list(found)

    def documents(self, words: list[str]) -> IdArray:
        """The ids of the indexed documents holding any of `words`, sorted."""
        ids = self._parts(words)[0]
        recent = self._recent(words)[:, 0]
        mask = np.zeros(len(self.alive), bool)
        mask[ids] = True
        mask[recent[self._alive(recent)]] = True
        return np.flatnonzero(mask & self.alive)

    def postings(self, words: list[str]) -> tuple[IdArray, IdArray]:
        """(ids, counts) of the indexed documents holding any of `words`: one row per
        document, its counts of those words added up."""
        ids, tfs = self._parts(words)
        recent = self._recent(words)
        if len(recent):
            ids, tfs = np.concatenate([ids, recent[:, 0]]), np.concatenate([tfs, recent[:, 1]])
        keep = self._alive(ids)
        ids, tfs = ids[keep], tfs[keep]
        if len(words) > 1:  # one document may hold several of the words
            ids, where = np.unique(ids, return_inverse=True)
            tfs = np.bincount(where, weights=tfs).astype(np.int64)
        return ids, tfs

    def _parts(self, words: list[str]) -> tuple[IdArray, IdArray]:
        found = [
            row
            for group in _groups(words)
            for row in self._db.execute(
                f"SELECT ids, tfs FROM parts WHERE word IN ({_marks(group)})", group
            )
        ]
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        ids = np.concatenate([_unpack(i, delta=True) for i, _ in found])
        tfs = np.concatenate([_unpack(t) for _, t in found])
        keep = self._alive(ids)
        return ids[keep], tfs[keep]

    def _alive(self, ids: Ints) -> npt.NDArray[np.bool_]:
        """Which of `ids` this table of documents holds, alive. An id beyond the table was
        given since it was loaded, by another connection to the database (gam-serve's
        second set of tools, another process): a document this reader does not know yet,
        left out until it loads the table again (it was an IndexError under load)."""
        inside = ids < len(self.alive)
        if inside.all():
            return self.alive[ids]
        keep = np.zeros(len(ids), bool)
        keep[inside] = self.alive[ids[inside]]
        return keep

    def _recent(self, words: list[str]) -> npt.NDArray[np.int64]:
        if not self._recent_rows:
            return np.zeros((0, 2), np.int64)
        rows = [
            row
            for group in _groups(words)
            for row in self._db.execute(
                f"SELECT id, tf FROM recent WHERE word IN ({_marks(group)})", group
            )
        ]
        return np.array(rows, np.int64).reshape(-1, 2)

    def titles(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, title FROM docs").fetchall())


def _groups(words: list[str], size: int = 500) -> Iterator[list[str]]:
    """`words` a few hundred at a time (SQLite limits the parameters of a statement)."""
    for start in range(0, len(words), size):
        yield words[start : start + size]


def _marks(group: list[str]) -> str:
    return ",".join("?" * len(group))


def _array(values: array[int]) -> npt.NDArray[np.int32]:
    return np.frombuffer(values, np.int32) if len(values) else np.zeros(0, np.int32)


_WIDTHS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.int64}


def _widths(tops: Ints) -> Ints:
    """The bytes that numbers up to each of `tops` need."""
    tops = tops.astype(np.int64)
    return np.where(tops < 2**8, 1, np.where(tops < 2**16, 2, np.where(tops < 2**32, 4, 8)))


def _packed(values: Ints, width: int) -> bytes:
    """Numbers as a blob: a byte saying how wide each is, then each in that many bytes."""
    return bytes([width]) + values.astype(_WIDTHS[width]).tobytes()


def _pack(values: IdArray, delta: bool = False) -> bytes:
    """`values` packed; with `delta`, (sorted) document ids as the steps between them: a
    common word's steps fit in one byte each."""
    if delta:
        values = np.diff(values, prepend=0)
    return _packed(values, int(_widths(values.max(initial=0, keepdims=True))[0]))


def _unpack(blob: bytes, delta: bool = False) -> IdArray:
    values = np.frombuffer(blob, _WIDTHS[blob[0]], offset=1).astype(np.int64)
    return np.cumsum(values) if delta else values
