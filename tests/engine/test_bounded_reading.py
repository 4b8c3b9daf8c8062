"""What is read of a file is bounded by what it is for, not by what the file holds
(issue 36, the adversarial passes): a 400 MB file another program put in the memory is
indexed up to a limit; a web page or an EPUB is parsed within a count of elements and
texts (an EPUB's chapters share it) and a depth checked as each element opens, and is
refused in one line past them while the rest of the drop is read; an old page whose
paragraphs never close is read, not taken for a page nested thousands deep."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from gam_desktop.engine.ingest import htmltree, packages
from gam_desktop.engine.ingest.documents import DocumentError, load_file
from gam_desktop.engine.retrieval import corpus as corpus_module
from gam_desktop.engine.retrieval.corpus import Corpus
from gam_desktop.engine.retrieval.search import SearchIndex
from tests.hostile_pages import deep_page, empty_elements_page, epub, old_page

# -- a huge file in the memory folder -----------------------------------------------------


def test_a_huge_file_put_in_the_folder_is_indexed_up_to_the_read_limit(tmp_path: Path) -> None:
    """A Markdown file bigger than READ_LIMIT, saved in the folder by another program (not
    added): the index reads its first READ_LIMIT characters, as `cat` reads only what it
    shows (whole, 400 MB cost gigabytes: 50 MB took 690 MB of memory to index)."""
    (tmp_path / "note.md").write_text("---\ntitle: Note\n---\n\nA small note about zebras.\n")
    line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n"
    repeats = corpus_module.READ_LIMIT // len(line) + 1  # the file goes past the limit
    with (tmp_path / "big.md").open("w", encoding="utf-8") as big:
        big.write("Aardvarks first.\n")
        big.write(line * repeats)
        big.write("uniquetailword at the end\n")
    corpus = Corpus(tmp_path)
    index = SearchIndex(corpus)
    try:
        assert [hit.path for hit in index.search("aardvarks")] == ["big.md"]
        assert [hit.path for hit in index.search("zebras")] == ["note.md"]
        assert index.search("uniquetailword") == []  # past the limit: never read
        assert len(corpus.text("big.md") or "") == corpus_module.READ_LIMIT
    finally:
        index.close()


# -- web pages and books: elements and texts counted as they are parsed ------------------


def test_a_page_of_more_elements_than_the_limit_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(htmltree, "MAX_NODES", 1_000)
    page = tmp_path / "many.html"
    page.write_text("<html><body>" + "<p>x</p>" * 600 + "</body></html>")  # 1,200 and more
    with pytest.raises(DocumentError) as refused:
        load_file(page)
    assert str(refused.value) == (
        "many.html: its HTML holds more than 1,000 elements and runs of text, more than can"
        " be read in memory"
    )


def test_elements_are_counted_as_the_page_is_parsed_not_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused while the tree is built: no more elements are made than the limit (the
    page of a million empty elements took 100 s and 1.2 GB to build whole)."""
    monkeypatch.setattr(htmltree, "MAX_NODES", 1_000)
    made = []
    push = BeautifulSoup.pushTag
    monkeypatch.setattr(
        BeautifulSoup, "pushTag", lambda soup, tag: (made.append(1), push(soup, tag))
    )
    page = tmp_path / "empty.html"
    page.write_text(empty_elements_page(100_000))
    with pytest.raises(DocumentError, match="more than 1,000 elements"):
        load_file(page)
    assert len(made) <= 1_001


def test_a_books_chapters_share_one_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chapter under the limit, the book over it: refused whole, in one line."""
    monkeypatch.setattr(htmltree, "MAX_NODES", 1_000)
    chapter = "<html><body>" + "<p>otters</p>" * 200 + "</body></html>"  # ~400 each
    book = epub(tmp_path / "long.epub", {f"c{i}.xhtml": chapter for i in range(4)})
    with pytest.raises(DocumentError) as refused:
        load_file(book)
    assert str(refused.value).startswith("long.epub: its HTML holds more than 1,000 elements")


def test_a_spine_naming_one_chapter_again_and_again_reads_it_once(tmp_path: Path) -> None:
    page = "<html><body><p>Otters hold hands while they sleep.</p></body></html>"
    book = epub(tmp_path / "loop.epub", {"c.xhtml": page}, spine=["c.xhtml"] * 5_000)
    assert load_file(book).text.count("Otters hold hands") == 1


def test_a_package_document_of_too_many_elements_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package document is parsed whole by lxml: its elements are counted first, as
    a Word file's parts are (a spine of millions of entries is gigabytes of tree)."""
    monkeypatch.setattr(packages, "MAX_TREE_ELEMENTS", 1_000)
    page = "<html><body><p>Otters hold hands while they sleep.</p></body></html>"
    book = epub(tmp_path / "spine.epub", {"c.xhtml": page}, padding=2_000)
    with pytest.raises(DocumentError) as refused:
        load_file(book)
    assert str(refused.value) == (
        "spine.epub: its XML holds more than 1,000 elements, more than can be read in memory"
    )


def test_chapters_missing_from_the_zip_are_one_warning(tmp_path: Path) -> None:
    """A spine naming paths out of the zip (`../../etc/passwd`) or thousands of missing
    chapters: those are members of the zip that are not there (no file on disk is ever
    read), said in one line."""
    page = "<html><body><p>Otters hold hands while they sleep.</p></body></html>"
    spine = [
        "c.xhtml",
        "../../../../etc/passwd",
        "/etc/passwd",
        *(f"gone{i}.xhtml" for i in range(3_000)),
    ]
    doc = load_file(epub(tmp_path / "holes.epub", {"c.xhtml": page}, spine=spine))
    assert doc.text.endswith("Otters hold hands while they sleep.")
    assert "root:" not in doc.text
    assert doc.warnings == [
        "holes.epub: 3,002 chapters are missing (../../../etc/passwd, /etc/passwd,"
        " OEBPS/gone0.xhtml, …); skipped"
    ]


def test_a_drop_with_a_huge_page_and_a_huge_book_reads_the_rest(
    make_workflow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(htmltree, "MAX_NODES", 1_000)
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "huge.html").write_text("<html><body>" + "<p>x</p>" * 600 + "</body></html>")
    many = "<html><body>" + "<p>otters</p>" * 200 + "</body></html>"
    epub(drop / "huge.epub", {f"c{i}.xhtml": many for i in range(4)})
    (drop / "deep.html").write_text("<div>" * 10_000 + "Otters" + "</div>" * 10_000)
    notes = drop / "notes.md"
    notes.write_text("# Notes\n\nOtters hold hands while they sleep so they do not drift.\n")
    report = make_workflow(min_tokens=5, max_tokens=300).add(files=sorted(drop.iterdir()))
    assert report.documents == ["notes.md"]
    assert sorted(report.unreadable) == [
        "deep.html: its HTML is nested more than 512 elements deep, too deep to be read",
        "huge.epub: its HTML holds more than 1,000 elements and runs of text, more than can"
        " be read in memory",
        "huge.html: its HTML holds more than 1,000 elements and runs of text, more than can"
        " be read in memory",
    ]


# -- depth -------------------------------------------------------------------------------


def test_a_page_nested_past_the_limit_is_refused_as_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 nested elements: refused once the 513th opens (it took 6 s, the whole tree
    built and then the reading out of stack; tests/benchmarks/bench_hostile_html.py)."""
    made = []
    push = BeautifulSoup.pushTag
    monkeypatch.setattr(
        BeautifulSoup, "pushTag", lambda soup, tag: (made.append(1), push(soup, tag))
    )
    page = tmp_path / "deep.html"
    page.write_text(deep_page(100_000))
    with pytest.raises(DocumentError) as refused:
        load_file(page)
    assert str(refused.value) == (
        f"deep.html: its HTML is nested more than {htmltree.MAX_DEPTH} elements deep, too deep"
        " to be read"
    )
    assert len(made) <= htmltree.MAX_DEPTH + 1


def test_a_page_nested_just_within_the_limit_is_read(tmp_path: Path) -> None:
    """The page is read without recursion: 500 levels ran out of Python's stack."""
    page = tmp_path / "deep.html"
    depth = htmltree.MAX_DEPTH - 2  # <html> and <body> are two of them
    page.write_text(deep_page(depth, "Otters"))
    assert load_file(page).text == "Otters"


def test_an_old_page_of_paragraphs_never_closed_is_read(tmp_path: Path) -> None:
    """`<p>` without `</p>` is correct HTML 4: each paragraph closes the one before, as a
    browser reads it (2,000 of them were one paragraph 2,000 deep: refused)."""
    page = tmp_path / "old.html"
    page.write_text(old_page(2_000, items=600, rows=600))
    blocks = load_file(page).text.split("\n\n")
    assert blocks[:2] == ["Paragraph 0 about otters.", "Paragraph 1 about otters."]
    assert len(blocks) == 2_002
    assert blocks[-2].split("\n")[:2] == ["- item 0", "- item 1"]
    assert blocks[-1].split("\n")[:2] == ["a0 | b0", "a1 | b1"]


def test_a_too_deep_chapter_is_skipped_and_the_book_read(tmp_path: Path) -> None:
    good = "<html><body><p>Otters hold hands while they sleep.</p></body></html>"
    deep = "<html><body>" + "<div>" * 1_000 + "deep" + "</div>" * 1_000 + "</body></html>"
    doc = load_file(epub(tmp_path / "b.epub", {"a.xhtml": good, "b.xhtml": deep}))
    assert doc.text.endswith("Otters hold hands while they sleep.")
    assert doc.warnings == [
        "b.epub: the chapter OEBPS/b.xhtml could not be read (its HTML is nested more than"
        f" {htmltree.MAX_DEPTH} elements deep, too deep to be read); skipped"
    ]


def test_an_email_whose_html_is_too_deep_is_refused_naming_it(tmp_path: Path) -> None:
    message = tmp_path / "deep.eml"
    message.write_text(
        "From: a@b\nSubject: deep\nMIME-Version: 1.0\nContent-Type: text/html\n\n"
        + "<div>" * 5_000
        + "deep"
    )
    with pytest.raises(DocumentError) as refused:
        load_file(message)
    assert str(refused.value) == (
        f"deep.eml: its HTML is nested more than {htmltree.MAX_DEPTH} elements deep, too deep"
        " to be read"
    )
