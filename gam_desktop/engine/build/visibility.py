"""The text of a web page or HTML e-mail that a reader does not see, taken out before the
page is read: hidden text is the classic carrier of prompt injection (an instruction the
person never sees, written for the LLM that reads the page).

Styles come from the page itself: its inline `style` attributes, its presentational
attributes (`bgcolor`, `<font color>`) and the rules of its `<style>` blocks whose selectors
are simple (`.x`, `#y`, `p`, `p.x.y`: matched through an index, at no cost per rule on a
big page); a linked stylesheet is never fetched, and rules inside `@media`, with
pseudo-classes or with combinators (`.box span`) are left aside: they apply only sometimes,
or would cost a walk of the page per rule. Declarations are parsed by tinycss2, as a browser
reads them (escapes, comments, strings, `!important`), and cascade by importance, origin,
specificity and order. Taken out:

- an element and all it holds when it is `hidden`, `aria-hidden="true"`, `display:none`,
  `mso-hide:all`, transparent (opacity about 0), zero-sized with its overflow hidden,
  clipped to nothing, or off-screen (positioned, indented or pushed far to the left or top);
- text whose inherited style makes it invisible: `visibility:hidden`, a font size about 0,
  a transparent colour, or the colour of the background behind it (a background declared
  on the element or an ancestor). These inherit as in a browser: a child that sets
  `visibility:visible` or a font size of its own (an e-mail's `font-size:0` cell holding
  sized text) is seen again.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any, TypeGuard

import tinycss2
from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag
from tinycss2.color4 import parse_color

# Only the properties that can hide text are kept from a stylesheet (big ones hold thousands
# of rules about margins and borders).
_PROPERTIES = frozenset(
    {"display", "visibility", "opacity", "font-size", "font", "color", "background",
     "background-color", "background-image", "width", "height", "max-width", "max-height",
     "overflow", "overflow-x", "overflow-y", "position", "left", "top", "right",
     "text-indent", "margin-left", "margin-top", "clip", "mso-hide"}
)  # fmt: skip
ALMOST_TRANSPARENT = 0.05  # opacity, or a colour's alpha, at or below which nothing shows
MIN_FONT_PX = 1.5  # smaller text is unreadable
OFF_SCREEN_PX = 500  # further left or up than this is off-screen (-9999px is the usual)
SAME_COLOUR = 10 / 255  # colours closer than this in every channel look the same
_ROOT_FONT_PX = 16.0
_LENGTHS = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4,
            "q": 96 / 101.6, "rem": _ROOT_FONT_PX, "vw": 12.8, "vh": 8.0, "vmin": 8.0,
            "vmax": 12.8}  # fmt: skip
_FONT_HALF = {"ex", "ch"}  # about half the element's font size
_FONT_SIZES = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0,
               "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0}  # fmt: skip
_VISIBILITIES = frozenset({"visible", "hidden", "collapse"})
_BACKGROUNDS = ("background", "background-color", "background-image")
_COMPOUND = re.compile(r"(?P<type>[a-zA-Z][\w-]*|\*)?(?P<rest>(?:[#.][\w-]+)*)")
# (attribute, the only element that has it or None for any, the property it stands for)
_COLOUR_ATTRIBUTES = (
    ("bgcolor", None, "background-color"),
    ("color", "font", "color"),
    ("text", "body", "color"),
)
_HEX = re.compile(r"[0-9a-fA-F]{3}|[0-9a-fA-F]{6}")

RGBA = tuple[float, float, float, float]
_IMAGE = "image"  # a background that paints an image or a gradient: its colour is unknown
Paint = RGBA | str | None  # a colour, _IMAGE, or nothing


class _Value:
    """A declared value's tokens (whitespace left out), and what they paint, worked out
    once: one value serves every element with the same inline style or rule."""

    def __init__(self, tokens: list[Any]) -> None:
        self.tokens = tokens

    @cached_property
    def colour(self) -> RGBA | None:
        return _colour(self.tokens)

    @cached_property
    def paint(self) -> Paint:
        return _paint(self.tokens)


Rank = tuple[int, ...]  # (important, origin, specificity…, order): the highest wins
Declaration = tuple[str, _Value, int]  # (property, value, 1 when !important)
Candidate = tuple[Rank, str, _Value]
Cascaded = dict[str, tuple[Rank, _Value]]  # property: the winning rank and value
_NO_VALUE = _Value([])


def remove_hidden(soup: BeautifulSoup) -> int:
    """Take out of `soup` what a reader of the page would not see; the number of elements
    and runs of text taken out."""
    return _Remover(soup).run()


@dataclass(frozen=True)
class _Seen:
    """What an element passes down to what it holds (the inherited properties)."""

    visible: bool = True
    font_px: float = _ROOT_FONT_PX
    # The text's colour and the colour behind it, when the page says what they are (a
    # linked stylesheet may set them otherwise: a colour nobody declared is not compared).
    color: RGBA | None = None
    background: RGBA | None = None

    def hides_text(self) -> bool:
        if not self.visible or self.font_px < MIN_FONT_PX:
            return True
        color, back = self.color, self.background
        if color is None:
            return False
        if color[3] <= ALMOST_TRANSPARENT:
            return True
        return back is not None and all(
            abs(a - b) <= SAME_COLOUR for a, b in zip(color[:3], back[:3], strict=True)
        )


class _Remover:
    def __init__(self, soup: BeautifulSoup) -> None:
        self.soup = soup
        self.matched = _StyleSheet(soup).matches()

    def run(self) -> int:
        removed = 0
        stack: list[tuple[Tag, _Seen]] = [(self.soup, _Seen())]
        while stack:  # not recursive: a page nested 100,000 deep is read all the same
            node, seen = stack.pop()
            for child in list(node.children):
                if isinstance(child, Tag):
                    style = self._cascade(child)
                    inner = _inherit(seen, style) if style else seen
                    if _hides_all(child, style, inner.font_px):
                        child.decompose()
                        removed += 1
                    else:
                        stack.append((child, inner))
                elif _is_text(child) and child.strip() and seen.hides_text():
                    child.extract()
                    removed += 1
        return removed

    def _cascade(self, tag: Tag) -> Cascaded:
        """The declarations that apply to `tag`, the winner for each property: important
        first, then inline over stylesheet over attributes, then specificity, then order."""
        candidates = [*_attributes(tag), *self.matched.get(id(tag), ())]
        style = tag.get("style")
        if isinstance(style, str):
            candidates += _inline(style)
        cascaded: Cascaded = {}
        for rank, name, value in candidates:
            if name not in cascaded or rank >= cascaded[name][0]:
                cascaded[name] = (rank, value)
        return cascaded


def _is_text(node: object) -> TypeGuard[NavigableString]:
    """Text a reader reads (not a comment, doctype or CDATA section)."""
    return isinstance(node, NavigableString) and not isinstance(node, PreformattedString)


# -- the declarations of an element ------------------------------------------------------


@lru_cache(maxsize=4096)  # an e-mail's inlined styles repeat on every cell
def _inline(style: str) -> tuple[Candidate, ...]:
    """A `style` attribute's declarations, ranked above any stylesheet's."""
    return tuple(
        ((important, 2, 0, 0, 0, order), name, value)
        for order, (name, value, important) in enumerate(_declarations(style))
    )


def _declarations(css: str | list[Any]) -> Iterator[Declaration]:
    """The declarations of a `style` attribute or a rule's body that can hide text."""
    for node in tinycss2.parse_declaration_list(css, skip_comments=True, skip_whitespace=True):
        if node.type == "declaration" and node.lower_name in _PROPERTIES:
            tokens = [t for t in node.value if t.type not in ("whitespace", "comment")]
            yield node.lower_name, _Value(tokens), int(node.important)


def _attributes(tag: Tag) -> list[Candidate]:
    """The presentational attributes that colour text or its background, as declarations
    that any style overrides (HTML e-mails are full of `bgcolor` and `<font color>`)."""
    found: list[Candidate] = []
    for attribute, only_on, name in _COLOUR_ATTRIBUTES:
        value = tag.get(attribute)
        if isinstance(value, str) and only_on in (None, tag.name):
            found.append(((0, 0, 0, 0, 0, 0), name, _attribute_value(value.strip())))
    return found


@lru_cache(maxsize=256)
def _attribute_value(value: str) -> _Value:
    if _HEX.fullmatch(value):  # legacy colour attributes may leave out the "#"
        value = f"#{value}"
    tokens = tinycss2.parse_component_value_list(value, skip_comments=True)
    return _Value([t for t in tokens if t.type != "whitespace"])


def _tokens(style: Cascaded, name: str) -> list[Any]:
    return style.get(name, ((), _NO_VALUE))[1].tokens


# -- the <style> blocks --------------------------------------------------------------------


@dataclass(frozen=True)
class _Selector:
    """A simple selector: the element's name (None for any), its id, its classes."""

    name: str | None
    id: str | None
    classes: tuple[str, ...]

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (int(self.id is not None), len(self.classes), int(self.name is not None))


class _StyleSheet:
    """The rules of a page's `<style>` blocks, matched to its elements."""

    def __init__(self, soup: BeautifulSoup) -> None:
        self.soup = soup
        self.rules: list[tuple[_Selector, list[Declaration]]] = []
        for element in soup.find_all("style"):
            media = str(element.get("media") or "all").strip().lower()
            if media in ("all", "screen"):  # not for print only, nor for some screens
                self._parse(element.get_text())

    def _parse(self, css: str) -> None:
        for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
            if rule.type != "qualified-rule":  # @media, @import, @font-face: left aside
                continue
            declarations = list(_declarations(rule.content))
            if not declarations:
                continue
            for text in tinycss2.serialize(rule.prelude).split(","):
                selector = _selector(text.strip())
                if selector is not None:
                    self.rules.append((selector, declarations))

    def matches(self) -> dict[int, list[Candidate]]:
        """The stylesheet's declarations for each element they apply to (by `id()`)."""
        matched: dict[int, list[Candidate]] = defaultdict(list)
        if not self.rules:
            return matched
        index = _Index(self.soup)
        for order, (selector, declarations) in enumerate(self.rules):
            for tag in index.matching(selector):
                for name, value, important in declarations:
                    rank = (important, 1, *selector.specificity, order)
                    matched[id(tag)].append((rank, name, value))
        return matched


def _selector(text: str) -> _Selector | None:
    """The simple selector `text` (`div.note#x`, `.a.b`, `*`), or None for anything else."""
    match = _COMPOUND.fullmatch(text)
    if match is None or not text:
        return None
    parts = re.findall(r"([#.])([\w-]+)", match.group("rest"))
    ids = [name for mark, name in parts if mark == "#"]
    if len(ids) > 1:
        return None  # two ids: it matches nothing
    name = (match.group("type") or "*").lower()
    return _Selector(
        None if name == "*" else name,
        ids[0] if ids else None,
        tuple(name for mark, name in parts if mark == "."),
    )


class _Index:
    """A page's elements by id, class and name: a selector looks only at its candidates."""

    def __init__(self, soup: BeautifulSoup) -> None:
        self.all: list[Tag] = soup.find_all(True)
        self.ids: dict[str, list[Tag]] = defaultdict(list)
        self.classes: dict[str, list[Tag]] = defaultdict(list)
        self.names: dict[str, list[Tag]] = defaultdict(list)
        for tag in self.all:
            self.names[tag.name].append(tag)
            if isinstance(tag.get("id"), str):
                self.ids[str(tag.get("id"))].append(tag)
            for name in tag.get_attribute_list("class"):
                if name:
                    self.classes[name].append(tag)

    def matching(self, selector: _Selector) -> Iterator[Tag]:
        if selector.id is not None:
            candidates = self.ids.get(selector.id, [])
        elif selector.classes:
            candidates = min((self.classes.get(c, []) for c in selector.classes), key=len)
        elif selector.name is not None:
            candidates = self.names.get(selector.name, [])
        else:
            candidates = self.all
        for tag in candidates:
            if (
                (selector.name is None or tag.name.lower() == selector.name)
                and (selector.id is None or tag.get("id") == selector.id)
                and set(selector.classes) <= set(tag.get_attribute_list("class"))
            ):
                yield tag


# -- what an element hides ---------------------------------------------------------------


def _hides_all(tag: Tag, style: Cascaded, font_px: float) -> bool:
    """Whether `tag` and all it holds are out of sight."""
    if tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).strip().lower() == "true":
        return True
    if not style:
        return False
    if _keyword(style, "display") == "none" or _keyword(style, "mso-hide") == "all":
        return True
    opacity = _number(_tokens(style, "opacity"))
    if opacity is not None and opacity <= ALMOST_TRANSPARENT:
        return True
    return _collapsed(style, font_px) or _clipped(style, font_px) or _off_screen(style, font_px)


def _collapsed(style: Cascaded, font_px: float) -> bool:
    """A box of no width or no height that hides what overflows it."""
    overflow = {_keyword(style, name) for name in ("overflow", "overflow-x", "overflow-y")}
    overflow |= {_keyword(style, "overflow", 1)}  # "overflow: visible hidden"
    if not overflow & {"hidden", "clip"}:
        return False
    sizes = [
        _length(style, name, font_px) for name in ("width", "height", "max-width", "max-height")
    ]
    return any(size is not None and size <= 1 for size in sizes)


def _clipped(style: Cascaded, font_px: float) -> bool:
    """A positioned element clipped to a rectangle of no area: `clip: rect(0 0 0 0)`."""
    if _keyword(style, "position") not in ("absolute", "fixed"):
        return False
    value = _tokens(style, "clip")
    if len(value) != 1 or value[0].type != "function" or value[0].lower_name != "rect":
        return False
    edges = [_px(t, font_px) for t in value[0].arguments if t.type not in ("whitespace", "literal")]
    if len(edges) != 4 or any(edge is None for edge in edges):
        return False  # "auto" edges: the box's own
    top, right, bottom, left = (float(edge or 0) for edge in edges)
    return bottom <= top or right <= left


def _off_screen(style: Cascaded, font_px: float) -> bool:
    """Placed far to the left or above the page, where nobody scrolls."""
    pushed = ["text-indent", "margin-left", "margin-top"]
    if _keyword(style, "position") in ("absolute", "fixed"):
        pushed += ["left", "top", "right"]
    return any((_length(style, name, font_px) or 0) <= -OFF_SCREEN_PX for name in pushed)


# -- what an element passes down ---------------------------------------------------------


def _inherit(seen: _Seen, style: Cascaded) -> _Seen:
    visibility = _keyword(style, "visibility")
    color = style.get("color")
    return replace(
        seen,
        visible=visibility == "visible" if visibility in _VISIBILITIES else seen.visible,
        font_px=_font_size(style, seen.font_px),
        color=(color[1].colour if color else None) or seen.color,
        background=_background(style, seen.background),
    )


def _font_size(style: Cascaded, parent_px: float) -> float:
    """The element's font size in pixels, from `font-size` or the `font` shorthand
    (`font: 0/0 a`, `font: bold 14px/1.4 Arial`), whichever wins the cascade."""
    size, font = style.get("font-size"), style.get("font")
    if font is not None and (size is None or font[0] > size[0]):
        sizes = (_size_of(t, parent_px) for t in font[1].tokens)
    elif size is not None:
        sizes = (_size_of(t, parent_px) for t in size[1].tokens[:1])
    else:
        return parent_px
    return next((px for px in sizes if px is not None), parent_px)


def _size_of(token: Any, parent_px: float) -> float | None:
    if token.type == "ident":
        keyword = token.lower_value
        if keyword in ("smaller", "larger"):
            return parent_px / 1.2 if keyword == "smaller" else parent_px * 1.2
        return _FONT_SIZES.get(keyword)
    if token.type == "percentage":
        return parent_px * float(token.value) / 100
    return _px(token, parent_px)


def _background(style: Cascaded, behind: RGBA | None) -> RGBA | None:
    """The colour behind the element's text: its own background over what is behind it;
    None once an image may be there (its colours are unknown)."""
    declared = [style[name] for name in _BACKGROUNDS if name in style]
    if not declared:
        return behind
    paint = max(declared, key=lambda found: found[0])[1].paint
    if paint is None or isinstance(paint, str):
        return None if paint == _IMAGE else behind
    alpha = paint[3]
    if alpha <= ALMOST_TRANSPARENT:
        return behind
    if alpha >= 1 - ALMOST_TRANSPARENT:
        return paint
    if behind is None:
        return None
    r, g, b = (alpha * c + (1 - alpha) * d for c, d in zip(paint[:3], behind[:3], strict=True))
    return (r, g, b, 1.0)


def _paint(tokens: list[Any]) -> Paint:
    """What a background value paints: its colour, _IMAGE for an image or a gradient (a
    function or url that is no colour), None for nothing ("none", a position alone)."""
    colours = [_colour([t]) for t in tokens]
    if any(
        c is None and t.type in ("url", "function") for c, t in zip(colours, tokens, strict=True)
    ):
        return _IMAGE
    return next((c for c in colours if c is not None), None)


def _colour(tokens: list[Any]) -> RGBA | None:
    """The colour `tokens` name, or None (`inherit`, `currentColor`, not a colour). A colour
    outside sRGB (lab, oklch) keeps its alpha and compares equal to nothing (NaN)."""
    colour = parse_color(tokens[0]) if len(tokens) == 1 else None
    if colour is None or isinstance(colour, str):  # "currentcolor": the inherited one
        return None
    alpha = float(colour.alpha)
    if colour.space not in ("srgb", "hsl", "hwb"):
        return (math.nan, math.nan, math.nan, alpha)
    red, green, blue = (float(c) for c in colour.to("srgb").coordinates)
    return (red, green, blue, alpha)


# -- values ------------------------------------------------------------------------------


def _keyword(style: Cascaded, name: str, position: int = 0) -> str | None:
    tokens = _tokens(style, name)
    if len(tokens) > position and tokens[position].type == "ident":
        return str(tokens[position].lower_value)
    return None


def _number(tokens: list[Any]) -> float | None:
    """A unitless number or a percentage (of 1)."""
    if len(tokens) != 1:
        return None
    if tokens[0].type == "number":
        return float(tokens[0].value)
    if tokens[0].type == "percentage":
        return float(tokens[0].value) / 100
    return None


def _length(style: Cascaded, name: str, font_px: float) -> float | None:
    tokens = _tokens(style, name)
    return _px(tokens[0], font_px) if len(tokens) == 1 else None


def _px(token: Any, font_px: float) -> float | None:
    """A length token in pixels (0 without a unit too), or None when it is not one."""
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type != "dimension":
        return None
    unit = token.lower_unit
    if unit == "em":
        return float(token.value) * font_px
    if unit in _FONT_HALF:
        return float(token.value) * font_px / 2
    factor = _LENGTHS.get(unit)
    return None if factor is None else float(token.value) * factor
