"""Reading HTML (a saved web page, an EPUB chapter, an e-mail's HTML body) as text.

The markup is untrusted: it is parsed by BeautifulSoup over Python's own `html.parser`,
which never runs a script, loads an image or stylesheet, or resolves an entity beyond
HTML's named characters. Scripts, styles, embedded objects, forms' controls and navigation
are left out, and so is every text the page hides from its reader (`visibility`: hidden
elements, `display:none`, zero-size, off-screen, transparent or background-coloured
text); headings become `#` lines, paragraphs and other blocks are apart by a blank line,
list items are `- ` lines and table rows are cells apart by ` | `. The tree is built within
bounds (`htmltree`: its depth, its elements and texts, HTML's implied end tags) and read
without recursion.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

from bs4 import MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning
from bs4.dammit import EncodingDetector
from bs4.element import NavigableString, PageElement, PreformattedString, Tag

from gam_desktop.engine.ingest.blocks import TextBlocks
from gam_desktop.engine.ingest.documents import (
    DocumentError,
    SourceDocument,
    decode_bytes,
    refuse_binary,
)
from gam_desktop.engine.ingest.htmltree import BoundedSoup, NodeBudget
from gam_desktop.engine.ingest.visibility import remove_hidden

# An EPUB chapter is XHTML, read on purpose with the HTML parser (no XML entities); a
# one-line page can look like a file name. Neither is worth a warning on the console.
warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)
warnings.filterwarnings("ignore", category=MarkupResemblesLocatorWarning)

_LEFT_OUT = ["script", "style", "noscript", "template", "iframe", "frame", "object", "embed",
             "applet", "svg", "math", "canvas", "head", "nav", "button", "select", "textarea",
             "input", "audio", "video", "map"]  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
     "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer",
     "form", "header", "hgroup", "hr", "html", "li", "main", "p", "section", "summary",
     "td", "th", "tr"}
)  # fmt: skip
_SPACE = re.compile(r"\s+")


def decode_html(data: bytes, name: str) -> tuple[str, list[str]]:
    """The page's characters: in the encoding it declares (a `<meta charset>` or an XML
    declaration), else by its byte-order mark, UTF-8 or a stated fallback."""
    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    if declared and b"\x00" not in data[:8192]:
        try:
            text = data.decode(declared, errors="replace").lstrip("\ufeff")
        except LookupError:  # an encoding Python does not know: guess as for text
            pass
        else:
            refuse_binary(text, name)
            return text, []
    return decode_bytes(data, name)


def add_html(
    blocks: TextBlocks,
    html: str,
    *,
    shift: int = 0,
    titled: bool = False,
    budget: NodeBudget | None = None,
) -> int:
    """The blocks of `html`, its headings `shift` levels down; `titled`: a page's <title>
    is its level-1 heading when the page has no <h1>; `budget`: the elements and texts the
    document may still hold (an EPUB's chapters share one). The number of hidden elements
    and runs of text left out. TooMuchText (`htmltree.TooDeep` among them) when the page
    is nested too deeply or holds too much."""
    soup = BoundedSoup(html, budget)
    title = soup.title.get_text(" ") if titled and soup.title else ""
    hidden = remove_hidden(soup)  # first: it reads the page's <style> blocks
    for element in soup.find_all(_LEFT_OUT):
        element.decompose()
    if title.strip() and soup.find("h1") is None:
        blocks.heading(title, 1)
    _Walker(blocks, shift).walk(soup)
    return hidden


def load_html(path: Path, data: bytes) -> SourceDocument:
    text, notes = decode_html(data, path.name)
    blocks = TextBlocks()
    blocks.warnings += notes
    try:
        hidden = add_html(blocks, text, titled=True)
    except RecursionError as exc:  # the last guard: `htmltree` refuses such depths first
        raise DocumentError(f"{path.name}: the HTML is nested too deeply to be read") from exc
    if not blocks.text:
        why = " (all of its text is hidden by its markup or styles)" if hidden else ""
        blocks.warnings.append(f"{path.name}: no text found in the HTML page{why}; skipped")
    return blocks.document(path, data)


class _Walker:
    """Turns a parsed page into blocks: inline text gathers into the paragraph under way,
    and every block-level element ends it."""

    def __init__(self, blocks: TextBlocks, shift: int) -> None:
        self.blocks = blocks
        self.shift = shift
        self.inline: list[str] = []

    def walk(self, node: Tag) -> None:
        """A block-level `node`: its content, then the end of its last paragraph. With a
        stack of the elements open, not by recursion: a page may nest 512 deep."""
        open_: list[tuple[Iterator[PageElement], bool]] = [(iter(node.children), True)]
        while open_:
            children, block = open_[-1]
            child = next(children, None)
            if child is None:  # the element is read: a block ends its last paragraph
                open_.pop()
                if block:
                    self._end_paragraph()
            elif isinstance(child, NavigableString):
                if not isinstance(child, PreformattedString):  # comments, doctypes, CDATA
                    self.inline.append(_SPACE.sub(" ", child))
            elif isinstance(child, Tag):  # hidden ones are gone already (`visibility`)
                inside = self._element(child)
                if inside is not None:
                    open_.append((iter(child.children), inside))

    def _element(self, tag: Tag) -> bool | None:
        """Read `tag` unless its content is to be walked: then whether it is a block (True)
        or inline (False)."""
        name = tag.name
        if name == "br":
            self.inline.append("\n")
        elif name in _HEADINGS:
            self._end_paragraph()
            self.blocks.heading(_words(tag), _HEADINGS[name] + self.shift)
        elif name in ("ul", "ol"):
            self._end_paragraph()
            self.blocks.add("\n".join(_list_lines(tag, 0)))
        elif name == "table":
            self._end_paragraph()
            self.blocks.add(_table_text(tag))
        elif name == "pre":
            self._end_paragraph()
            self.blocks.add(tag.get_text())
        elif name in _BLOCKS:
            self._end_paragraph()
            return True
        else:  # inline: <a>, <b>, <span>, …
            return False
        return None

    def _end_paragraph(self) -> None:
        lines = (" ".join(line.split()) for line in "".join(self.inline).split("\n"))
        self.inline = []
        self.blocks.add("\n".join(line for line in lines if line))


def _words(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").split())


def _list_lines(listing: Tag, depth: int) -> list[str]:
    """A list's items as `- ` lines, nested lists indented under their item."""
    lines: list[str] = []
    items = listing.find_all("li", recursive=False)
    if not items:  # a list of something else: keep its words
        return [f"{'  ' * depth}- {_words(listing)}"] if _words(listing) else []
    for item in items:
        nested = [
            inner
            for inner in item.find_all(["ul", "ol"])
            if inner.find_parent(["ul", "ol"]) is listing
        ]
        for inner in nested:
            inner.extract()  # the item's own words first, its sublists below
        if _words(item):
            lines.append(f"{'  ' * min(depth, 8)}- {_words(item)}")
        for inner in nested:
            lines += _list_lines(inner, depth + 1)
    return lines


def _table_text(table: Tag) -> str:
    rows = []
    for row in table.find_all("tr"):
        cells = [_words(cell) for cell in row.find_all(["td", "th"], recursive=False)]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)
