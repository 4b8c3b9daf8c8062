"""A PDF's reading work is bounded: pypdf parses a content stream each time a page or a
form XObject draws it, so a small file drawing one big stream over and over is refused
once its decoded content passes the document's budget (counted in parses, not seconds)."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gam_desktop.engine.ingest import pdf
from gam_desktop.engine.ingest.documents import DocumentError, load_file

STREAM = b"BT /F1 12 Tf 72 712 Td (Shared page text) Tj ET\n" + b"0 0 m 1 1 l S\n" * 300


def _pdf(path: Path, page_contents: list[int], objects: list[bytes]) -> Path:
    """A PDF of `objects` (1: catalog, 2: page tree, then the rest) whose pages draw the
    content stream objects numbered in `page_contents`, with a font F1 and a form Fm."""
    data = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(data))
        data += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(data)
    data += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    data += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    data += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(data)
    return path


def _stream(content: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(content, 9)
    head = b"<< %s /Length %d /Filter /FlateDecode >>\nstream\n" % (extra, len(packed))
    return head + packed + b"\nendstream"


def shared_stream_pdf(path: Path, pages: int) -> Path:
    """`pages` pages that all draw one content stream (object 3)."""
    font = 4 + pages
    kids = b" ".join(b"%d 0 R" % (4 + i) for i in range(pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R"
        b" /Resources << /Font << /F1 %d 0 R >> >> >>" % font
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _stream(STREAM),
        *[page] * pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return _pdf(path, [3], objects)


def repeated_form_pdf(path: Path, draws: int) -> Path:
    """One page that draws one form XObject (object 6) `draws` times."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        _stream(b"q /Fm Do Q\n" * draws),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R"
        b" /Resources << /Font << /F1 5 0 R >> /XObject << /Fm 6 0 R >> >> >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        _stream(
            STREAM,
            b"/Type /XObject /Subtype /Form /BBox [0 0 612 792]"
            b" /Resources << /Font << /F1 5 0 R >> >>",
        ),
    ]
    return _pdf(path, [3], objects)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The sizes of the content streams pypdf parsed while reading; a budget of about four
    parses of STREAM for any small file."""
    pdf._count_parsing()
    parse = pdf._parse
    assert parse is not None
    sizes: list[int] = []

    def counting(stream_object: Any, stream: Any) -> None:
        sizes.append(len(stream.getvalue()))
        parse(stream_object, stream)

    monkeypatch.setattr(pdf, "_parse", counting)
    monkeypatch.setattr(pdf, "MIN_CONTENT_BUDGET", 4 * len(STREAM) + 100)
    monkeypatch.setattr(pdf, "CONTENT_PER_FILE_BYTE", 0)
    yield sizes


def test_pages_drawing_one_big_stream_are_refused_within_the_budget(
    tmp_path: Path, parses: list[int]
) -> None:
    path = shared_stream_pdf(tmp_path / "shared.pdf", pages=200)
    with pytest.raises(DocumentError, match=r"shared\.pdf: not read: by page 5 .* of content"):
        load_file(path)
    assert len(parses) == 4  # not 200: the fifth parse would pass the budget
    assert sum(parses) <= pdf.MIN_CONTENT_BUDGET


def test_a_form_drawn_over_and_over_on_one_page_is_refused_within_the_budget(
    tmp_path: Path, parses: list[int]
) -> None:
    path = repeated_form_pdf(tmp_path / "forms.pdf", draws=300)
    with pytest.raises(DocumentError, match=r"forms\.pdf: not read: by page 1 "):
        load_file(path)
    assert len(parses) <= 5  # the page's own stream and four of the form's, not 301
    assert sum(parses) <= pdf.MIN_CONTENT_BUDGET


def test_a_pdf_within_its_budget_is_read_whole_and_the_budget_is_its_own(
    tmp_path: Path, parses: list[int]
) -> None:
    with pytest.raises(DocumentError):
        load_file(shared_stream_pdf(tmp_path / "big.pdf", pages=50))
    doc = load_file(shared_stream_pdf(tmp_path / "small.pdf", pages=3))
    assert doc.text.count("Shared page text") == 3
    assert [span.page for span in doc.pages] == [1, 2, 3]
    assert not doc.warnings


def test_the_budget_grows_with_the_file_within_bounds() -> None:
    assert pdf.content_budget(14_000) == pdf.MIN_CONTENT_BUDGET
    assert pdf.content_budget(1_000_000) == 64 * 1_000_000
    assert pdf.content_budget(50 * 2**20) == pdf.MAX_CONTENT_BUDGET


def test_pypdf_outside_a_document_being_read_pays_nothing(
    tmp_path: Path, parses: list[int]
) -> None:
    from pypdf import PdfReader

    reader = PdfReader(shared_stream_pdf(tmp_path / "other.pdf", pages=10))
    assert all("Shared page text" in page.extract_text() for page in reader.pages)
    assert len(parses) == 10


def test_a_cancel_while_documents_are_read_stops_before_the_next(
    make_workflow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gam_desktop.engine.operations import ingest as workflow_module  # reads the files
    from gam_desktop.engine.progress import CancelToken, OperationCancelled

    files = []
    for n in range(3):
        files.append(tmp_path / f"doc{n}.md")
        files[-1].write_text(f"# Document {n}\n\nSome words about subject {n}.\n")
    cancel = CancelToken()
    read: list[str] = []
    real_load = workflow_module.load_file

    def slow_read(path):  # the person presses Cancel while the first document is read
        read.append(Path(path).name)
        cancel.cancel()
        return real_load(path)

    monkeypatch.setattr(workflow_module, "load_file", slow_read)
    with pytest.raises(OperationCancelled):
        make_workflow(cancel=cancel).add(files=files)
    assert read == ["doc0.md"]
