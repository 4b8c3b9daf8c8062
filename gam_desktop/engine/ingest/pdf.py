"""Reading a PDF (pypdf): the text of each page, with its page span.

The reading work is bounded per document. pypdf parses a content stream (a page's drawing
instructions, or a form XObject's) each time a page draws it, so a 14 KB file whose pages
all draw one stream that inflates to 5 MB, or whose one page draws a 0.5 MB form a
thousand times, kept it busy for hours. Every parse pays for its decoded bytes out of a
budget that grows with the file (`content_budget`); a document that needs more is refused,
named, instead of being read on and on.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from gam_desktop.engine.ingest.blocks import TextBlocks
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument, megabytes

log = logging.getLogger(__name__)

# The decoded content streams one PDF may have parsed: this many times the file's size,
# within the bounds below. Text pages hold about as many bytes of drawing as their share
# of the file (fonts and images make up the rest); a file that unpacks into thousands of
# times its size in drawing is built to keep a reader busy. Tests lower them.
CONTENT_PER_FILE_BYTE = 64
MIN_CONTENT_BUDGET = 8 * 2**20  # some 1,000 text pages; 10-20 s of pypdf at worst
MAX_CONTENT_BUDGET = 128 * 2**20


def content_budget(file_size: int) -> int:
    """The bytes of content streams a PDF of `file_size` bytes may have parsed."""
    return max(MIN_CONTENT_BUDGET, min(MAX_CONTENT_BUDGET, CONTENT_PER_FILE_BYTE * file_size))


class _OverBudget(Exception):
    """A content stream would take the document past its budget: it is not parsed."""


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0
        self.exceeded = False

    def spend(self, size: int) -> None:
        # pypdf swallows an error in a form XObject and draws the next one: once over, every
        # further parse is refused at once, and the page's end sees `exceeded`.
        if self.exceeded or self.spent + size > self.limit:
            self.exceeded = True
            raise _OverBudget(f"more than {megabytes(self.limit)} of page content")
        self.spent += size


_reading: ContextVar[_Budget | None] = ContextVar("gam_pdf_budget", default=None)
_installing = threading.Lock()
# pypdf's own parse of a content stream, which `_counted` pays for first (None until the
# first PDF is read; the tests wrap it to count the parses).
_parse: Callable[[Any, Any], None] | None = None


def _counted(stream_object: Any, stream: Any) -> None:
    """pypdf's `ContentStream._parse_content_stream` (of a BytesIO), paid for out of the
    budget of the document being read on this thread (other readers of PDFs pay nothing)."""
    assert _parse is not None
    budget = _reading.get()
    if budget is not None:
        size = stream.seek(0, io.SEEK_END)
        stream.seek(0)
        budget.spend(size)
    _parse(stream_object, stream)


def _count_parsing() -> None:
    """Route pypdf's parsing of content streams through `_counted` (once per process)."""
    global _parse
    from pypdf.generic import ContentStream

    with _installing:
        parse = getattr(ContentStream, "_parse_content_stream", None)
        if _parse is not None or parse is None:
            if parse is None:  # a pypdf that parses otherwise: tests/engine/test_pdf_budget.py
                log.warning("pypdf's content streams cannot be counted: PDFs are read unbounded")
            return
        _parse = parse
        setattr(ContentStream, "_parse_content_stream", _counted)  # noqa: B010 (a method)


def _open_pdf(path: Path, data: bytes) -> Any:  # a pypdf PdfReader
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:  # the bytes already read: the path is not opened again (it may be a pipe by now)
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FileNotDecryptedError("password required")
        _ = len(reader.pages)
    except FileNotDecryptedError as exc:
        raise DocumentError(
            f"{path.name}: the PDF is encrypted with a password; save an unprotected copy"
            " and add that"
        ) from exc
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentError(f"{path.name}: could not be read as a PDF (damaged?): {exc}") from exc
    except (DocumentError, MemoryError):
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        if "crypt" in str(exc).lower():
            raise DocumentError(
                f"{path.name}: the PDF is encrypted and cannot be opened: {exc}"
            ) from exc
        raise DocumentError(f"{path.name}: could not be read as a PDF (damaged?): {exc}") from exc
    return reader


def load_pdf(path: Path, data: bytes) -> SourceDocument:
    reader = _open_pdf(path, data)
    _count_parsing()
    budget = _Budget(content_budget(len(data)))
    reading = _reading.set(budget)
    try:
        blocks = _read_pages(path, reader, budget)
    finally:
        _reading.reset(reading)
    if not blocks.pages:
        blocks.warnings.append(f"{path.name}: no text found in the PDF (scanned?); skipped")
    return blocks.document(path, data)


def _read_pages(path: Path, reader: Any, budget: _Budget) -> TextBlocks:
    blocks = TextBlocks()
    for number, page in enumerate(reader.pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception as exc:  # one bad page must not lose the others
            if not budget.exceeded:
                blocks.warnings.append(
                    f"{path.name}: page {number} could not be read ({exc}); skipped"
                )
            page_text = ""
        if budget.exceeded:
            raise DocumentError(
                f"{path.name}: not read: by page {number} its pages draw more than"
                f" {megabytes(budget.limit)} of content, far more than a file of its size"
                " holds in text (built to keep a reader busy?); print it to a new PDF, or"
                " save its text, and add that"
            )
        with blocks.page(number):
            blocks.add(page_text)
    return blocks
