"""One front-matter reader (issue 40): `store.markdown` alone knows where front matter
starts and ends and how a value is read; the corpus, search, embeddings, recall and
research read it through `split_front`, `body_of`, `front_of` and `front_value`, which
agree with `parse_memory` on every file: none, one not closed, a "---" rule in the body,
CRLF line endings, broken YAML, an alias bomb."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from gam_desktop.engine.answering import recall
from gam_desktop.engine.research.steps import _line_span
from gam_desktop.engine.retrieval.corpus import document_of, title_of
from gam_desktop.engine.retrieval.vectors import pieces_of
from gam_desktop.engine.retrieval.words import snippet
from gam_desktop.engine.store.markdown import (
    body_of,
    front_of,
    front_value,
    parse_memory,
    render_memory,
    split_front,
)

MEMORY = "---\ntitle: Borealis escalation\nsource: borealis.pdf\n---\n\nAfter 45 minutes.\n"
RULED = "---\ntitle: Ruled\n---\n\nBefore the rule.\n\n---\n\nAfter the rule.\n"
CRLF = "---\r\ntitle: Crlf title\r\nsource: c.pdf\r\n---\r\n\r\nThe body.\r\n"
UNCLOSED = "---\ntitle: Open\nsource: o.pdf\n\nNo line closes it.\n"
BROKEN = "---\ntitle: Broken\ntldr: a: b\n---\n\nThe body.\n"  # `a: b` is not valid YAML
NONE = "Just a note.\n\ntitle: not front matter\n"


def alias_bomb(levels: int = 6) -> str:
    """Nine-fold nested aliases (600 bytes that stand for half a million strings)."""
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    names = "abcdefghijklmnop"
    for before, name in itertools.pairwise(names[:levels]):
        text += f"{name}: &{name} [" + ",".join([f"*{before}"] * 9) + "]\n"
    last = names[levels - 1]
    return f"---\n{text}title: *{last}\nsource: *{last}\n---\n\nA note.\n"


ALL = [MEMORY, RULED, CRLF, UNCLOSED, BROKEN, NONE, alias_bomb(), "---\n---\n\nEmpty.\n", ""]


def test_split_front_cuts_at_the_first_closing_line() -> None:
    assert split_front(MEMORY) == (
        "\ntitle: Borealis escalation\nsource: borealis.pdf",
        "\n\nAfter 45 minutes.\n",
    )
    front, body = split_front(RULED) or ("", "")
    assert front == "\ntitle: Ruled" and body == "\n\nBefore the rule.\n\n---\n\nAfter the rule.\n"
    assert split_front("---\n---\n\nEmpty.\n") == ("", "\n\nEmpty.\n")


def test_split_front_keeps_crlf_and_knows_no_front_matter() -> None:
    front, body = split_front(CRLF) or ("", "")
    assert front == "\r\ntitle: Crlf title\r\nsource: c.pdf\r" and body == "\r\n\r\nThe body.\r\n"
    assert split_front(NONE) is None
    assert split_front(UNCLOSED) is None  # not closed: the whole text is the body
    assert split_front("") is None


@pytest.mark.parametrize("text", ALL)
def test_body_of_and_front_of_are_parse_memorys(text: str) -> None:
    parsed = parse_memory(text)
    assert body_of(text) == parsed.body
    assert front_of(text) == parsed.front


def test_body_of_keeps_a_rule_and_strips_crlf() -> None:
    assert body_of(RULED) == "Before the rule.\n\n---\n\nAfter the rule."
    assert body_of(CRLF) == "The body."
    assert body_of(UNCLOSED) == UNCLOSED
    assert body_of(BROKEN) == "The body."


def test_front_of_reads_the_yaml_and_refuses_what_it_cannot() -> None:
    assert front_of(MEMORY) == {"title": "Borealis escalation", "source": "borealis.pdf"}
    assert front_of(CRLF) == {"title": "Crlf title", "source": "c.pdf"}
    assert front_of(BROKEN) == front_of(UNCLOSED) == front_of(NONE) == {}
    assert front_of(alias_bomb()) == {}
    assert front_of("---\n- a list\n---\n\nBody.\n") == {}


def test_front_value_reads_a_line_as_yaml_would() -> None:
    assert front_value(MEMORY, "title") == "Borealis escalation"
    assert front_value(MEMORY, "source") == "borealis.pdf"
    assert front_value("---\ntitle: 'It''s here'  \n---\n", "title") == "It's here"
    assert front_value('---\ntitle: "Double"\n---\n', "title") == "Double"
    assert front_value('---\ntitle: "Tab\\there \\"q\\""\n---\n', "title") == 'Tab\there "q"'
    assert front_value("---\nspan: [0, 120]\n---\n", "span") == "[0, 120]"  # as written
    assert front_value(CRLF, "title") == "Crlf title"  # no "\r"
    assert front_value(CRLF, "source") == "c.pdf"


def test_front_value_reads_only_the_front_matters_top_level_lines() -> None:
    assert front_value(MEMORY, "tldr") is None
    assert front_value("---\ntitle: a\n---\n\nsource: in the body\n", "source") is None
    assert front_value("---\nmeta:\n  title: nested\n---\n", "title") is None
    assert front_value("---\nsource_hash: abc\n---\n", "source") is None
    assert front_value(NONE, "title") is None
    assert front_value(UNCLOSED, "title") is None  # as parse_memory: no front matter
    assert front_value("---\ntitle:\n---\n", "title") is None
    assert front_value("---\ntitle: ''\n---\n", "title") is None
    assert front_value("---\npages:\n  - 1\n  - 2\n---\n", "pages") is None  # not text


def test_front_value_reads_a_line_of_broken_front_matter() -> None:
    """Read without the YAML, a title survives a broken line elsewhere (the corpus and
    the find box name the file by it, as they always did)."""
    assert front_value(BROKEN, "title") == "Broken"


def test_front_value_of_an_alias_is_the_bounded_loaders() -> None:
    assert front_value("---\nname: &n Ada\ntitle: *n\n---\n", "title") == "Ada"
    assert front_value("---\nname: &n Ada\ntitle: *n\n---\n", "name") == "Ada"
    bomb = alias_bomb()
    assert front_value(bomb, "title") is None and front_value(bomb, "source") is None


@pytest.mark.parametrize(
    "title",
    [
        "Borealis escalation",
        "It's a title: with a colon",
        "#hash and [bracket",
        "- a dash",
        "123",
        "yes",
        "Ünïcödé title — with a dash",
        "trailing space ",
        "Tab\there",
        " ".join(["Word"] * 30),  # folded by YAML past 100 characters
        "line one\nline two",
    ],
)
def test_front_value_reads_every_title_render_memory_writes(title: str) -> None:
    text = render_memory({"title": title, "index": 1, "source": "a b.pdf"}, "Body.")
    assert front_value(text, "title") == title == parse_memory(text).front["title"]
    assert front_value(text, "source") == "a b.pdf"
    crlf = text.replace("\n", "\r\n")
    assert front_value(crlf, "title") == parse_memory(crlf).front["title"]


# -- the callers read front matter through it ---------------------------------------


def test_titles_and_sources_of_crlf_files_have_no_carriage_return() -> None:
    assert title_of("a/crlf.md", CRLF) == "Crlf title"
    assert document_of(CRLF) == "c.pdf"
    assert "\r" not in recall.personal_label("conversations/x/y.md", CRLF)


def test_a_long_title_is_read_whole() -> None:
    title = " ".join(["Word"] * 30)
    text = render_memory({"title": title, "index": 1}, "Body.")
    assert title_of("a/long.md", text) == title
    assert pieces_of("a/long.md", text) == [f"{title} Body."]


def test_titles_without_readable_front_matter_are_the_file_name() -> None:
    assert title_of("a/bomb.md", alias_bomb()) == "bomb"
    assert title_of("a/open.md", UNCLOSED) == "open"
    assert title_of("a/none.md", NONE) == "none"
    assert title_of("a/broken.md", BROKEN) == "Broken"
    assert title_of("a/README.md", "# The heading\n\nText.\n") == "The heading"


def test_a_snippet_keeps_the_body_before_a_rule() -> None:
    assert snippet(RULED, ["before"]) == "Before the rule. --- After the rule."
    assert snippet(CRLF, ["body"]) == "The body."


def test_times_are_read_from_the_front_matter_only() -> None:
    fact = (
        "---\nstatement: Tea.\ncreated: '2026-11-01T09:00:00+00:00'\r\n"
        "updated: not a time\n---\n\nupdated: '2020-01-01T00:00:00+00:00'\n"
    )
    assert recall.time_of(fact) == datetime(2026, 11, 1, 9, tzinfo=UTC)
    assert recall.started_at("facts/a/b.md", fact) == datetime(2026, 11, 1, 9, tzinfo=UTC)
    assert recall.time_of(UNCLOSED.replace("title:", "updated: '2026-01-01'\ntitle:")) is None
    assert recall.personal_passage("facts/a/b.md", CRLF, None) == "The body."


def test_a_research_excerpt_starts_after_the_front_matter() -> None:
    assert _line_span(RULED, {"after"}) == (9, 9)
    assert _line_span(RULED, {"nothing"}) == (5, 9)  # the body: the rule is its own
    assert _line_span(CRLF, {"nothing"}) == (6, 6)
    assert _line_span(NONE, {"nothing"}) == (1, 3)
