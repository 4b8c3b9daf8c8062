"""Reading documents into plain text with provenance: PDF (`pdf`), Word and PowerPoint
(`office`), EPUB (`epub`), HTML (`markup`), e-mail (`mail`), text and Markdown (here), and
raw text.

Every source keeps its name, a content hash of its bytes and page spans, so a
memory can name exactly where its text came from. Problems a person can act on
(encrypted, damaged, binary, too large) raise DocumentError naming the file;
problems that still leave usable text become warnings on the document. The converters'
libraries (pypdf, python-docx, python-pptx, BeautifulSoup) are imported when a file of
theirs is read: a window that never reads a Word file does not pay for them at start.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store.links import resolve_within

log = logging.getLogger(__name__)

PLAIN_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".text"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".epub", ".eml", *HTML_SUFFIXES, *PLAIN_SUFFIXES}
)
# What the app says it reads, wherever it says so (drop hints, CLI help, messages).
READABLE = "PDF, Word, PowerPoint, EPUB, HTML, e-mail (.eml), text or Markdown"
MAX_TEXT_BYTES = 100 * 1024 * 1024
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class DocumentError(GamError, ValueError):
    """A document that cannot be read; the message names the file and says why."""

    title = "A document could not be read"
    advice = "Save an unprotected or repaired copy of the file and drop that instead."


@dataclass(frozen=True)
class PageSpan:
    page: int  # 1-based
    start: int  # character offsets into SourceDocument.text
    end: int


@dataclass
class SourceDocument:
    name: str
    text: str
    content_hash: str
    path: str | None = None
    pages: list[PageSpan] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def pages_for(self, start: int, end: int) -> list[int]:
        """The 1-based pages a character span touches (empty for non-PDF sources)."""
        return [p.page for p in self.pages if p.start < end and start < p.end]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def files_in(folder: Path) -> tuple[list[Path], list[Path]]:
    """A chosen folder's files, recursively: (supported, unsupported). Hidden names are
    left out, and so are links that leave the folder (an unpacked archive may hold
    `paper.txt -> ~/.ssh/id_rsa`) and linked folders (loops), the memory's own rule."""
    root = folder.resolve()
    supported: list[Path] = []
    unsupported: list[Path] = []
    for base, dirs, names in os.walk(folder):  # followlinks=False: linked folders skipped
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(base) / name
            if name.startswith(".") or resolve_within(root, path) is None or not path.is_file():
                continue
            (supported if is_supported(path) else unsupported).append(path)
    return supported, unsupported


PASTED_TEXT = "text"  # the name of a document added as raw text (gam-add --text)


def load_text(text: str, name: str = PASTED_TEXT) -> SourceDocument:
    clean = normalize(text)
    return SourceDocument(name=name, text=clean, content_hash=sha256_hex(clean.encode("utf-8")))


def load_file(path: str | Path) -> SourceDocument:
    path = Path(path)
    if not path.is_file():
        raise DocumentError(f"{path.name}: file not found ({path})")
    if not is_supported(path):
        raise DocumentError(f"{path.name}: unsupported file type ({READABLE} files work)")
    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise DocumentError(f"{path.name}: too large ({size // 2**20} MB; the limit is 100 MB)")
    data = path.read_bytes()
    doc = _reader(path.suffix.lower())(path, data) if data else _load_plain(path, data)
    if not doc.text.strip() and not doc.warnings:
        doc.warnings.append(f"{path.name}: no text found (the file is empty); skipped")
    return doc


Reader = Callable[[Path, bytes], SourceDocument]


def _reader(suffix: str) -> Reader:
    """The reader of a supported suffix (its module imported now, on first use)."""
    if suffix == ".pdf":
        from gam_desktop.engine.build.pdf import load_pdf

        return load_pdf
    if suffix in (".docx", ".pptx"):
        from gam_desktop.engine.build.office import load_docx, load_pptx

        return load_docx if suffix == ".docx" else load_pptx
    if suffix == ".epub":
        from gam_desktop.engine.build.epub import load_epub

        return load_epub
    if suffix in HTML_SUFFIXES:
        from gam_desktop.engine.build.markup import load_html

        return load_html
    if suffix == ".eml":
        from gam_desktop.engine.build.mail import load_eml

        return load_eml
    return _load_plain


def normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def decode_bytes(data: bytes, name: str) -> tuple[str, list[str]]:
    """Decode text bytes: BOMs first, then UTF-8, then a stated fallback."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding), []
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name}: looks like a binary file, not text (it contains NUL bytes)")
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    try:
        text, used = data.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "Latin-1"
    return text, [f"{name}: not valid UTF-8; decoded as {used}, some characters may be wrong"]


def _load_plain(path: Path, data: bytes) -> SourceDocument:
    text, warnings = decode_bytes(data, path.name)
    return SourceDocument(
        name=path.name,
        text=normalize(text),
        content_hash=sha256_hex(data),
        path=str(path),
        warnings=warnings,
    )
