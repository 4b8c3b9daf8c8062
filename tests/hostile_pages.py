"""Hostile web pages and books (issue 36), built for the bounded-reading tests
(tests/engine/test_bounded_reading.py) and the benchmark that measures them
(tests/benchmarks/bench_hostile_html.py): a page nested deep, a page of many empty
elements, an old page whose paragraphs never close, an EPUB of chosen chapters and spine."""

from __future__ import annotations

import zipfile
from pathlib import Path


def deep_page(depth: int, text: str = "deep") -> str:
    """`text` inside `depth` nested <div>s, inside <html><body>."""
    return "<html><body>" + "<div>" * depth + text + "</div>" * depth


def empty_elements_page(count: int) -> str:
    """`count` empty <i></i> elements, one after the other."""
    return "<html><body>" + "<i></i>" * count + "</body></html>"


def old_page(paragraphs: int, items: int = 0, rows: int = 0) -> str:
    """An old page as HTML 4 allows it: `paragraphs` <p>, then a list of `items` <li> and a
    table of `rows` rows of two cells, none of them closed."""
    text = "".join(f"<p>Paragraph {i} about otters.\n" for i in range(paragraphs))
    if items:
        text += "<ul>" + "".join(f"<li>item {i}\n" for i in range(items)) + "</ul>"
    if rows:
        text += "<table>" + "".join(f"<tr><td>a{i}<td>b{i}\n" for i in range(rows)) + "</table>"
    return f"<html><body>{text}"


def epub(
    path: Path, chapters: dict[str, str], spine: list[str] | None = None, padding: int = 0
) -> Path:
    """An EPUB of `chapters` (name: XHTML) read in the order of `spine` (the chapters'
    names, or any path), its package document padded with `padding` metadata elements."""
    spine = list(chapters) if spine is None else spine
    ids = {name: f"i{n}" for n, name in enumerate(dict.fromkeys(spine))}
    items = "".join(
        f'<item id="{ids[name]}" href="{name}" media-type="application/xhtml+xml"/>' for name in ids
    )
    refs = "".join(f'<itemref idref="{ids[name]}"/>' for name in spine)
    pad = "<meta/>" * padding
    opf = (
        '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf"'
        ' version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>'
        f"Book</dc:title>{pad}</metadata><manifest>{items}</manifest><spine>{refs}</spine>"
        "</package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf"'
        ' media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", container)
        book.writestr("OEBPS/content.opf", opf)
        for name, html in chapters.items():
            book.writestr(f"OEBPS/{name}", html)
    return path
