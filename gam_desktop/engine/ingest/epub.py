"""Reading an EPUB book: its chapters in reading order (the package's spine), each read
as HTML, under the book's title.

An EPUB is a zip: META-INF/container.xml names the package document, whose manifest and
spine list the chapters. Those two XML files are parsed by lxml with entities left
unresolved and no network, their elements counted first (`packages.check_elements`); the
chapters go through `markup` like any web page, all of them within one count of elements
and texts (`htmltree.NodeBudget`: a book's size is its chapters', and a spine naming one
chapter 100,000 times reads it once). A path in the package (`../../etc/passwd`) names a
member of the zip, never a file on disk. A book with DRM (META-INF/encryption.xml
encrypting more than fonts) is refused by name.
(EbookLib is not used: it is AGPL-licensed, and the format needs no more than this.)
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from gam_desktop.engine.ingest.blocks import TextBlocks
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument, TooMuchText
from gam_desktop.engine.ingest.htmltree import NodeBudget, TooDeep
from gam_desktop.engine.ingest.markup import add_html, decode_html
from gam_desktop.engine.ingest.packages import a, check_elements, open_package

EPUB = "EPUB book"
CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html"})
# Font obfuscation (IDPF, Adobe) "encrypts" fonts only: such a book is readable.
FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)


def load_epub(path: Path, data: bytes) -> SourceDocument:
    with open_package(path, data, EPUB) as package:
        try:
            title, chapters = _contents(package)
            protected = _drm(package)
        except DocumentError:  # too many elements (`check_elements`): not damage
            raise
        except (KeyError, ValueError, SyntaxError) as exc:  # lxml's XMLSyntaxError too
            raise DocumentError(
                f"{path.name}: could not be read as {a(EPUB)} (damaged?): {exc}"
            ) from exc
        if protected:
            raise DocumentError(
                f"{path.name}: the {EPUB} is protected by DRM (encrypted); it cannot be read"
            )
        blocks = TextBlocks()
        blocks.heading(title, 1)
        headed = len(blocks)
        budget = NodeBudget()  # the whole book's
        missing = []
        for chapter in chapters:
            try:
                _add_chapter(blocks, package, chapter, path.name, 1 if title else 0, budget)
            except KeyError:  # not in the zip (a path leading out of it is not either)
                missing.append(chapter)
        if missing:  # one line: a spine may name thousands
            blocks.warnings.append(_missing(path.name, missing))
    if len(blocks) == headed:  # a title and nothing else: the reader should not go on
        empty = TextBlocks()
        empty.warnings = [
            *blocks.warnings,
            f"{path.name}: no text found in the {EPUB}; skipped",
        ]
        return empty.document(path, data)
    return blocks.document(path, data)


def _add_chapter(
    blocks: TextBlocks,
    package: zipfile.ZipFile,
    chapter: str,
    name: str,
    shift: int,
    budget: NodeBudget,
) -> None:
    data = package.read(chapter)  # KeyError: not in the zip (the caller counts them)
    try:
        html, _notes = decode_html(data, chapter)
        add_html(blocks, html, shift=shift, budget=budget)
    except TooMuchText as exc:
        if not isinstance(exc, TooDeep):  # one chapter's markup: the others are read
            raise  # the whole book is refused, not one chapter
        blocks.warnings.append(f"{name}: the chapter {chapter} could not be read ({exc}); skipped")
    except (DocumentError, RecursionError) as exc:
        blocks.warnings.append(f"{name}: the chapter {chapter} could not be read ({exc}); skipped")


def _missing(name: str, chapters: list[str]) -> str:
    if len(chapters) == 1:
        return f"{name}: the chapter {chapters[0]} is missing; skipped"
    shown = ", ".join(chapters[:3]) + (", …" if len(chapters) > 3 else "")
    return f"{name}: {len(chapters):,} chapters are missing ({shown}); skipped"


def _xml(data: bytes) -> Any:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(data, parser)


def _named(root: Any, name: str) -> list[Any]:
    """Elements called `name` in any namespace (EPUB 2 and 3 differ in prefixes)."""
    return [e for e in root.iter() if isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1] == name]


def _contents(package: zipfile.ZipFile) -> tuple[str, list[str]]:
    """The book's title and its chapters' paths in the zip, in reading order."""
    rootfiles = _named(_parsed(package, "META-INF/container.xml"), "rootfile")
    if not rootfiles or not rootfiles[0].get("full-path"):
        raise ValueError("META-INF/container.xml names no package document")
    opf_path = rootfiles[0].get("full-path")
    opf = _parsed(package, opf_path)
    titles = [" ".join("".join(e.itertext()).split()) for e in _named(opf, "title")]
    manifest = {item.get("id"): item for item in _named(opf, "item")}
    chapters = []
    for ref in _named(opf, "itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type") not in CHAPTER_TYPES:
            continue
        if "nav" in (item.get("properties") or "").split():  # the table of contents
            continue
        href = unquote((item.get("href") or "").split("#", 1)[0])
        chapters.append(posixpath.normpath(posixpath.join(posixpath.dirname(opf_path), href)))
    return (titles[0] if titles else ""), list(dict.fromkeys(chapters))  # each read once


def _parsed(package: zipfile.ZipFile, member: str) -> Any:
    """A part's XML tree, its elements counted first (TooMuchText past the limit): lxml
    holds the tree whole, about 200 bytes an element."""
    check_elements(package, [member])
    return _xml(package.read(member))


def _drm(package: zipfile.ZipFile) -> bool:
    try:
        encryption = _parsed(package, "META-INF/encryption.xml")
    except KeyError:
        return False
    methods = [m.get("Algorithm") for m in _named(encryption, "EncryptionMethod")]
    return any(method not in FONT_OBFUSCATION for method in methods)
