"""The search index on disk (issue 14): BM25 scores as rank-bm25 gave them, updated file by
file as a rebuild would make it, grep narrowed down by its words, kept across processes."""

from __future__ import annotations

import hashlib
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from rank_bm25 import BM25Okapi

from gam_desktop.engine.retrieval import postings, search, tools
from gam_desktop.engine.retrieval.corpus import ORIGINAL, Corpus
from gam_desktop.engine.retrieval.search import CACHE_FILE, SearchIndex, query_terms, tokenize
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.markdown import render_memory

QUERIES = [
    "quokka checklist",
    "escalation policy escalates",
    "How long until the rotation hands over?",
    "Acme 4.2 release",
    "勾配降下法",
    "the the memory",  # a repeated term counts twice, as in rank-bm25
    "tomatoes",
    "nothing matches zzzz",
]


class LuceneBM25(BM25Okapi):  # type: ignore[misc]
    """The search as it was before the index: rank-bm25 over every text, Lucene's IDF."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def reference(root: Path, query: str, top_k: int) -> list[tuple[str, float]]:
    """rank-bm25's hits over every text of the folder (memories, originals, READMEs)."""
    corpus = Corpus(root)
    corpus.refresh()
    texts = corpus.snapshot()
    keys = sorted(
        [*texts, *(k + ORIGINAL for k in texts if k + ORIGINAL in texts)]  # originals too
    )
    model = LuceneBM25([tokenize(texts[k].text) or ["\u0000"] for k in keys])
    scores = model.get_scores(query_terms(query))
    ranked = sorted(range(len(keys)), key=lambda i: -scores[i])[:top_k]
    return [(keys[i], float(scores[i])) for i in ranked if scores[i] > 0]


def hits(index: SearchIndex, query: str, top_k: int = 8) -> list[tuple[str, float]]:
    return [(h.path, h.score) for h in index.search(query, top_k)]


def source(root: Path, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    (root / ".gam" / "sources").mkdir(parents=True, exist_ok=True)
    (root / ".gam" / "sources" / f"{digest}.txt").write_text(text, encoding="utf-8")
    return digest


def memory(root: Path, rel: str, body: str, digest: str = "", span: tuple[int, int] = (0, 0)):
    front: dict[str, object] = {"title": Path(rel).stem, "tldr": body.split(".")[0] + "."}
    if digest:
        front.update(source="notes.pdf", source_hash=digest, span=list(span))
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(render_memory(front, body), encoding="utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    text = (
        "Acme 4.2 release notes. The escalation policy escalates pages after 5 minutes.\n\n"
        "The quokka checklist is mandatory before the rotation hands over on Monday.\n\n"
        "ニューラルネットワークは勾配降下法で学習します。"
    )
    digest = source(root, text)
    memory(root, "ops/escalation.md", "Acme escalates pages fast.", digest, (0, 80))
    memory(root, "ops/quokka.md", "A checklist before handing over.", digest, (82, 160))
    memory(root, "ml/gradient.md", "Training by gradient descent.", digest, (162, len(text)))
    for i in range(12):  # words in half the files, and more
        memory(root, f"garden/note_{i}.md", f"Note {i} about tomatoes and the memory {i % 3}.")
    (root / "README.md").write_text("# Memory\n\nOps, ML and a garden: the memory.\n")
    (root / "empty.md").write_text("")
    return root


def test_the_index_scores_as_rank_bm25_did(folder: Path) -> None:
    index = MemoryTools(folder).index
    for query in QUERIES:
        assert hits(index, query) == reference(folder, query, 8), query


def test_an_update_file_by_file_scores_as_a_rebuild(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "RECENT_LIMIT", 40)  # merged into parts now and then
    monkeypatch.setattr(postings, "MAX_PARTS", 2)  # and the parts joined again
    live = MemoryTools(folder)
    live.bm25_search("warm up")
    for step in range(4):
        changed = [f"garden/note_{step}.md", f"garden/new_{step}.md", "ops/quokka.md"]
        memory(folder, changed[0], f"Note {step} now about the quokka checklist and tomatoes.")
        memory(folder, changed[1], f"A new note {step} on escalation and the memory.")
        memory(folder, changed[2], f"Quokka checklist, version {step}.")
        if step == 2:
            (folder / "garden" / "note_11.md").unlink()
            changed.append("garden/note_11.md")
        if step == 3:
            shutil.move(folder / "ml", folder / "learning")
            changed += ["ml", "learning"]
        live.corpus.refresh(changed)  # what the watcher, or an operation, says changed
        for query in QUERIES:
            assert hits(live.index, query) == reference(folder, query, 8), (step, query)
    assert live.index.indexed < 20 + 4 * 8  # the first build, then the changes only
    (folder / CACHE_FILE).unlink()
    rebuilt = MemoryTools(folder).index
    for query in QUERIES:
        assert hits(live.index, query) == hits(rebuilt, query) == reference(folder, query, 8)


def test_a_new_process_loads_the_index_and_reads_only_what_changed(folder: Path) -> None:
    MemoryTools(folder).bm25_search("quokka")
    memory(folder, "garden/note_1.md", "Note 1 is now about the quokka.")
    fresh = MemoryTools(folder)
    assert "garden/note_1.md" in fresh.bm25_search("quokka", top_k=10).matched
    assert fresh.index.indexed == 1


def test_the_table_of_documents_read_back_is_the_one_kept_while_writing(folder: Path) -> None:
    (folder / "wide.md").write_text("Ｑｕｏｋｋａ written full-width.\n", encoding="utf-8")
    live = MemoryTools(folder)
    live.bm25_search("quokka")
    (folder / "garden/note_2.md").unlink()  # ids no longer given, lengths no longer counted
    memory(folder, "garden/note_3.md", "Note 3 now speaks of wombats only.")
    live.corpus.refresh(["garden/note_2.md", "garden/note_3.md"])
    live.bm25_search("wombats")
    kept = live.index._open()
    read = postings.Postings(kept.path, kept.stem)
    read.load()
    assert (read.ids, read.stats, read.keys) == (kept.ids, kept.stats, kept.keys[: len(read.keys)])
    assert read.irregular == kept.irregular == {kept.ids["wide.md"]}
    alive, lengths = kept.alive[: len(read.alive)], kept.lengths[: len(read.alive)]
    assert (read.alive == alive).all()  # (a removed text's length stays in the live table)
    assert (read.lengths[alive] == lengths[alive]).all()
    assert (read.count, read.total_length) == (kept.count, kept.total_length)


@pytest.mark.parametrize("damage", ["garbage", "other format", "truncated"])
def test_a_damaged_or_foreign_index_is_made_again(folder: Path, damage: str) -> None:
    expected = hits(MemoryTools(folder).index, "quokka checklist")
    path = folder / CACHE_FILE
    if damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:3000])
    else:
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = 'old' WHERE key = 'format'")
    index = MemoryTools(folder).index
    assert hits(index, "quokka checklist") == expected
    assert index.indexed == len(index.corpus.files) + 3  # made from the files again


def test_an_index_written_by_another_process_is_followed(folder: Path) -> None:
    mine = MemoryTools(folder)
    mine.bm25_search("quokka")
    memory(folder, "ops/quokka.md", "The wombat rota replaced the checklist.")
    other = MemoryTools(folder)  # gam-request, say, while the app is open
    assert other.bm25_search("wombat").matched == ["ops/quokka.md"]
    mine.corpus.refresh(["ops/quokka.md"])
    assert mine.bm25_search("wombat").matched == ["ops/quokka.md"]
    assert hits(mine.index, "wombat rota") == reference(folder, "wombat rota", 8)


@pytest.mark.parametrize(
    "pattern",
    [
        "quokka",  # a word
        "okka chec",  # across two words, starting and ending inside them
        "escalat",  # inside words
        "QUOKKA",  # any case
        "勾配降下",  # CJK
        "降",  # one CJK character
        "e",  # in almost every file
        ": '",  # no letter or digit: every file is read
        "title: note_1",  # front matter
        "tomatoes and the memory 2",
        "ｑｕｏｋｋａ",  # full-width: only in the file that writes it so
        "not there",
    ],
)
def test_grep_narrowed_by_the_index_finds_what_reading_every_file_finds(
    folder: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "wide.md").write_text("Ｑｕｏｋｋａ written full-width.\n", encoding="utf-8")
    read = MemoryTools(folder).grep(pattern)
    monkeypatch.setattr(tools, "GREP_READ_LIMIT", 0)  # every folder is "big"
    narrowed = MemoryTools(folder)
    assert narrowed.grep(pattern) == read
    assert narrowed.grep(pattern, "garden") == MemoryTools(folder).grep(pattern, "garden")
    monkeypatch.setattr(search, "MANY_KEYS", 0)  # ordered by the ranks of every path
    assert narrowed.grep(pattern) == read


def test_grep_past_its_cap_counts_every_file_without_reading_them(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(60):
        memory(folder, f"many/m_{i:02d}.md", f"Memory {i} mentions the zebra crossing.")
    for i in range(3):  # indexed as "zebra" (NFKC), but grep reads "ｚｅｂｒａ": no match
        (folder / f"wide_{i}.md").write_text("A ｚｅｂｒａ written full-width.\n", "utf-8")
    read = MemoryTools(folder).grep("zebra")
    monkeypatch.setattr(tools, "GREP_READ_LIMIT", 0)
    narrowed = MemoryTools(folder)
    narrowed.grep("warm up the index")
    reads: list[str] = []
    text = narrowed.corpus.text
    monkeypatch.setattr(narrowed.corpus, "text", lambda key: reads.append(key) or text(key))
    assert narrowed.grep("zebra") == read and "60 files match" in read.text
    assert len(reads) < 30  # the lines shown were read; the other matches only counted


def test_titles_come_from_the_index(folder: Path) -> None:
    from gam_desktop.engine.retrieval.find import titles

    found = titles(MemoryTools(folder))
    assert found["ops/quokka.md"] == "quokka" and found["README.md"] == "Memory"
    assert not any(key.endswith(ORIGINAL) for key in found)


def test_a_watched_corpus_walks_the_tree_only_when_told(folder: Path) -> None:
    corpus = Corpus(folder)
    corpus.refresh()
    corpus.watched = lambda: True
    memory(folder, "ops/unseen.md", "Nobody reported this file.")
    corpus.refresh_if_stale(max_age=0)
    assert "ops/unseen.md" not in corpus.files  # the watcher will say so
    corpus.refresh(["ops/unseen.md"])
    assert "ops/unseen.md" in corpus.files
    corpus.watched = lambda: False  # the watcher stopped: walks again
    memory(folder, "ops/later.md", "Nobody reported this one either.")
    corpus.refresh_if_stale(max_age=0)
    assert "ops/later.md" in corpus.files


def test_a_reader_ignores_documents_another_connection_added_since_it_loaded(
    folder: Path,
) -> None:
    """gam-serve's two sets of tools share the database: requests read one while the other
    indexes new turns, and a write can land between a reader's look at the database and
    its read. Ids beyond the reader's table of documents were an IndexError (500s under
    load); they are documents it does not know yet, until it follows the index."""
    reader = MemoryTools(folder)
    reader.index.ensure_built()
    store = reader.index._open()  # what a search reads once it has looked (no new look)
    before = store.postings(store.words_of_stem("tomato"))
    assert len(before[0]) == 12
    for i in range(80):  # more ids than the reader's table has room for
        memory(folder, f"later/tomatoes_{i}.md", f"Tomatoes again, {i} of them.")
    writer = MemoryTools(folder)
    writer.corpus.refresh()
    writer.index.ensure_built()
    assert len(hits(writer.index, "tomatoes", 100)) == 12 + 80
    ids, tfs = store.postings(store.words_of_stem("tomato"))  # the write landed meanwhile
    assert ids.tolist() == before[0].tolist() and tfs.tolist() == before[1].tolist()
    assert len(store.documents(store.words_of_stem("tomato"))) == 12
    reader.corpus.refresh()
    assert len(hits(reader.index, "tomatoes", 100)) == 12 + 80  # followed at the next look
