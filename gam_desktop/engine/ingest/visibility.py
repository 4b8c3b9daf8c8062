"""The text of a web page or HTML e-mail that a reader does not see, taken out before the
page is read: hidden text is the classic carrier of prompt injection (an instruction the
person never sees, written for the LLM that reads the page).

Styles come from the page itself: its inline `style` attributes, its presentational
attributes (`bgcolor`, `<font color>`) and the rules of its `<style>` blocks, with their
`@media` queries and any selector (`stylesheet`: soupsieve matches them); a linked
stylesheet is never fetched. Declarations are parsed by tinycss2, as a browser reads them
(escapes, comments, strings, `!important`), and cascade by importance, origin, specificity
and order. A page is looked at on each kind of screen its `@media` rules tell apart (a
phone, a tablet, a laptop, a desktop): what one of them shows is kept. Taken out:

- an element and all it holds when it is `hidden`, `aria-hidden="true"`, `display:none`,
  `mso-hide:all`, `content-visibility:hidden`, transparent (its opacity, and its
  ancestors', `filter: opacity()` included, about 0), squashed to nothing by a transform
  (`scale(0)`, `scaleY(0)`, `rotateX(90deg)`, a singular `matrix()`: the smaller of its
  scale factors about 0), zero-sized with its overflow hidden, clipped to nothing (`clip`,
  `clip-path: inset(50%)`), or off-screen (positioned, indented or pushed far to the left or
  top);
- text whose inherited style makes it invisible: `visibility:hidden`, a font size about 0
  (once scaled by the transforms around it), blurred beyond reading, a transparent colour,
  or the colour of the background behind it (a background declared on the element or an
  ancestor). These inherit as in a browser: a child that sets `visibility:visible` or a
  font size of its own (an e-mail's `font-size:0` cell holding sized text) is seen again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any, TypeGuard

import tinycss2
from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag
from tinycss2.color4 import parse_color

from gam_desktop.engine.ingest.stylesheet import ALL_SCREENS, SCREENS, Rank, StyleSheet

# Only the properties that can hide text are kept from a stylesheet (big ones hold thousands
# of rules about margins and borders).
_PROPERTIES = frozenset(
    {"display", "visibility", "opacity", "font-size", "font", "color", "background",
     "background-color", "background-image", "width", "height", "max-width", "max-height",
     "overflow", "overflow-x", "overflow-y", "position", "left", "top", "right",
     "text-indent", "margin-left", "margin-top", "clip", "mso-hide", "transform", "scale",
     "rotate", "filter", "clip-path", "content-visibility"}
)  # fmt: skip
ALMOST_TRANSPARENT = 0.05  # opacity, or a colour's alpha, at or below which nothing shows
MIN_FONT_PX = 1.5  # smaller text is unreadable
MIN_SCALE = 0.01  # a transform that scales an element this small leaves nothing to see
BLUR_SHARE = 0.5  # text blurred by half its font size or more cannot be read
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
    """What an element passes down to what it holds (the inherited properties, and what
    its ancestors do to all they hold: their opacity, scale and blur)."""

    visible: bool = True
    font_px: float = _ROOT_FONT_PX
    # The text's colour and the colour behind it, when the page says what they are (a
    # linked stylesheet may set them otherwise: a colour nobody declared is not compared).
    color: RGBA | None = None
    background: RGBA | None = None
    alpha: float = 1.0  # the opacities multiplied
    scale: float = 1.0  # the smallest scale factor of the transforms, multiplied
    blur: float = 0.0  # pixels of blur, added

    def hides_all(self) -> bool:
        return self.alpha <= ALMOST_TRANSPARENT or self.scale <= MIN_SCALE

    def hides_text(self) -> bool:
        if not self.visible or self.font_px * self.scale < MIN_FONT_PX:
            return True
        if self.blur >= BLUR_SHARE * self.font_px:
            return True
        color, back = self.color, self.background
        if color is None:
            return self.alpha <= ALMOST_TRANSPARENT
        if color[3] * self.alpha <= ALMOST_TRANSPARENT:
            return True
        return back is not None and all(
            abs(a - b) <= SAME_COLOUR for a, b in zip(color[:3], back[:3], strict=True)
        )


States = tuple[_Seen | None, ...]  # per screen; None: hidden there with an ancestor


class _Remover:
    def __init__(self, soup: BeautifulSoup) -> None:
        self.soup = soup
        sheet = StyleSheet(soup, lambda content: list(_declarations(content)))
        self.matched = sheet.matches()
        # a page without @media rules looks the same on every screen: one is enough
        self.screens = len(SCREENS) if sheet.conditional else 1

    def run(self) -> int:
        removed = 0
        start: States = (_Seen(),) * self.screens
        stack: list[tuple[Tag, States]] = [(self.soup, start)]
        while stack:  # not recursive: a page nested 100,000 deep is read all the same
            node, states = stack.pop()
            for child in list(node.children):
                if isinstance(child, Tag):
                    inner = self._states(child, states)
                    if inner is None:  # hidden on every screen
                        child.decompose()
                        removed += 1
                    else:
                        stack.append((child, inner))
                elif (
                    _is_text(child)
                    and child.strip()
                    and all(seen is None or seen.hides_text() for seen in states)
                ):
                    child.extract()
                    removed += 1
        return removed

    def _states(self, tag: Tag, states: States) -> States | None:
        """What `tag` passes down on each screen (None where it is hidden), or None when it
        is hidden on all of them."""
        own = [*_attributes(tag)]
        style_attribute = tag.get("style")
        if isinstance(style_attribute, str):
            own += _inline(style_attribute)
        matched = self.matched.get(id(tag), ())
        conditional = any(screens != ALL_SCREENS for *_, screens in matched)
        cascades: dict[int, Cascaded] = {}
        inner: list[_Seen | None] = []
        for screen, seen in enumerate(states):
            if seen is None:
                inner.append(None)
                continue
            key = screen if conditional else -1
            if key not in cascades:
                bit = 1 << screen
                rules = [(rank, n, v) for rank, n, v, on in matched if not conditional or on & bit]
                cascades[key] = _cascade([*own, *rules])
            style = cascades[key]
            passed = _inherit(seen, style, tag) if style else seen
            inner.append(None if _hides_all(tag, style, passed) else passed)
        return None if all(seen is None for seen in inner) else tuple(inner)


def _cascade(candidates: Sequence[Candidate]) -> Cascaded:
    """The declarations that apply to an element, the winner for each property: important
    first, then inline over stylesheet over attributes, then specificity, then order."""
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


# -- what an element hides ---------------------------------------------------------------


def _hides_all(tag: Tag, style: Cascaded, seen: _Seen) -> bool:
    """Whether `tag` and all it holds are out of sight (`seen`: what it passes down)."""
    if tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).strip().lower() == "true":
        return True
    if not style:
        return False
    if _keyword(style, "display") == "none" or _keyword(style, "mso-hide") == "all":
        return True
    if _keyword(style, "content-visibility") == "hidden" or seen.hides_all():
        return True
    font_px = seen.font_px
    return (
        _collapsed(style, font_px)
        or _clipped(style, font_px)
        or _clipped_path(style)
        or _off_screen(style, font_px)
    )


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


def _clipped_path(style: Cascaded) -> bool:
    """Clipped to nothing by `clip-path`: `inset(50%)` (the usual screen-reader-only box),
    insets of 100% across, a circle or an ellipse of no radius."""
    value = _tokens(style, "clip-path")
    if not value or value[0].type != "function":
        return False
    shape = value[0]
    arguments = [t for t in shape.arguments if t.type not in ("whitespace", "comment")]
    if shape.lower_name == "inset":
        insets: list[float] = []
        for token in arguments:
            if token.type == "ident":  # "round": the corners follow
                break
            insets.append(float(token.value) if token.type == "percentage" else math.nan)
        if not 1 <= len(insets) <= 4:
            return False
        top = insets[0]  # one to four values, as margins
        right = insets[1] if len(insets) > 1 else top
        bottom = insets[2] if len(insets) > 2 else top
        left = insets[3] if len(insets) > 3 else right
        return top + bottom >= 100 or left + right >= 100
    if shape.lower_name in ("circle", "ellipse"):
        radii = []
        for token in arguments:
            if token.type == "ident":  # "at": the centre follows; "closest-side"…
                break
            radii.append(_px(token, _ROOT_FONT_PX) if token.type != "percentage" else token.value)
        return bool(radii) and any(radius is not None and radius <= 0 for radius in radii)
    return False


def _off_screen(style: Cascaded, font_px: float) -> bool:
    """Placed far to the left or above the page, where nobody scrolls."""
    pushed = ["text-indent", "margin-left", "margin-top"]
    if _keyword(style, "position") in ("absolute", "fixed"):
        pushed += ["left", "top", "right"]
    return any((_length(style, name, font_px) or 0) <= -OFF_SCREEN_PX for name in pushed)


# -- what an element passes down ---------------------------------------------------------


def _inherit(seen: _Seen, style: Cascaded, tag: Tag) -> _Seen:
    visibility = _keyword(style, "visibility")
    color = style.get("color")
    font_px = _font_size(style, seen.font_px)
    opacity = _number(_tokens(style, "opacity"))
    filtered, blur = _filter(_tokens(style, "filter"), font_px)
    return replace(
        seen,
        visible=visibility == "visible" if visibility in _VISIBILITIES else seen.visible,
        font_px=font_px,
        color=(color[1].colour if color else None) or seen.color,
        background=_background(style, seen.background),
        alpha=seen.alpha * (1.0 if opacity is None else max(0.0, opacity)) * filtered,
        scale=seen.scale * _scale(style, tag),
        blur=seen.blur + blur,
    )


# -- transforms and filters ----------------------------------------------------------------

Matrix = tuple[float, float, float, float]  # (a, b, c, d): x' = a x + c y, y' = b x + d y
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0)
# Elements laid out inline unless a style says otherwise: a transform does not apply to them
_INLINE = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
     "label", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup",
     "time", "tt", "u", "var"}
)  # fmt: skip
_ANGLES = {"deg": math.pi / 180, "rad": 1.0, "grad": math.pi / 200, "turn": 2 * math.pi}


def _scale(style: Cascaded, tag: Tag) -> float:
    """The smallest factor by which the element's `transform`, `scale` and `rotate` shrink
    it on the screen (0 for `scale(0)` or `rotateX(90deg)`: seen edge-on), 1 for none."""
    if "transform" not in style and "scale" not in style and "rotate" not in style:
        return 1.0
    display = _keyword(style, "display")
    if display in ("inline", "contents") or (display is None and tag.name in _INLINE):
        return 1.0  # a transform does not apply to an inline box
    matrix = _IDENTITY
    for function in _tokens(style, "transform"):
        if function.type == "function":
            matrix = _times(matrix, _transform(function.lower_name, _arguments(function)))
    factors = [_amount(t) for t in _tokens(style, "scale")]
    if factors and all(f is not None for f in factors):
        sx = float(factors[0] or 0.0)
        sy = float(factors[1] if len(factors) > 1 and factors[1] is not None else sx)
        matrix = _times(matrix, (sx, 0.0, 0.0, sy))
    rotate = [t for t in _tokens(style, "rotate")]
    if len(rotate) == 2 and rotate[0].type == "ident":
        axis = rotate[0].lower_value
        matrix = _times(matrix, _transform(f"rotate{axis}", [_angle(rotate[1])]))
    return _smallest_factor(matrix)


def _transform(name: str, args: list[float | None]) -> Matrix:
    """The 2D part of one transform function (translations and perspective change no
    size)."""
    if not args or any(arg is None for arg in args):
        return _IDENTITY  # calc(), var(): not worked out
    v = [float(arg or 0.0) for arg in args]
    made = _TRANSFORMS.get((name, len(v))) or _TRANSFORMS.get((name, 0))
    return made(v) if made is not None else _IDENTITY  # rotate(), translate(): size stays


# (name, how many arguments or 0 for any): the 2D part of the function
_TRANSFORMS: dict[tuple[str, int], Callable[[list[float]], Matrix]] = {
    ("matrix", 6): lambda v: (v[0], v[1], v[2], v[3]),
    ("matrix3d", 16): lambda v: (v[0], v[1], v[4], v[5]),
    ("scale", 0): lambda v: (v[0], 0.0, 0.0, v[1] if len(v) > 1 else v[0]),
    ("scale3d", 3): lambda v: (v[0], 0.0, 0.0, v[1]),
    ("scalex", 1): lambda v: (v[0], 0.0, 0.0, 1.0),
    ("scaley", 1): lambda v: (1.0, 0.0, 0.0, v[0]),
    ("rotatex", 1): lambda v: (1.0, 0.0, 0.0, math.cos(v[0])),
    ("rotatey", 1): lambda v: (math.cos(v[0]), 0.0, 0.0, 1.0),
    ("rotate3d", 4): lambda v: _rotation3d(v[0], v[1], v[2], v[3]),
    ("skew", 0): lambda v: (1.0, math.tan(v[1]) if len(v) > 1 else 0.0, math.tan(v[0]), 1.0),
    ("skewx", 1): lambda v: (1.0, 0.0, math.tan(v[0]), 1.0),
    ("skewy", 1): lambda v: (1.0, math.tan(v[0]), 0.0, 1.0),
}


def _rotation3d(x: float, y: float, z: float, angle: float) -> Matrix:
    length = math.sqrt(x * x + y * y + z * z)
    if length == 0:
        return _IDENTITY
    x, y, z = x / length, y / length, z / length
    cos, sin = math.cos(angle), math.sin(angle)
    return (
        cos + (1 - cos) * x * x,
        (1 - cos) * x * y + sin * z,
        (1 - cos) * x * y - sin * z,
        cos + (1 - cos) * y * y,
    )


def _times(first: Matrix, then: Matrix) -> Matrix:
    a, b, c, d = first
    e, f, g, h = then
    return (a * e + c * f, b * e + d * f, a * g + c * h, b * g + d * h)


def _smallest_factor(matrix: Matrix) -> float:
    """The smaller singular value: how much the matrix shrinks the most shrunk direction."""
    a, b, c, d = matrix
    if not all(math.isfinite(x) for x in matrix):
        return 0.0  # a skew of 90 degrees
    total = a * a + b * b + c * c + d * d
    det = a * d - b * c
    root = math.sqrt(max(0.0, total * total - 4 * det * det))
    return math.sqrt(max(0.0, (total - root) / 2))


def _arguments(function: Any) -> list[float | None]:
    """A transform function's numbers: angles in radians, percentages as fractions."""
    found: list[float | None] = []
    for token in function.arguments:
        if token.type in ("whitespace", "comment") or (token.type == "literal"):
            continue
        if token.type == "dimension" and token.lower_unit in _ANGLES:
            found.append(_angle(token))
        elif token.type == "dimension":
            found.append(0.0)  # a length (translate, perspective): no size
        else:
            found.append(_amount(token))
    return found


def _amount(token: Any) -> float | None:
    if token.type == "number":
        return float(token.value)
    if token.type == "percentage":
        return float(token.value) / 100
    return None


def _angle(token: Any) -> float | None:
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type == "dimension" and token.lower_unit in _ANGLES:
        return float(token.value) * _ANGLES[token.lower_unit]
    return None


def _filter(tokens: list[Any], font_px: float) -> tuple[float, float]:
    """What a `filter` does to the element's text: (the opacity it multiplies by, the
    pixels of blur it adds)."""
    opacity, blur = 1.0, 0.0
    for function in tokens:
        if function.type != "function":
            continue
        arguments = [t for t in function.arguments if t.type not in ("whitespace", "comment")]
        if function.lower_name == "opacity":
            amount = _amount(arguments[0]) if len(arguments) == 1 else None
            opacity *= 1.0 if amount is None else min(1.0, max(0.0, amount))
        elif function.lower_name == "blur" and len(arguments) == 1:
            blur += _px(arguments[0], font_px) or 0.0
    return opacity, blur


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
