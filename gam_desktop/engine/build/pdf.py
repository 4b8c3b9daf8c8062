"""Reading a PDF (pypdf): the text of each page, with its page span."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from gam_desktop.engine.build.blocks import TextBlocks
from gam_desktop.engine.build.documents import DocumentError, SourceDocument


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
    blocks = TextBlocks()
    for number, page in enumerate(reader.pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception as exc:  # one bad page must not lose the others
            blocks.warnings.append(f"{path.name}: page {number} could not be read ({exc}); skipped")
            continue
        with blocks.page(number):
            blocks.add(page_text)
    if not blocks.pages:
        blocks.warnings.append(f"{path.name}: no text found in the PDF (scanned?); skipped")
    return blocks.document(path, data)
