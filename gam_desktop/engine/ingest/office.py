"""Reading Word (.docx, python-docx) and PowerPoint (.pptx, python-pptx) files.

Word: the body in order (paragraphs, tables, content controls), headings from the
paragraph styles ("Title", "Heading 1-9", and styles based on them) as `#` lines, list
items as `- ` lines, table rows as cells apart by ` | `. Text boxes, headers, footers
and comments are left out (they repeat or sit beside the text). PowerPoint: one page per
slide (a memory names its slides as pages), its title as a heading, the text of its
shapes in reading order (their order in the slide, as a screen reader reads them), tables,
and the speaker notes.
Both libraries parse XML without resolving entities; nothing is fetched. A Word body is
not given to python-docx whole but read block by block as it is parsed (`wordxml`), its
elements still python-docx's: its tree could take gigabytes.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gam_desktop.engine.ingest.blocks import TextBlocks
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument
from gam_desktop.engine.ingest.packages import a, check_elements, open_package
from gam_desktop.engine.ingest.wordxml import body_blocks, paragraph_styles, word_parts, word_styles

if TYPE_CHECKING:
    from docx.styles.styles import Styles
    from pptx.presentation import Presentation

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# Left out of a paragraph's text: text boxes anchored in it (their own paragraphs, read
# apart or not at all), the fallback copy of alternate content (the same text twice), and
# formatting, never text (not walked: a run can carry thousands of property elements).
_NOT_TEXT = frozenset(
    {f"{_W}txbxContent", f"{_W}del", f"{_W}instrText", _FALLBACK, f"{_W}rPr", f"{_W}pPr"}
)
_HEADING = re.compile(r"heading ([1-9])$")
WORD = "Word document"
POWERPOINT = "PowerPoint presentation"


def load_docx(path: Path, data: bytes) -> SourceDocument:
    def parse() -> TextBlocks:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return _word_blocks(package)

    return _load(path, data, WORD, parse, "")


def load_pptx(path: Path, data: bytes) -> SourceDocument:
    def parse() -> TextBlocks:
        from pptx import Presentation

        with zipfile.ZipFile(io.BytesIO(data)) as package:  # python-pptx parses all its XML
            xml = [n for n in package.namelist() if n.lower().endswith((".xml", ".rels"))]
            check_elements(package, xml)
        return _deck_blocks(Presentation(io.BytesIO(data)))

    return _load(path, data, POWERPOINT, parse, " (pictures only?)")


def _load(
    path: Path, data: bytes, kind: str, parse: Callable[[], TextBlocks], empty_hint: str
) -> SourceDocument:
    """One Office package of `kind` read by `parse` (imported on first use): a damaged one
    is a DocumentError naming the file, one without text a warning that skips it."""
    open_package(path, data, kind).close()
    try:
        blocks = parse()
    except (DocumentError, RecursionError, MemoryError):
        raise
    except Exception as exc:  # python-docx, python-pptx and lxml raise many types
        raise DocumentError(
            f"{path.name}: could not be read as {a(kind)} (damaged?): {exc}"
        ) from exc
    if not blocks.text:
        blocks.warnings.append(f"{path.name}: no text found in the {kind}{empty_hint}; skipped")
    return blocks.document(path, data)


# -- Word -----------------------------------------------------------------------------


class _WordReader:
    """Turns a Word body's paragraphs and tables, block by block, into text blocks."""

    def __init__(self, styles: Styles) -> None:
        self.document_styles = styles
        self.blocks = TextBlocks()
        self.styles: dict[str | None, _Style] = {}  # by style id
        self.items: list[str] = []  # the list being read: its items are one block
        self.shift = 0  # 1 when a "Title" paragraph is the level-1 heading (`_word_blocks`)

    def read(self, elements: Iterable[Any]) -> None:
        for element in elements:
            self.block(element)
        self._flush_list()

    def block(self, element: Any) -> None:
        """One element of the body (or of a content control in it)."""
        if element.tag == f"{_W}p":
            self._paragraph(element)
        elif element.tag == f"{_W}tbl":
            self._flush_list()
            self.blocks.add(_table_text(element))
        elif element.tag == f"{_W}sdt":  # a content control: a cover page, a TOC
            for content in element.iterchildren(f"{_W}sdtContent"):
                self.read(content.iterchildren())

    def _paragraph(self, p: Any) -> None:
        text = _runs_text(p)
        style = self.style(p.style)
        numbered = p.pPr is not None and p.pPr.numPr is not None
        if style.level is not None:
            self._flush_list()
            self.blocks.heading(text, style.level + self.shift if style.level else 1)
        elif (numbered or style.listed) and text.strip():
            numbering = p.pPr.numPr if numbered else None
            depth = (
                numbering.ilvl.val if numbering is not None and numbering.ilvl is not None else 0
            )
            self.items.append(f"{'  ' * min(depth, 8)}- {' '.join(text.split())}")
        else:
            self._flush_list()
            self.blocks.add(text)

    def _flush_list(self) -> None:
        if self.items:
            self.blocks.add("\n".join(self.items))
            self.items = []

    def style(self, style_id: str | None) -> _Style:
        if style_id not in self.styles:
            from docx.enum.style import WD_STYLE_TYPE

            style = self.document_styles.get_by_id(style_id, WD_STYLE_TYPE.PARAGRAPH)
            self.styles[style_id] = _style_of(style)
        return self.styles[style_id]


@dataclass(frozen=True)
class _Style:
    level: int | None  # 0 for "Title", 1-9 for "Heading N", None for body text
    listed: bool  # the style numbers its paragraphs ("List Bullet")


def _style_of(style: Any) -> _Style:
    """What a paragraph style makes of its paragraphs, through its base styles: "Title",
    "Heading N" and styles based on them are headings; a numbered style makes list items."""
    listed = False
    for _ in range(10):  # the chain of base styles (a loop in a broken file ends here)
        if style is None:
            break
        name = (style.name or "").lower()
        heading = _HEADING.match(name)
        if name == "title" or heading:
            return _Style(int(heading.group(1)) if heading else 0, False)
        ppr = style.element.pPr
        listed = listed or (ppr is not None and ppr.numPr is not None)
        style = style.base_style
    return _Style(None, listed)


def _word_blocks(package: zipfile.ZipFile) -> TextBlocks:
    """The body read as it is parsed (`wordxml`): memory for one block at a time. With a
    "Title" paragraph anywhere the title is the level-1 heading and "Heading 1" level 2,
    so the paragraphs' styles are scanned first (a pass that builds no tree)."""
    body, styles = word_parts(package)
    reader = _WordReader(word_styles(package, styles))
    reader.shift = int(any(reader.style(s).level == 0 for s in paragraph_styles(package, body)))
    reader.read(body_blocks(package, body))
    return reader.blocks


def _runs_text(element: Any) -> str:
    """The visible text under `element`: runs, hyperlinks, fields, inserted text and inline
    content controls, with tabs and line breaks."""
    parts: list[str] = []
    for child in element.iterchildren():
        tag = child.tag
        if not isinstance(tag, str) or tag in _NOT_TEXT:
            continue
        if tag == f"{_W}t":  # itertext: an unresolved entity must not hide the text after it
            parts.append("".join(child.itertext()))
        elif tag == f"{_W}tab":
            parts.append("\t")
        elif tag in (f"{_W}br", f"{_W}cr"):
            parts.append("\n")
        else:
            parts.append(_runs_text(child))
    return "".join(parts)


def _table_text(table: Any) -> str:
    rows = []
    for row in table.iterchildren(f"{_W}tr"):
        cells = [
            " ".join(" ".join(_runs_text(p).split()) for p in cell.iter(f"{_W}p")).strip()
            for cell in row.iterchildren(f"{_W}tc")
        ]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


# -- PowerPoint -----------------------------------------------------------------------


def _deck_blocks(deck: Presentation) -> TextBlocks:
    blocks = TextBlocks()
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        others = [
            s for s in slide.shapes if title_shape is None or s.shape_id != title_shape.shape_id
        ]
        texts = [text for text in _shape_texts(others) if text.strip()]
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            texts.append(f"Notes: {notes.text.strip()}")
        if not title and not texts:
            continue
        with blocks.page(number):
            blocks.heading(f"Slide {number}: {title}" if title else f"Slide {number}", 2)
            for text in texts:
                blocks.add(text)
    return blocks


def _shape_texts(shapes: Iterable[Any]) -> Iterator[str]:
    from pptx.shapes.group import GroupShape

    for shape in shapes:  # PowerPoint's reading order: the shapes' order in the slide
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes)
        elif shape.has_text_frame:
            frame = shape.text_frame
            yield "\n".join(
                f"{'  ' * paragraph.level}{' '.join(paragraph.text.split())}"
                for paragraph in frame.paragraphs
                if paragraph.text.strip()
            )
        elif getattr(shape, "has_table", False):  # a graphic frame: a table, chart or diagram
            table = shape.table
            yield "\n".join(
                " | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in table.rows
            )
