"""The rules of a page's `<style>` blocks, matched to its elements, on each kind of screen.

A rule applies on the screens its `@media` queries hold for (a phone, a tablet, a laptop, a
desktop: `SCREENS`), inside `@supports` conditions a browser meets and `@layer` blocks;
never for print alone, and never from a linked or `@import`ed stylesheet (nothing is
fetched). Its selectors are matched by soupsieve (Beautiful Soup's own CSS selector engine:
combinators, attribute selectors, `:not()`, `:is()`, `:has()`, `:nth-child()`); a selector
that only holds in a state (`:hover`, `:focus`) or names a pseudo-element (`::before`)
matches no element. Only the candidates of a rule are tried: the elements that carry its
subject's id, a class or an attribute it names, found through an index, so a big page with
a big stylesheet costs no walk of the page per rule; the simplest selectors (`.x`, `#y`,
`p.x.y`) are matched by the index alone. A page whose rules would try more candidates than
`MATCH_BUDGET` has the rest of its rules left aside.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import soupsieve
import tinycss2
from bs4 import BeautifulSoup
from bs4.element import Tag

Declaration = tuple[str, Any, int]  # (property, its value, 1 when !important)
Rank = tuple[int, ...]  # (important, origin, specificity…, order): the highest wins


@dataclass(frozen=True)
class Screen:
    """A kind of screen a page is read on, as a media query sees it."""

    width: float  # CSS pixels
    height: float
    dppx: float  # device pixels per CSS pixel
    hover: str  # "hover" or "none"
    pointer: str  # "fine" or "coarse"
    scheme: str  # prefers-color-scheme: "light" or "dark"


SCREENS = (
    Screen(390, 844, 3.0, "none", "coarse", "dark"),  # a phone
    Screen(820, 1180, 2.0, "none", "coarse", "light"),  # a tablet
    Screen(1366, 768, 1.0, "hover", "fine", "light"),  # a laptop
    Screen(1920, 1080, 1.0, "hover", "fine", "dark"),  # a desktop
)
ALL_SCREENS = (1 << len(SCREENS)) - 1  # a bit per screen: where a rule applies
MATCH_BUDGET = 100_000  # candidates soupsieve may try on one page, over all its rules
MAX_NESTING = 16  # @media in @media…; conditions in parentheses in parentheses…
_COMPOUND = re.compile(r"(?P<type>[a-zA-Z][\w-]*|\*)?(?P<rest>(?:[#.][\w-]+)*)")
_COMBINATORS = frozenset({">", "+", "~"})
_PSEUDO_ELEMENTS = frozenset({"before", "after", "first-line", "first-letter"})  # as `:x`
_TAKES_MOST_SPECIFIC = frozenset({"is", "not", "has", "matches", "-webkit-any", "-moz-any"})
_PX = {"px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0,
       "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6, "ex": 8.0, "ch": 8.0}  # fmt: skip
_DPPX = {"dppx": 1.0, "x": 1.0, "dpi": 1 / 96, "dpcm": 2.54 / 96}
_SELECTOR_ERRORS = (soupsieve.SelectorSyntaxError, NotImplementedError, ValueError, RecursionError)


@dataclass(frozen=True)
class Selector:
    """What the index looks an element up by: its name (None for any), id, classes and
    attribute names."""

    name: str | None
    id: str | None
    classes: tuple[str, ...]
    attributes: tuple[str, ...] = ()

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (int(self.id is not None), len(self.classes), int(self.name is not None))


@dataclass(frozen=True)
class Rule:
    exact: Selector | None  # a simple selector: the index alone matches it
    sieve: Any  # otherwise soupsieve's compiled selector…
    key: Selector  # …tried on the elements the index finds for its subject
    needs: Selector  # its classes and (as attributes) ids outside :not(), :is(): on the page
    specificity: tuple[int, int, int]
    declarations: list[Declaration]
    screens: int  # the bits of SCREENS it applies on


Matched = dict[int, list[tuple[Rank, str, Any, int]]]  # id(tag): (rank, name, value, screens)


class StyleSheet:
    """The rules of a page's `<style>` blocks (`declarations` turns a rule's body into the
    declarations that matter), matched to its elements by `matches`."""

    def __init__(self, soup: BeautifulSoup, declarations: Callable[[Any], list[Declaration]]):
        self.soup = soup
        self._declarations = declarations
        self.rules: list[Rule] = []
        for element in soup.find_all("style"):
            media = element.get("media")
            screens = ALL_SCREENS
            if isinstance(media, str) and media.strip():
                screens = media_screens(tinycss2.parse_component_value_list(media))
            if screens:
                css = tinycss2.parse_stylesheet(
                    element.get_text(), skip_comments=True, skip_whitespace=True
                )
                self._parse(css, screens, 0)
        # some rule applies on some screens only: each screen is looked at on its own
        self.conditional = any(rule.screens != ALL_SCREENS for rule in self.rules)

    def _parse(self, nodes: Sequence[Any], screens: int, depth: int) -> None:
        for node in nodes:
            if node.type == "qualified-rule":
                declarations = self._declarations(node.content)
                if declarations:
                    for tokens in split_commas(node.prelude):
                        rule = _rule(tokens, declarations, screens)
                        if rule is not None:
                            self.rules.append(rule)
            elif node.type == "at-rule" and node.content is not None and depth < MAX_NESTING:
                inner = screens & _at_rule_screens(node)
                if inner:
                    rules = tinycss2.parse_rule_list(
                        node.content, skip_comments=True, skip_whitespace=True
                    )
                    self._parse(rules, inner, depth + 1)

    def matches(self) -> Matched:
        """The stylesheet's declarations for each element they apply to (by `id()`), each
        with the screens it applies on."""
        matched: Matched = defaultdict(list)
        if not self.rules:
            return matched
        index = _Index(self.soup)
        budget = MATCH_BUDGET
        for order, rule in enumerate(self.rules):
            if rule.exact is not None:
                tags: Iterator[Tag] | list[Tag] = index.matching(rule.exact)
            elif not index.has_all(rule.needs):
                continue  # it names a class or id the page does not have: it matches nothing
            else:
                candidates = index.candidates(rule.key)
                if len(candidates) > budget:
                    continue  # the page has used up its matching: this rule is left aside
                budget -= len(candidates)
                try:
                    tags = rule.sieve.filter(candidates)
                except RecursionError:
                    continue
            for tag in tags:
                for name, value, important in rule.declarations:
                    rank = (important, 1, *rule.specificity, order)
                    matched[id(tag)].append((rank, name, value, rule.screens))
        return matched


def _rule(tokens: list[Any], declarations: list[Declaration], screens: int) -> Rule | None:
    tokens = _strip(tokens)
    text = tinycss2.serialize(tokens).strip()
    if not text:
        return None
    exact = _simple(text)
    if exact is not None:
        return Rule(exact, None, exact, exact, exact.specificity, declarations, screens)
    try:
        sieve = soupsieve.compile(text)
        specificity = _specificity(tokens, 0)
    except _SELECTOR_ERRORS:  # pseudo-elements, namespaces, what soupsieve does not know
        return None
    needs = _subject(tokens, whole=True)
    return Rule(None, sieve, _subject(tokens), needs, specificity, declarations, screens)


def _simple(text: str) -> Selector | None:
    """The simple selector `text` (`div.note#x`, `.a.b`, `*`), or None for anything else."""
    match = _COMPOUND.fullmatch(text)
    if match is None or not text:
        return None
    parts = re.findall(r"([#.])([\w-]+)", match.group("rest"))
    ids = [name for mark, name in parts if mark == "#"]
    if len(ids) > 1:
        return None  # two ids: left to soupsieve (it matches nothing)
    name = (match.group("type") or "*").lower()
    return Selector(
        None if name == "*" else name,
        ids[0] if ids else None,
        tuple(name for mark, name in parts if mark == "."),
    )


def _subject(tokens: list[Any], whole: bool = False) -> Selector:
    """What the element a complex selector applies to (its last compound) must carry: its
    name, id, classes and attribute names, as far as they can be read without matching.
    `whole`: the ids and classes of all its compounds (outside `:not()`, `:is()`…), which
    elements of the page must carry for it to match at all."""
    start = 0
    for i, token in enumerate(tokens):
        if token.type == "whitespace" or (token.type == "literal" and token.value in _COMBINATORS):
            start = 0 if whole else i + 1
    subject = tokens[start:]
    if any(_literal(token, "|") for token in subject):
        return Selector(None, None, ())  # a namespace: no key, every element is tried
    name = _ident(subject[0]) if subject and not whole else None
    ids = [token.value for token in subject if token.type == "hash"]
    classes: list[str] = []
    attributes: list[str] = []
    i = 0
    while i < len(subject):
        token = subject[i]
        after = subject[i + 1] if i + 1 < len(subject) else None
        if _literal(token, ".") and after is not None and after.type == "ident":
            classes.append(after.value)
            i += 1
        elif _literal(token, ":"):
            i += 2 if after is not None and _literal(after, ":") else 1  # skip its name
        elif token.type == "[] block":
            inside = _words(token.content)
            if inside and inside[0].type == "ident":
                attributes.append(inside[0].lower_value)
        i += 1
    if whole:  # every id: `ids` of the Selector is one, its classes and attributes many
        return Selector(None, None, tuple(classes), tuple(ids))
    return Selector(name, ids[0] if ids else None, tuple(classes), tuple(attributes))


def _specificity(tokens: list[Any], depth: int) -> tuple[int, int, int]:
    """(ids, classes and attributes and pseudo-classes, names and pseudo-elements)."""
    if depth > MAX_NESTING:
        raise RecursionError("selector nested too deeply")
    a = b = c = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "hash":
            a += 1
        elif token.type == "[] block" or _literal(token, "."):
            b += 1
            i += int(_literal(token, "."))  # the class's name
        elif _literal(token, ":") and i + 1 < len(tokens):
            i += 1
            if _literal(tokens[i], ":"):  # a pseudo-element
                c += 1
                i += 1
            else:
                da, db, dc = _pseudo_class(tokens[i], depth)
                a, b, c = a + da, b + db, c + dc
        elif token.type == "ident":
            c += 1
        i += 1
    return (a, b, c)


def _pseudo_class(token: Any, depth: int) -> tuple[int, int, int]:
    """`:is()`, `:not()` and `:has()` count as their most specific argument, `:where()` as
    nothing, `:before` (the old spelling) as a pseudo-element, others as a class."""
    if token.type == "function" and token.lower_name in _TAKES_MOST_SPECIFIC:
        parts = split_commas(token.arguments)
        return max((_specificity(_strip(part), depth + 1) for part in parts), default=(0, 0, 0))
    if token.type == "function" and token.lower_name == "where":
        return (0, 0, 0)
    if _ident(token) in _PSEUDO_ELEMENTS:
        return (0, 0, 1)
    return (0, 1, 0)


class _Index:
    """A page's elements by id, class, attribute and name: a rule looks only at its
    candidates."""

    def __init__(self, soup: BeautifulSoup) -> None:
        self.all: list[Tag] = soup.find_all(True)
        self.ids: dict[str, list[Tag]] = defaultdict(list)
        self.classes: dict[str, list[Tag]] = defaultdict(list)
        self.attributes: dict[str, list[Tag]] = defaultdict(list)
        self.names: dict[str, list[Tag]] = defaultdict(list)
        for tag in self.all:
            self.names[tag.name].append(tag)
            if isinstance(tag.get("id"), str):
                self.ids[str(tag.get("id"))].append(tag)
            for name in tag.get_attribute_list("class"):
                if name:
                    self.classes[name].append(tag)
            for attribute in tag.attrs:
                self.attributes[attribute.lower()].append(tag)

    def candidates(self, key: Selector) -> list[Tag]:
        """The elements that carry all `key` names (the fewest of those that carry one)."""
        options = [self.classes.get(name, []) for name in key.classes]
        options += [self.attributes.get(name, []) for name in key.attributes]
        if key.id is not None:
            options.append(self.ids.get(key.id, []))
        if key.name is not None:
            options.append(self.names.get(key.name, []))
        return min(options, key=len) if options else self.all

    def has_all(self, needs: Selector) -> bool:
        """Whether some elements of the page carry each class of `needs` and each id of its
        `attributes` (`_subject(…, whole=True)`)."""
        return all(name in self.classes for name in needs.classes) and all(
            name in self.ids for name in needs.attributes
        )

    def matching(self, selector: Selector) -> Iterator[Tag]:
        """The elements a simple selector matches."""
        for tag in self.candidates(selector):
            if (
                (selector.name is None or tag.name.lower() == selector.name)
                and (selector.id is None or tag.get("id") == selector.id)
                and set(selector.classes) <= set(tag.get_attribute_list("class"))
            ):
                yield tag


# -- @media, @supports -------------------------------------------------------------------


def _at_rule_screens(node: Any) -> int:
    name = node.lower_at_keyword
    if name == "media":
        return media_screens(node.prelude)
    if name == "supports":
        return ALL_SCREENS if _condition(_words(node.prelude), _supported, 0) else 0
    if name == "layer":
        return ALL_SCREENS
    return 0  # @container, @scope, @font-face, @keyframes…: nothing that applies here


def media_screens(tokens: list[Any]) -> int:
    """The screens a media query list holds on (bits of SCREENS); unknown features hold
    nowhere."""
    queries = split_commas(tokens)
    if not _words(tokens):
        return ALL_SCREENS
    screens = 0
    for bit, screen in enumerate(SCREENS):
        if any(_query(_words(query), screen) for query in queries):
            screens |= 1 << bit
    return screens


Truth = bool | None  # None: unknown (the whole query then does not hold)


def _query(words: list[Any], screen: Screen) -> bool:
    if not words:
        return False
    negate = False
    if _ident(words[0]) in ("not", "only") and len(words) > 1 and words[1].type == "ident":
        negate = _ident(words[0]) == "not"
        words = words[1:]
    if words[0].type == "ident" and _ident(words[0]) != "not":
        shown: Truth = _ident(words[0]) in ("all", "screen")
        if len(words) > 1:
            if _ident(words[1]) != "and":
                return False
            shown = _and([shown, _condition(words[2:], lambda w: _feature(w, screen), 0)])
        result = _not(shown) if negate else shown
    else:
        result = _condition(words, lambda w: _feature(w, screen), 0)
    return result is True


def _condition(words: list[Any], test: Callable[[list[Any]], Truth], depth: int) -> Truth:
    """`(a) and (b)`, `(a) or (b)`, `not (a)`: each part in parentheses, `test`ed."""
    if not words or depth > MAX_NESTING:
        return None
    if _ident(words[0]) == "not":
        return _not(_in_parens(words[1], test, depth)) if len(words) == 2 else None
    values = [_in_parens(words[0], test, depth)]
    joins = set()
    for i in range(1, len(words), 2):
        if _ident(words[i]) not in ("and", "or") or i + 1 >= len(words):
            return None
        joins.add(_ident(words[i]))
        values.append(_in_parens(words[i + 1], test, depth))
    if len(joins) > 1:
        return None  # `and` and `or` mixed without parentheses: invalid
    return _any(values) if joins == {"or"} else _and(values)


def _in_parens(token: Any, test: Callable[[list[Any]], Truth], depth: int) -> Truth:
    if token.type == "function":
        return True if token.lower_name == "selector" else None  # @supports selector(…)
    if token.type != "() block":
        return None
    inside = _words(token.content)
    if inside and (inside[0].type == "() block" or _ident(inside[0]) == "not"):
        return _condition(inside, test, depth + 1)
    return test(inside)


def _supported(words: list[Any]) -> Truth:
    """An `@supports` declaration: browsers take the properties that hide text."""
    declaration = len(words) >= 2 and words[0].type == "ident" and _literal(words[1], ":")
    return True if declaration else None


def _feature(words: list[Any], screen: Screen) -> Truth:
    """One media feature: `(min-width: 600px)`, `(hover)`, `(400px <= width < 700px)`."""
    if len(words) == 1 and words[0].type == "ident":
        value = _screen_value(words[0].lower_value, screen)
        if value is None:
            return None
        return value != "none" if isinstance(value, str) else value != 0
    if len(words) >= 3 and words[0].type == "ident" and _literal(words[1], ":"):
        name = words[0].lower_value.removeprefix("-webkit-")
        prefix = name[:4] if name.startswith(("min-", "max-")) else ""
        name = name.removeprefix(prefix)
        value = _screen_value(name, screen)
        wanted = _value(words[2:])
        if value is None or wanted is None:
            return None
        if isinstance(value, str) or isinstance(wanted, str):
            return None if prefix else value == wanted
        if prefix == "min-":
            return value >= wanted - 1e-9
        if prefix == "max-":
            return value <= wanted + 1e-9
        return math.isclose(value, wanted)
    return _range(words, screen)


def _range(words: list[Any], screen: Screen) -> Truth:
    """`(width >= 600px)`, `(400px < width <= 700px)`."""
    parts: list[Any] = []
    for token in words:
        if token.type == "literal" and token.value in ("<", ">", "=", "<=", ">="):
            if parts and isinstance(parts[-1], str) and parts[-1] in ("<", ">"):
                parts[-1] += token.value  # "<" "=" as two tokens
            else:
                parts.append(token.value)
        else:
            parts.append(token)
    if len(parts) not in (3, 5) or not all(isinstance(p, str) for p in parts[1::2]):
        return None
    values: list[float | None] = []
    for part in parts[0::2]:
        if part.type == "ident":
            found = _screen_value(part.lower_value, screen)
            values.append(found if isinstance(found, float) else None)
        else:
            found = _value([part])
            values.append(found if isinstance(found, float) else None)
    results: list[Truth] = []
    for (left, right), op in zip(itertools.pairwise(values), parts[1::2], strict=True):
        if left is None or right is None:
            return None
        results.append(_compare(left, op, right))
    return _and(results)


def _compare(left: float, op: str, right: float) -> bool:
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right + 1e-9
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right - 1e-9
    return math.isclose(left, right)


def _screen_value(name: str, screen: Screen) -> float | str | None:
    found = _FEATURES.get(name.removeprefix("device-"))
    return found(screen) if found is not None else None


_FEATURES: dict[str, Callable[[Screen], float | str]] = {
    "width": lambda screen: float(screen.width),
    "height": lambda screen: float(screen.height),
    "aspect-ratio": lambda screen: screen.width / screen.height,
    "resolution": lambda screen: screen.dppx,
    "pixel-ratio": lambda screen: screen.dppx,
    "orientation": lambda screen: "portrait" if screen.height >= screen.width else "landscape",
    "hover": lambda screen: screen.hover,
    "any-hover": lambda screen: screen.hover,
    "pointer": lambda screen: screen.pointer,
    "any-pointer": lambda screen: screen.pointer,
    "prefers-color-scheme": lambda screen: screen.scheme,
    "color": lambda screen: 8.0,
    "color-index": lambda screen: 0.0,
    "monochrome": lambda screen: 0.0,
    "grid": lambda screen: 0.0,
}


def _value(words: list[Any]) -> float | str | None:
    """A media feature's value: a length (px), a resolution (dppx), a number, a ratio or a
    keyword."""
    if len(words) == 3 and _literal(words[1], "/"):
        top, bottom = _value(words[:1]), _value(words[2:])
        if isinstance(top, float) and isinstance(bottom, float) and bottom:
            return top / bottom
        return None
    if len(words) != 1:
        return None
    token = words[0]
    if token.type == "ident":
        return str(token.lower_value)
    if token.type == "number":
        return float(token.value)
    if token.type == "dimension":
        factor = _PX.get(token.lower_unit) or _DPPX.get(token.lower_unit)
        return float(token.value) * factor if factor is not None else None
    return None


def _not(value: Truth) -> Truth:
    return None if value is None else not value


def _and(values: list[Truth]) -> Truth:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _any(values: list[Truth]) -> Truth:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


# -- tokens --------------------------------------------------------------------------------


def split_commas(tokens: Sequence[Any]) -> list[list[Any]]:
    """`tokens` cut at their top-level commas (not those in `:is(a, b)` or `[x="a,b"]`)."""
    parts: list[list[Any]] = [[]]
    for token in tokens:
        if _literal(token, ","):
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _strip(tokens: list[Any]) -> list[Any]:
    start, end = 0, len(tokens)
    while start < end and tokens[start].type in ("whitespace", "comment"):
        start += 1
    while end > start and tokens[end - 1].type in ("whitespace", "comment"):
        end -= 1
    return tokens[start:end]


def _words(tokens: Sequence[Any]) -> list[Any]:
    return [t for t in tokens if t.type not in ("whitespace", "comment")]


def _literal(token: Any, value: str) -> bool:
    return bool(token.type == "literal" and token.value == value)


def _ident(token: Any) -> str | None:
    return str(token.lower_value) if token.type == "ident" else None
