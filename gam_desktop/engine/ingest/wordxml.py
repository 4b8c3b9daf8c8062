"""A Word (.docx) package read without ever holding its body as one tree.

python-docx parses `word/document.xml` whole, and lxml's tree takes many times the XML's
size: 120 MB of tiny paragraphs (a 367 KB file) reached 2 GB. Here the body goes through
lxml's pull parser with python-docx's element classes (a paragraph still answers `.style`
and `.pPr`), and each top-level block (a paragraph, a table, a content control) is given
when its end tag arrives and dropped once it has been read. Memory is that of one block,
and one block may hold at most `packages.MAX_TREE_ELEMENTS` elements (a table of millions
of cells is refused by name rather than filling the memory); the parts parsed whole (the
styles, the relationships) are counted first (`packages.check_elements`).

The parts are found as python-docx finds them: the package's relationships name the main
document, the main document's name its styles. No entity is expanded, nothing fetched.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lxml import etree

from gam_desktop.engine.ingest import packages
from gam_desktop.engine.ingest.documents import TooMuchText

if TYPE_CHECKING:
    from docx.styles.styles import Styles

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_RELATED = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_CHUNK = 1 << 16  # bytes of XML given to the parser at a time (its events wait in memory)


def word_parts(package: zipfile.ZipFile) -> tuple[str, str | None]:
    """The zip member names of the main document and of its styles (None: none)."""
    main = _target(package, "/", "_rels/.rels", "officeDocument")
    if main is None:
        raise ValueError("it names no document body")
    folder, name = posixpath.split(main)
    rels = posixpath.join(folder, "_rels", f"{name}.rels").lstrip("/")
    styles = _target(package, folder, rels, "styles") if rels in package.namelist() else None
    return main.lstrip("/"), styles.lstrip("/") if styles else None


def _target(package: zipfile.ZipFile, base: str, rels: str, kind: str) -> str | None:
    """The part name ("/word/document.xml") of the first relationship of type `kind`
    inside the package in the relationships part `rels`."""
    packages.check_elements(package, [rels])
    root = etree.fromstring(package.read(rels), _safe_parser())
    for rel in root.iter(_RELATIONSHIP):
        target = rel.get("Target")
        if rel.get("Type") == _RELATED + kind and rel.get("TargetMode") != "External" and target:
            return posixpath.normpath(posixpath.join(base, target))
    return None


def _safe_parser(**options: Any) -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, **options)


def word_styles(package: zipfile.ZipFile, member: str | None) -> Styles:
    """The document's styles; without a styles part, python-docx's own defaults (what
    `docx.Document` falls back to; the packaged app carries its template)."""
    from docx.opc.package import OpcPackage
    from docx.oxml.parser import parse_xml
    from docx.parts.styles import StylesPart
    from docx.styles.styles import Styles

    if member is not None:
        packages.check_elements(package, [member])
        element = parse_xml(package.read(member))
        if element.tag == f"{W}styles":
            return Styles(element)
    defaults: Styles = StylesPart.default(OpcPackage()).styles
    return defaults


class _StyleScan:
    """An lxml parser target collecting the style ids of the paragraphs (None for one
    that names none) without building a tree."""

    def __init__(self) -> None:
        self.ids: set[str | None] = set()
        self._path: list[str] = []
        self._named: list[bool] = []  # for each open paragraph: it named its style

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        path = self._path
        if tag == f"{W}p":
            self._named.append(False)
        elif tag == f"{W}pStyle" and path[-2:] == [f"{W}p", f"{W}pPr"]:
            self.ids.add(attrib.get(f"{W}val"))
            self._named[-1] = True
        path.append(tag)

    def end(self, tag: str) -> None:
        self._path.pop()
        if tag == f"{W}p" and not self._named.pop():
            self.ids.add(None)

    def close(self) -> None:
        return None


def paragraph_styles(package: zipfile.ZipFile, member: str) -> set[str | None]:
    """The style ids the document's paragraphs name (None: the default style), read in
    one pass that builds nothing."""
    scan = _StyleScan()
    parser = _safe_parser(target=scan)
    with package.open(member) as stream:
        while chunk := stream.read(_CHUNK):
            parser.feed(chunk)
    parser.close()
    return scan.ids


def body_blocks(package: zipfile.ZipFile, member: str) -> Iterator[Any]:
    """The body's top-level elements in order, each complete when given and freed once
    it has been read."""
    from docx.oxml.parser import element_class_lookup

    parser = etree.XMLPullParser(
        events=("start", "end"),
        remove_blank_text=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
    )
    parser.set_element_class_lookup(element_class_lookup)
    depth = 0
    pending = 0  # elements parsed since the last block was freed
    with package.open(member) as stream:
        while True:
            chunk = stream.read(_CHUNK)
            if chunk:
                parser.feed(chunk)
            else:
                parser.close()  # a truncated body raises here (damaged)
            for event, element in parser.read_events():
                if event == "start":
                    depth += 1
                    if depth == 1 and element.tag != f"{W}document":
                        raise ValueError("its main part is not a Word document body")
                    continue
                depth -= 1
                pending += 1
                if pending > packages.MAX_TREE_ELEMENTS:  # read each time: tests lower it
                    raise TooMuchText(  # `load_file` names the file
                        "a paragraph or table in it holds more than"
                        f" {packages.MAX_TREE_ELEMENTS:,} XML elements, too many to read"
                    )
                if depth == 2 and element.getparent().tag == f"{W}body":
                    yield element
                    _free(element)
                    pending = 0
            if not chunk:
                return


def _free(element: Any) -> None:
    """Empty a block that has been read and remove the ones before it (lxml keeps each
    parsed element in its parent until then; the parser is still appending to the
    parent, so the block itself goes with the next one)."""
    element.clear()
    parent = element.getparent()
    while element.getprevious() is not None:
        del parent[0]
