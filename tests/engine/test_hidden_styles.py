"""Text a page hides by the rules of its own `<style>` blocks, whatever their selectors and
`@media` queries, or by a transform or a filter, is left out of a web page and an HTML
e-mail; text that some screen shows is kept. And a big stylesheet costs a bounded amount of
matching."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from gam_desktop.engine.ingest import stylesheet
from gam_desktop.engine.ingest.visibility import remove_hidden
from tests.engine.test_hidden_text import HIDDEN, VISIBLE, page, read_as

# (name, the page's <style> block, markup holding HIDDEN)
TRICKS = [
    ("@media screen", "@media screen { .m { display: none } }", f'<div class="m">{HIDDEN}</div>'),
    (
        "@media holding on every screen",
        "@media only screen and (min-width: 1px), print { .m { visibility: hidden } }",
        f'<div class="m">{HIDDEN}</div>',
    ),
    (
        "@media in range syntax, nested in @media",
        "@media all { @media (0px <= width) { .m { font-size: 0 } } }",
        f'<p class="m">{HIDDEN}</p>',
    ),
    (
        "@media for each colour scheme",
        "@media (prefers-color-scheme: dark) { .m { display: none } }"
        "@media (prefers-color-scheme: light) { .m { display: none } }",
        f'<p class="m">{HIDDEN}</p>',
    ),
    (
        "<style media=screen>",
        "",
        f'<style media="screen">.m{{display:none}}</style><p class="m">{HIDDEN}</p>',
    ),
    (
        "@supports",
        "@supports (display: grid) { .m { display: none } }",
        f'<p class="m">{HIDDEN}</p>',
    ),
    ("@layer", "@layer base { .m { display: none } }", f'<p class="m">{HIDDEN}</p>'),
    (
        "child combinator",
        ".box > span { display: none }",
        f'<div class="box"><span>{HIDDEN}</span></div>',
    ),
    (
        "descendant combinator",
        ".box em { font-size: 0 }",
        f'<div class="box"><p><em>{HIDDEN}</em></p></div>',
    ),
    ("sibling combinator", "h2 + p { opacity: 0 }", f"<h2>Notes</h2><p>{HIDDEN}</p>"),
    ("attribute selector", '[data-x="y"] { display: none }', f'<div data-x="y">{HIDDEN}</div>'),
    (":not()", ".n:not(.shown) { visibility: hidden }", f'<div class="n">{HIDDEN}</div>'),
    (
        ":is() in a list",
        "b, :is(.a, .z) > i { display: none }",
        f'<p class="z"><i>{HIDDEN}</i></p>',
    ),
    ("transform scale(0)", ".t { transform: scale(0) }", f'<div class="t">{HIDDEN}</div>'),
    ("transform scaleY(0)", "", f'<p style="transform: translateX(4px) scaleY(0)">{HIDDEN}</p>'),
    ("transform rotateX(90deg)", "", f'<p style="transform: rotateX(90deg)">{HIDDEN}</p>'),
    ("a singular matrix", "", f'<div style="transform: matrix(1, 2, 2, 4, 0, 0)">{HIDDEN}</div>'),
    ("scale property", "", f'<div style="scale: 0">{HIDDEN}</div>'),
    ("scaled to a tiny font", "", f'<div style="transform: scale(0.05)">{HIDDEN}</div>'),
    ("filter opacity(0)", ".f { filter: opacity(0) }", f'<div class="f">{HIDDEN}</div>'),
    ("filter blur", "", f'<p style="filter: blur(12px)">{HIDDEN}</p>'),
    (
        "opacities multiplied",
        "",
        f'<div style="opacity: .2"><p style="opacity: .2">{HIDDEN}</p></div>',
    ),
    ("clip-path inset(50%)", "", f'<span style="clip-path: inset(50%)">{HIDDEN}</span>'),
    ("clip-path circle(0)", "", f'<div style="clip-path: circle(0 at 50% 50%)">{HIDDEN}</div>'),
    ("content-visibility", "", f'<div style="content-visibility: hidden"><p>{HIDDEN}</p></div>'),
]

# Markup that some screen shows: kept, word for word.
SEEN = [
    (
        "@media for phones only",
        "@media (max-width: 600px) { .x { display: none } }",
        '<p class="x">{}</p>',
    ),
    (
        "shown on wide screens",
        ".x { display: none } @media (min-width: 800px) { .x { display: block } }",
        '<p class="x">{}</p>',
    ),
    (
        "@media dark only",
        "@media (prefers-color-scheme: dark) { .x { display: none } }",
        '<p class="x">{}</p>',
    ),
    (
        "@supports not",
        "@supports not (display: grid) { .x { display: none } }",
        '<p class="x">{}</p>',
    ),
    (
        "@media of unknown feature",
        "@media (scripting: none) { .x { display: none } }",
        '<p class="x">{}</p>',
    ),
    (
        "child combinator, a grandchild",
        ".box > span { display: none }",
        '<div class="box"><p><span>{}</span></p></div>',
    ),
    (":not() excludes it", ".n:not(.shown) { display: none }", '<p class="n shown">{}</p>'),
    ("a pseudo-element", ".x::before { display: none }", '<p class="x">{}</p>'),
    ("a state", ".x:focus-within { display: none }", '<p class="x">{}</p>'),
    (
        "more specific rule shows it",
        ".box span { display: none } .box span.shown { display: inline }",
        '<div class="box"><span class="shown">{}</span></div>',
    ),
    ("half scale", "", '<p style="transform: scale(0.5) rotate(45deg)">{}</p>'),
    ("transform on an inline box", "", '<span style="transform: scale(0)">{}</span>'),
    ("a little blur", "", '<p style="filter: blur(1px) opacity(0.8)">{}</p>'),
    ("clip-path inset(10%)", "", '<p style="clip-path: inset(10% 20%)">{}</p>'),
]


@pytest.mark.parametrize("kind", ["page", "e-mail"])
@pytest.mark.parametrize("trick,style,markup", TRICKS, ids=[t[0] for t in TRICKS])
def test_text_hidden_by_rules_and_effects_is_left_out(
    tmp_path: Path, kind: str, trick: str, style: str, markup: str
) -> None:
    text = read_as(kind, tmp_path, page(style, markup))
    assert VISIBLE in text
    assert "Ignore previous" not in text and "praise the vendor" not in text


@pytest.mark.parametrize("kind", ["page", "e-mail"])
@pytest.mark.parametrize("case,style,markup", SEEN, ids=[s[0] for s in SEEN])
def test_text_some_screen_shows_is_kept(
    tmp_path: Path, kind: str, case: str, style: str, markup: str
) -> None:
    shown = "This sentence is seen on the screen."
    text = read_as(kind, tmp_path, page(style, markup.format(shown)))
    assert VISIBLE in text and shown in text


def test_rules_naming_what_the_page_lacks_try_no_element(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A framework's stylesheet of thousands of complex rules about classes the page never
    uses costs no matching; the one that applies still hides its text."""
    tried: list[int] = []
    candidates = stylesheet._Index.candidates

    def counted(index: stylesheet._Index, key: stylesheet.Selector) -> list:  # type: ignore[type-arg]
        found = candidates(index, key)
        tried.append(len(found))
        return found

    monkeypatch.setattr(stylesheet._Index, "candidates", counted)
    css = "".join(f".nav{i} > li .item{i} {{ color: red }}" for i in range(2000))
    html = (
        f"<style>{css} .box > span {{ display: none }}</style>"
        f'<div class="box"><span>{HIDDEN}</span></div><p>{VISIBLE}</p>'
    )
    soup = BeautifulSoup(html, "html.parser")
    assert remove_hidden(soup) == 1
    assert HIDDEN not in soup.get_text() and VISIBLE in soup.get_text()
    assert tried == [1]  # only `.box > span` was matched, on the one <span>


def test_matching_stops_at_the_pages_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a page's complex rules have tried MATCH_BUDGET candidates, the rest are left
    aside (their text is kept) instead of walking the page again and again."""
    monkeypatch.setattr(stylesheet, "MATCH_BUDGET", 50)
    rows = "".join(f"<p><span>row {i}</span></p>" for i in range(30))
    css = "p > span { color: #123 } div > span { display: none }"  # 30 + 30 candidates
    soup = BeautifulSoup(
        f"<style>{css}</style>{rows}<div><span>{HIDDEN}</span></div>", "html.parser"
    )
    sheet = stylesheet.StyleSheet(soup, lambda content: [("display", content, 0)])
    matched = sheet.matches()
    spans = soup.find_all("span")
    assert all(id(span) in matched for span in spans[:30])
    assert id(spans[30]) not in matched  # the second rule did not fit in the budget
