"""Word, PowerPoint, EPUB, HTML and e-mail documents: their text, headings and spans come
through; bad files (damaged, empty, encrypted) are one line naming the file; untrusted
markup runs, fetches and resolves nothing. The files are written by the tests."""

from __future__ import annotations

import re
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from gam_desktop.engine.ingest import packages
from gam_desktop.engine.ingest.documents import (
    SUPPORTED_SUFFIXES,
    DocumentError,
    files_in,
    load_file,
)
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.selfcheck.formats import SECTIONS, one_of_each
from tests.documents import html_page, make_docx, make_eml, make_epub, make_pptx
from tests.engine.test_build import memory_files


def encrypted(path: Path, out: Path) -> Path:
    """`path` (a DOCX or PPTX) as Office writes it with a password (msoffcrypto-tool)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    with path.open("rb") as source, out.open("wb") as target:
        OOXMLFile(source).encrypt("hunter2", target)
    return out


# -- good files ------------------------------------------------------------------------


def test_word_headings_paragraphs_lists_and_tables(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "r.docx", "Borealis Annual Report", SECTIONS, ("North", "South"))
    text = load_file(path).text
    assert text.startswith("# Borealis Annual Report\n\n## Quarterly revenue\n\n")
    assert "## Hiring plan\n\nBorealis hires 4 engineers in Oslo during 2025." in text
    assert "- North\n- South" in text  # one list, one block
    assert "Region | Revenue\nNorth | 42" in text


def test_word_file_without_styles_still_reads(tmp_path: Path) -> None:
    """Some tools write no styles part: python-docx falls back to its own template (which
    the packaged app must carry, see packaging/gam-desktop.spec)."""
    path = make_docx(tmp_path / "plain.docx", "Borealis Annual Report", SECTIONS)
    with zipfile.ZipFile(path) as source:
        parts = {n: source.read(n) for n in source.namelist() if n != "word/styles.xml"}
    rels = parts["word/_rels/document.xml.rels"].decode("utf-8")
    parts["word/_rels/document.xml.rels"] = re.sub(
        r"<Relationship [^>]*styles\.xml\"/>", "", rels
    ).encode()
    with zipfile.ZipFile(path, "w") as target:
        for name, data in parts.items():
            target.writestr(name, data)
    text = load_file(path).text
    assert "Borealis Annual Report" in text and SECTIONS[1][1] in text


def test_slides_are_pages_with_their_titles_text_and_notes(tmp_path: Path) -> None:
    doc = load_file(make_pptx(tmp_path / "deck.pptx", SECTIONS, notes="Open with revenue."))
    assert [page.page for page in doc.pages] == [1, 2]
    first, second = (doc.text[p.start : p.end] for p in doc.pages)
    assert first.startswith("## Slide 1: Quarterly revenue\n\nBorealis revenue grew")
    assert "Notes: Open with revenue." in first
    assert second == "## Slide 2: Hiring plan\n\nBorealis hires 4 engineers in Oslo during 2025."
    assert doc.pages_for(doc.pages[1].start, doc.pages[1].end) == [2]


def test_epub_chapters_in_spine_order_under_the_books_title(tmp_path: Path) -> None:
    text = load_file(make_epub(tmp_path / "b.epub", "The Borealis Book", SECTIONS)).text
    assert text == (
        "# The Borealis Book\n\n## Quarterly revenue\n\n" + SECTIONS[0][1] + "\n\n"
        "## Hiring plan\n\n" + SECTIONS[1][1]
    )  # the navigation document and the chapters' <title>s are left out


def test_html_keeps_structure_and_drops_scripts_styles_and_hidden(tmp_path: Path) -> None:
    extra = (
        "<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul>"
        "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<p hidden>HIDDEN</p><!-- COMMENTED --><p>line one<br>line   two</p>"
    )
    path = tmp_path / "page.htm"
    path.write_text(html_page("Borealis intranet", SECTIONS, extra), encoding="utf-8")
    text = load_file(path).text
    assert text.startswith("# Borealis intranet\n\n## Quarterly revenue\n\nBorealis revenue")
    assert "- one\n  - nested\n- two" in text and "A | B\n1 | 2" in text
    assert text.endswith("line one\nline two")
    for gone in ("SCRIPTED", "color: red", "HIDDEN", "COMMENTED", "tracker"):
        assert gone not in text


def test_html_in_a_declared_legacy_encoding(tmp_path: Path) -> None:
    path = tmp_path / "legacy.html"
    page = "<html><head><meta charset='windows-1252'></head><body><p>Café – naïve</p></body>"
    path.write_bytes(page.encode("cp1252"))
    doc = load_file(path)
    assert doc.text == "Café – naïve" and doc.warnings == []


def test_email_header_plain_text_over_html_and_attachments_by_name(tmp_path: Path) -> None:
    path = make_eml(
        tmp_path / "m.eml",
        "Borealis budget",
        "Hi Bob,\n\nThe budget is 42 EUR.",
        html="<p>HTML ALTERNATIVE</p>",
        attachments={"budget.xlsx": b"ATTACHED CONTENT", "notes.txt": b"ATTACHED CONTENT"},
    )
    text = load_file(path).text
    assert text == (
        "# Borealis budget\n\n"
        "From: Ada Lovelace <ada@example.org>\nTo: Bob <bob@example.org>\n"
        "Date: Tue, 01 Apr 2025 09:30:00 +0000\n"
        "Attachments (not read): budget.xlsx, notes.txt\n\n"
        "Hi Bob,\n\nThe budget is 42 EUR."
    )


def test_email_with_only_html_reads_it_as_a_page(tmp_path: Path) -> None:
    html = "<h1>Big news</h1><p>We <b>won</b> the bid.</p><script>SCRIPTED()</script>"
    text = load_file(make_eml(tmp_path / "m.eml", "News", None, html=html)).text
    assert text.startswith("# News\n\nFrom: Ada")
    assert text.endswith("## Big news\n\nWe won the bid.") and "SCRIPTED" not in text


def test_folders_and_filters_take_every_format(tmp_path: Path) -> None:
    for suffix in SUPPORTED_SUFFIXES:
        (tmp_path / f"doc{suffix.upper()}").write_bytes(b"x")
    (tmp_path / "sheet.xlsx").write_bytes(b"x")
    supported, unsupported = files_in(tmp_path)
    assert len(supported) == len(SUPPORTED_SUFFIXES) >= 11
    assert [p.name for p in unsupported] == ["sheet.xlsx"]


# -- bad files: one line naming the file ----------------------------------------------


def test_password_protected_office_files_are_told_apart(tmp_path: Path) -> None:
    docx = make_docx(tmp_path / "plain.docx", "Secret plans", SECTIONS)
    pptx = make_pptx(tmp_path / "plain.pptx", SECTIONS)
    for source, kind in ((docx, "Word document"), (pptx, "PowerPoint presentation")):
        locked = encrypted(source, tmp_path / f"locked{source.suffix}")
        with pytest.raises(DocumentError) as caught:
            load_file(locked)
        assert str(caught.value) == (
            f"{locked.name}: the {kind} is encrypted with a password; save an unprotected"
            " copy and add that"
        )
    old = tmp_path / "old.docx"
    old.write_bytes(packages.OLE_MAGIC + bytes(600))  # a Word 97 .doc renamed
    with pytest.raises(DocumentError, match=r"old\.docx: an old-format Office file"):
        load_file(old)


def _truncated(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    return path


def _without(path: Path, member: str) -> Path:
    with zipfile.ZipFile(path) as source:
        kept = {n: source.read(n) for n in source.namelist() if n != member}
    with zipfile.ZipFile(path, "w") as target:
        for name, data in kept.items():
            target.writestr(name, data)
    return path


@pytest.mark.parametrize(
    "make,reason",
    [
        (
            lambda d: _truncated(make_docx(d / "cut.docx", "T", SECTIONS)),
            "Word document (damaged?)",
        ),
        (
            lambda d: _without(make_docx(d / "gone.docx", "T", SECTIONS), "word/document.xml"),
            "damaged",
        ),
        (
            lambda d: _truncated(make_pptx(d / "cut.pptx", SECTIONS)),
            "PowerPoint presentation (damaged?)",
        ),
        (lambda d: _truncated(make_epub(d / "cut.epub", "T", SECTIONS)), "EPUB book (damaged?)"),
        (
            lambda d: _without(make_epub(d / "box.epub", "T", SECTIONS), "META-INF/container.xml"),
            "damaged",
        ),
        (lambda d: make_epub(d / "drm.epub", "T", SECTIONS, drm=True), "protected by DRM"),
        (lambda d: _write(d / "bin.html", b"\x89PNG\r\n\x1a\n\x00\x00IHDR"), "binary"),
        (lambda d: _write(d / "bin.eml", b"\x00\x01\x02\x03"), "binary"),
        (lambda d: _write(d / "note.eml", b"Just some words\nand more\n"), "not an e-mail message"),
        (lambda d: _write(d / "smime.eml", _SMIME), "encrypted (S/MIME or PGP)"),
        (
            lambda d: make_eml(d / "pgp.eml", "S", "-----BEGIN PGP MESSAGE-----\nhQEMA\n"),
            "encrypted",
        ),
    ],
)
def test_bad_files_are_one_line_naming_the_file(tmp_path: Path, make, reason: str) -> None:
    path = make(tmp_path)
    with pytest.raises(DocumentError) as caught:
        load_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path.name}: ") and reason in message and "\n" not in message


_SMIME = (
    b"From: a@example.org\r\nSubject: Locked\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\r\n'
    b"Content-Transfer-Encoding: base64\r\n\r\nMIAGCSqGSIb3DQEHA6CAMIACAQAxggE=\r\n"
)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("suffix", sorted(SUPPORTED_SUFFIXES))
def test_an_empty_file_of_any_format_is_a_warning(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty{suffix}"
    path.write_bytes(b"")
    doc = load_file(path)
    assert doc.text == ""
    assert doc.warnings == [f"empty{suffix}: no text found (the file is empty); skipped"]


@pytest.mark.parametrize(
    "make,warning",
    [
        (lambda d: make_docx(d / "blank.docx", "", []), "no text found in the Word document"),
        (lambda d: make_pptx(d / "blank.pptx", []), "no text found in the PowerPoint"),
        (lambda d: make_epub(d / "blank.epub", "Title only", []), "no text found in the EPUB"),
        (lambda d: _write(d / "blank.html", b"<script>x()</script>"), "no text found in the HTML"),
        (
            lambda d: make_eml(d / "files.eml", "Files", None, attachments={"a.pdf": b"1"}),
            "no text found in the message (only attachments: a.pdf)",
        ),
    ],
)
def test_a_file_without_text_is_a_warning(tmp_path: Path, make, warning: str) -> None:
    path = make(tmp_path)
    doc = load_file(path)
    assert doc.text == "" and len(doc.warnings) == 1
    assert doc.warnings[0].startswith(f"{path.name}: {warning}")


def test_a_zip_bomb_is_refused_before_inflating(tmp_path: Path, monkeypatch) -> None:
    path = make_docx(tmp_path / "big.docx", "T", SECTIONS)
    monkeypatch.setattr(packages, "MAX_UNPACKED", 10_000)
    with pytest.raises(DocumentError, match=r"big\.docx: too large once unpacked"):
        load_file(path)


# -- untrusted input: nothing runs, is fetched or resolved ------------------------------


class _Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"FETCHED")

    def log_message(self, *args) -> None:
        pass


def test_html_fetches_nothing_it_names(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    page = tmp_path / "page.html"
    page.write_text(
        f"<html><head><link rel=stylesheet href='{url}/a.css'><script src='{url}/a.js'>"
        f"</script><style>@import '{url}/b.css';</style></head><body><p>Text</p>"
        f"<img src='{url}/i.png'><iframe src='{url}/f.html'></iframe>"
        f"<object data='{url}/o.swf'></object></body></html>",
        encoding="utf-8",
    )
    try:
        assert load_file(page).text == "Text"
        epub = make_epub(tmp_path / "b.epub", "T", [("H", f"<img src='{url}/c.png'/>Words")])
        assert load_file(epub).text.endswith("Words")
    finally:
        server.shutdown()
        server.server_close()
    assert _Counter.hits == []


def _with_entity(path: Path, member: str, before: str, after: str, secret: Path) -> Path:
    """`path` with an external entity naming `secret` declared in `member`."""
    with zipfile.ZipFile(path) as source:
        data = {n: source.read(n) for n in source.namelist()}
    xml = data[member].decode("utf-8")
    end = xml.index("?>") + 2
    root = xml[end:].lstrip().split()[0].lstrip("<").rstrip(">")
    xml = xml[:end] + f'<!DOCTYPE {root} [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>' + xml[end:]
    data[member] = xml.replace(before, after, 1).encode("utf-8")
    with zipfile.ZipFile(path, "w") as target:
        for name, content in data.items():
            target.writestr(name, content)
    return path


def test_external_entities_are_never_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET", encoding="utf-8")
    docx = make_docx(tmp_path / "x.docx", "Title", SECTIONS)
    _with_entity(docx, "word/document.xml", "Borealis hires", "&xxe; Borealis hires", secret)
    epub = make_epub(tmp_path / "x.epub", "Title", SECTIONS)
    _with_entity(epub, "OEBPS/content.opf", "<dc:title>Title", "<dc:title>Title &xxe;", secret)
    for path in (docx, epub):
        text = load_file(path).text
        assert "Borealis hires 4 engineers" in text and "TOPSECRET" not in text


# -- end to end: one drop of every format through the scripted server --------------------


def test_a_drop_of_every_format_becomes_memories_with_their_original_text(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    files = one_of_each(tmp_path / "drop")
    broken = _truncated(make_docx(tmp_path / "drop" / "broken.docx", "T", SECTIONS))
    report = make_workflow(min_tokens=5, max_tokens=300).add(files=[*files.values(), broken])
    assert sorted(report.documents) == sorted(p.name for p in files.values())
    assert [line.split(":")[0] for line in report.unreadable] == ["broken.docx"]
    folder = MemoryFolder(memory_dir)
    fronts = list(memory_files(memory_dir).values())
    for suffix, path in files.items():
        source = load_file(path)
        stored = folder.source_path(source.content_hash).read_text(encoding="utf-8")
        assert stored == source.text  # the original text, kept under .gam/sources/
        mine = [front for front in fronts if front["source"] == path.name]
        assert mine and all(front["source_hash"] == source.content_hash for front in mine)
        recovered = [folder.original_text(front) or "" for front in mine]
        assert sum(map(len, recovered)) > 0.9 * len(stored)  # the spans cover the text
        said = "42 EUR per engineer" if suffix == ".eml" else SECTIONS[1][1]
        assert any(said in text for text in recovered), suffix
    for front in (f for f in fronts if f["source"] == files[".pptx"].name):
        first_slide = int(folder.original_text(front).split("## Slide ")[1].split(":")[0])
        assert front["pages"][0] == first_slide
