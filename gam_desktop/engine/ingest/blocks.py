"""A document's text written block by block, with the span of each page.

Every reader (PDF, Word, PowerPoint, EPUB, HTML, e-mail) gives its text the same shape:
blocks apart by a blank line, headings as Markdown `#` lines (chunking starts sections at
them, the document's title is its one level-1 heading), and for paged formats the span
of each page (a PDF's page, a deck's slide) so that a memory can name its pages.

The text is counted as it is read: past `documents.MAX_TEXT_BYTES` characters (the limit
of a text file on disk) the reader stops with TooMuchText, whatever the size of the file
it came from (a packed document can unpack to far more than its size on disk).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gam_desktop.engine.ingest import documents
from gam_desktop.engine.ingest.documents import (
    PageSpan,
    SourceDocument,
    TooMuchText,
    megabytes,
    normalize,
    sha256_hex,
)

BLOCK_SEPARATOR = "\n\n"


class TextBlocks:
    """The text of one document as it is read."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self.pages: list[PageSpan] = []
        self.warnings: list[str] = []

    def add(self, text: str) -> None:
        """One block (a paragraph, a list, a table); blank ones are left out."""
        text = normalize(text).strip()
        if not text:
            return
        length = self._length + len(text) + (len(BLOCK_SEPARATOR) if self._parts else 0)
        if length > documents.MAX_TEXT_BYTES:  # read at each call: tests lower the limit
            limit = megabytes(documents.MAX_TEXT_BYTES)
            raise TooMuchText(
                f"holds more than {limit} of text, the limit for one document; split it and"
                " add the parts"
            )
        self._parts.append(text)
        self._length = length

    def heading(self, text: str, level: int) -> None:
        """A heading on one line, `level` 1-6 (`# Title`, `## Section`, …)."""
        words = " ".join(text.split())
        if words:
            self.add(f"{'#' * min(max(level, 1), 6)} {words}")

    @contextmanager
    def page(self, number: int) -> Iterator[None]:
        """The blocks added inside are page `number` (1-based); a page without text has
        no span."""
        first = len(self._parts)
        yield
        if len(self._parts) > first:
            end = self._length
            start = end - sum(len(p) for p in self._parts[first:])
            start -= len(BLOCK_SEPARATOR) * (len(self._parts) - first - 1)
            self.pages.append(PageSpan(number, start, end))

    def __len__(self) -> int:
        """The number of blocks so far."""
        return len(self._parts)

    @property
    def text(self) -> str:
        return BLOCK_SEPARATOR.join(self._parts)

    def document(self, path: Path, data: bytes) -> SourceDocument:
        return SourceDocument(
            name=path.name,
            text=self.text,
            content_hash=sha256_hex(data),
            path=str(path),
            pages=self.pages,
            warnings=self.warnings,
        )
