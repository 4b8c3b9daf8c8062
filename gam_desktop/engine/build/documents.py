"""Reading documents (PDF, TXT, Markdown, raw text) into plain text with provenance.

Every source keeps its name, a content hash of its bytes and page spans, so a
memory can name exactly where its text came from. Problems a person can act on
(encrypted, damaged, binary, too large) raise DocumentError naming the file;
problems that still leave usable text become warnings on the document.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store.links import resolve_within

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = frozenset({".pdf", ".txt", ".md", ".markdown", ".text"})
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
    clean = _normalize(text)
    return SourceDocument(name=name, text=clean, content_hash=sha256_hex(clean.encode("utf-8")))


def load_file(path: str | Path) -> SourceDocument:
    path = Path(path)
    if not path.is_file():
        raise DocumentError(f"{path.name}: file not found ({path})")
    if not is_supported(path):
        raise DocumentError(f"{path.name}: unsupported file type (PDF, TXT and Markdown work)")
    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise DocumentError(f"{path.name}: too large ({size // 2**20} MB; the limit is 100 MB)")
    data = path.read_bytes()
    doc = _load_pdf(path, data) if path.suffix.lower() == ".pdf" else _load_plain(path, data)
    if not doc.text.strip() and not doc.warnings:
        doc.warnings.append(f"{path.name}: the file is empty; nothing to add")
    return doc


def _normalize(text: str) -> str:
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
        text=_normalize(text),
        content_hash=sha256_hex(data),
        path=str(path),
        warnings=warnings,
    )


def _open_pdf(path: Path) -> Any:  # a pypdf PdfReader (imported lazily)
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(path)
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
    except DocumentError:
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        if "crypt" in str(exc).lower():
            raise DocumentError(
                f"{path.name}: the PDF is encrypted and cannot be opened: {exc}"
            ) from exc
        raise DocumentError(f"{path.name}: could not be read as a PDF (damaged?): {exc}") from exc
    return reader


def _load_pdf(path: Path, data: bytes) -> SourceDocument:
    reader = _open_pdf(path)
    parts: list[str] = []
    pages: list[PageSpan] = []
    warnings: list[str] = []
    offset = 0
    for number, page in enumerate(reader.pages, start=1):
        try:
            page_text = _normalize(page.extract_text() or "").strip()
        except Exception as exc:  # one bad page must not lose the others
            warnings.append(f"{path.name}: page {number} could not be read ({exc}); skipped")
            continue
        if not page_text:
            continue
        if parts:
            offset += 2  # the "\n\n" joining pages
        pages.append(PageSpan(number, offset, offset + len(page_text)))
        parts.append(page_text)
        offset += len(page_text)
    if not parts:
        warnings.append(f"{path.name}: no text found in the PDF (scanned?); nothing to add")
    return SourceDocument(
        name=path.name,
        text="\n\n".join(parts),
        content_hash=sha256_hex(data),
        path=str(path),
        pages=pages,
        warnings=warnings,
    )
