"""Zip packages (Word, PowerPoint, EPUB) checked before a converter opens them.

A password-protected Office file is not a zip at all but an OLE compound file holding an
`EncryptedPackage` stream: it is told apart from a damaged file and from an old binary
.doc/.ppt renamed, so the person hears what to do. A package whose members claim to
unpack to more than `MAX_UNPACKED` bytes (a zip bomb, or absurdly large) is refused before
anything is inflated.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from gam_desktop.engine.build.documents import DocumentError

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")  # an OLE directory entry's name
MAX_UNPACKED = 1024 * 2**20


def open_package(path: Path, data: bytes, kind: str) -> zipfile.ZipFile:
    """The zip package in `data`; DocumentError naming the file when it is not one.
    `kind` names the format in messages ("Word document")."""
    if data.startswith(OLE_MAGIC):
        raise DocumentError(_ole_reason(path, data, kind))
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        unpacked = sum(member.file_size for member in package.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise DocumentError(
            f"{path.name}: could not be read as {a(kind)} (damaged?): {exc}"
        ) from exc
    if unpacked > MAX_UNPACKED:
        raise DocumentError(
            f"{path.name}: too large once unpacked ({unpacked // 2**20} MB; the limit is"
            f" {MAX_UNPACKED // 2**20} MB)"
        )
    return package


def a(kind: str) -> str:
    """ "a Word document", "an EPUB book"."""
    return f"{'an' if kind[:1] in 'AEIOU' else 'a'} {kind}"


def _ole_reason(path: Path, data: bytes, kind: str) -> str:
    if _ENCRYPTED_STREAM in data:
        return (
            f"{path.name}: the {kind} is encrypted with a password; save an unprotected copy"
            " and add that"
        )
    return (
        f"{path.name}: an old-format Office file (Word 97-2003 or PowerPoint 97-2003), not"
        f" {a(kind)}; save it as {path.suffix.lower()} and add that"
    )
