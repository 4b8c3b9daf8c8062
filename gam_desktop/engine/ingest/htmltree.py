"""A web page's tree, built within bounds (what `markup` reads).

BeautifulSoup over Python's `html.parser` builds whatever the markup says, and it knows
none of HTML's implied end tags. So:

- an old page whose 2,000 paragraphs never close (`<p>` alone was correct HTML 4) became
  one paragraph nested 2,000 deep, and was refused as "nested too deeply"; here a `<p>`,
  `<li>`, `<dt>`/`<dd>`, `<tr>`, `<td>`/`<th>`, `<option>`, `<a>` or heading closes the
  open one it cannot be inside, as a browser's parser does (a simplified HTML5 tree
  construction: its scopes, not its adoption agency);
- a page nested 100,000 deep took seconds to refuse (the tree was built whole, then the
  reading ran out of stack): the depth is checked as each element opens, and past
  MAX_DEPTH (Chrome's parser stops nesting at 512 as well) the page is refused at once;
- a page of a million empty elements (8 MB) took 100 s and 1.2 GB: elements and runs of
  text are counted as they are added, and past MAX_NODES (for a whole document: an EPUB's
  chapters share one count) the document is refused, as a Word file past its elements is.
"""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup
from bs4.element import PageElement, Tag

from gam_desktop.engine.ingest.documents import TooMuchText

# About 600 bytes of memory and 50 µs each (tags and texts of a page, measured on a page of
# 1,000,000 `<p>x</p>`): the bound is ~600 MB. A long web page holds tens of thousands,
# a 1,000-page book in EPUB a few hundred thousand. Tests lower it.
MAX_NODES = 1_000_000
MAX_DEPTH = 512  # elements inside each other; real pages stay under 100

# HTML's "special" elements (the list-item rules stop at them) and the boundaries of a
# paragraph's "button scope" (a `<p>` inside a table cell is not closed by one outside).
_SPECIAL = frozenset(
    {"address", "applet", "area", "article", "aside", "base", "basefont", "bgsound",
     "blockquote", "body", "br", "button", "caption", "center", "col", "colgroup", "dd",
     "details", "dir", "div", "dl", "dt", "embed", "fieldset", "figcaption", "figure",
     "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head",
     "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link",
     "listing", "main", "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript",
     "object", "ol", "p", "param", "plaintext", "pre", "script", "search", "section",
     "select", "source", "style", "summary", "table", "tbody", "td", "template", "textarea",
     "tfoot", "th", "thead", "title", "tr", "track", "ul", "wbr", "xmp"}
)  # fmt: skip
_BUTTON_SCOPE = frozenset(
    {"applet", "caption", "html", "table", "td", "th", "marquee", "object", "template",
     "button"}
)  # fmt: skip
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The start tags that close an open paragraph (HTML5's "in body" insertion mode).
_CLOSE_P = frozenset(
    {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir",
     "div", "dl", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup",
     "hr", "main", "menu", "nav", "ol", "p", "pre", "listing", "search", "section",
     "summary", "table", "ul", "li", "dd", "dt", "plaintext", "xmp", *_HEADINGS}
)  # fmt: skip
# What each start tag closes: (the open elements it ends, where the search stops)
_ENDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), _SPECIAL - {"address", "div", "p", "li"}),
    "dd": (frozenset({"dd", "dt"}), _SPECIAL - {"address", "div", "p", "dd", "dt"}),
    "dt": (frozenset({"dd", "dt"}), _SPECIAL - {"address", "div", "p", "dd", "dt"}),
    "tr": (frozenset({"tr"}), frozenset({"table", "html", "template"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table", "html", "template"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table", "html", "template"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist", "html", "template"})),
    "optgroup": (
        frozenset({"option", "optgroup"}),
        frozenset({"select", "datalist", "html", "template"}),
    ),
    "a": (frozenset({"a"}), _BUTTON_SCOPE),
}


class TooDeep(TooMuchText):
    """A page nested past MAX_DEPTH (`load_file` names the file)."""


class NodeBudget:
    """The elements and runs of text one document may still add (its pages share it)."""

    def __init__(self) -> None:
        self.left = MAX_NODES  # read at each document: tests lower it

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise TooMuchText(
                f"its HTML holds more than {MAX_NODES:,} elements and runs of text, more"
                " than can be read in memory"
            )


class BoundedSoup(BeautifulSoup):
    """The page's tree as `html.parser` reads it, with HTML's implied end tags, refused as
    it is built when it nests past MAX_DEPTH or adds past its `budget`."""

    def __init__(self, markup: str, budget: NodeBudget | None = None) -> None:
        self._budget = budget or NodeBudget()  # (set first: the constructor parses)
        super().__init__(markup, "html.parser")

    def handle_starttag(
        self, name: str, namespace: str | None, nsprefix: str | None, *args: Any, **kwargs: Any
    ) -> Tag | None:
        self.endData()  # (the text before the tag belongs where it was written)
        if name in _CLOSE_P:
            self._close(frozenset({"p"}), _BUTTON_SCOPE)
        if name in _HEADINGS and self.currentTag is not None and self.currentTag.name in _HEADINGS:
            self.popTag()  # a heading never holds another
        ends = _ENDS.get(name)
        if ends is not None:
            self._close(*ends)
        return super().handle_starttag(name, namespace, nsprefix, *args, **kwargs)

    def _close(self, names: frozenset[str], stops: frozenset[str]) -> None:
        """End the innermost open element called one of `names`, and all inside it, unless
        an element of `stops` comes first."""
        for depth in range(len(self.tagStack) - 1, 0, -1):
            name = self.tagStack[depth].name
            if name in names:
                for _ in range(len(self.tagStack) - depth):
                    self.popTag()
                return
            if name in stops:
                return

    def pushTag(self, tag: Tag) -> None:
        if tag is not self:  # (the soup itself, pushed first)
            if len(self.tagStack) > MAX_DEPTH:
                raise TooDeep(
                    f"its HTML is nested more than {MAX_DEPTH} elements deep, too deep to be read"
                )
            self._budget.spend()
        super().pushTag(tag)

    def object_was_parsed(
        self,
        o: PageElement,
        parent: Tag | None = None,
        most_recent_element: PageElement | None = None,
    ) -> None:
        self._budget.spend()  # a run of text, a comment
        super().object_was_parsed(o, parent, most_recent_element)
