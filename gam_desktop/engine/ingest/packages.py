"""Zip packages (Word, PowerPoint, EPUB) checked before a converter opens them.

A password-protected Office file is not a zip at all but an OLE compound file holding an
`EncryptedPackage` stream: it is told apart from a damaged file and from an old binary
.doc/.ppt renamed, so the person hears what to do.

A zip bomb (5 MB that unpacks to gigabytes) is refused before anything is inflated: a
package whose parts unpack to more than `MAX_UNPACKED` bytes together, or one part to more
than `MAX_PART` (a part the converter parses whole, its XML tree several times its size
in memory). The sizes a zip states are a true bound: Python's zipfile, which every reader
here goes through (python-docx, python-pptx, the EPUB reader), stops each part at its
stated size as it streams it, and a part that has more is a CRC error (damaged). What is
read out of the parts is counted too, as text (`blocks`, at most MAX_TEXT_BYTES).

Bytes are not memory: an XML part a converter parses whole becomes a tree of about 200
bytes an element, so 120 MB of tiny elements took 2 GB. Such parts are counted first, in
a pass that builds nothing (`check_elements`), and refused past `MAX_TREE_ELEMENTS`.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from pathlib import Path

from gam_desktop.engine.ingest.documents import DocumentError, TooMuchText, megabytes

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")  # an OLE directory entry's name
# A real package stays far below: images and media are stored packed (about their size on
# disk, itself at most 100 MB), the XML of a 1,000-page book is tens of MB. Tests lower them.
MAX_UNPACKED = 256 * 2**20
MAX_PART = 128 * 2**20
# The elements of the XML trees a converter holds at once: ~400 MB of lxml tree. A deck of
# a few hundred slides, with its layouts and masters, holds a few hundred thousand.
MAX_TREE_ELEMENTS = 2_000_000


def open_package(path: Path, data: bytes, kind: str) -> zipfile.ZipFile:
    """The zip package in `data`; DocumentError naming the file when it is not one, or
    when it unpacks to too much. `kind` names the format in messages ("Word document")."""
    if data.startswith(OLE_MAGIC):
        raise DocumentError(_ole_reason(path, data, kind))
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = package.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise DocumentError(
            f"{path.name}: could not be read as {a(kind)} (damaged?): {exc}"
        ) from exc
    reason = _too_large(members)
    if reason:
        package.close()
        raise DocumentError(f"{path.name}: too large once unpacked ({reason})")
    return package


def _too_large(members: list[zipfile.ZipInfo]) -> str:
    """Why the parts `members` unpack to too much, or "" when they do not. Every entry
    counts, duplicates and overlapping ones included (they share packed bytes, a bomb's
    trick, but each unpacks in full)."""
    largest = max(members, key=lambda member: member.file_size, default=None)
    if largest is not None and largest.file_size > MAX_PART:
        return (
            f"its part {largest.filename} unpacks to {largest.file_size // 2**20} MB; the"
            f" limit for one part is {megabytes(MAX_PART)}"
        )
    unpacked = sum(member.file_size for member in members)
    if unpacked > MAX_UNPACKED:
        return f"{unpacked // 2**20} MB; the limit is {megabytes(MAX_UNPACKED)}"
    return ""


def check_elements(package: zipfile.ZipFile, members: Iterable[str]) -> None:
    """TooMuchText (`load_file` names the file) when the XML parts `members` hold more
    than MAX_TREE_ELEMENTS elements together, counted as they stream by: no tree is
    built, no entity expanded. A part that is not well-formed is left to the converter
    (which says it is damaged)."""
    from lxml import etree

    counter = _Counter()
    for member in members:
        parser = etree.XMLParser(
            target=counter, resolve_entities=False, no_network=True, load_dtd=False
        )
        try:
            with package.open(member) as stream:
                while chunk := stream.read(1 << 20):
                    parser.feed(chunk)
            parser.close()
        except etree.XMLSyntaxError:
            continue


class _Counter:
    """An lxml parser target that counts the elements and stops past the limit."""

    def __init__(self) -> None:
        self.elements = 0

    def start(self, tag: str, attrib: object) -> None:
        self.elements += 1
        if self.elements > MAX_TREE_ELEMENTS:
            raise TooMuchText(
                f"its XML holds more than {MAX_TREE_ELEMENTS:,} elements, more than can be"
                " read in memory"
            )

    def close(self) -> None:
        return None


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
