"""Generated test documents with known topics, facts and structure."""

from __future__ import annotations

from pathlib import Path

TOPIC_FACTS = {
    "python": "Python is an interpreted programming language. The Python GIL prevents true "
    "multi-threading in CPython. Python code uses indentation for blocks.",
    "javascript": "JavaScript runs in every web browser. JavaScript promises handle "
    "asynchronous work. JavaScript closures capture variables.",
    "rust": "Rust has a borrow checker. Rust ownership rules prevent data races at compile "
    "time. Rust compiles to native machine code.",
    "haskell": "Haskell is a pure functional language. Haskell uses lazy evaluation by "
    "default. Haskell type classes describe behaviour.",
    "docker": "Docker packages applications into containers. Docker images are built in "
    "layers. Docker compose runs several containers together.",
    "git": "Git records snapshots of a project. Git branches are cheap pointers to commits. "
    "Git merges combine the histories of branches.",
}
FILLER = (
    "This section adds more detail with examples, caveats and history so that the "
    "passage reads like a real chapter of a technical book. "
)


def section(topic: str, number: int, repeats: int = 3) -> str:
    facts = TOPIC_FACTS[topic]
    body = " ".join([facts, f"Detail {number} concerns {topic} in practice.", FILLER * repeats])
    return f"# {topic.title()} notes {number}\n\n{body}\n"


def topic_document(counts: dict[str, int], repeats: int = 3) -> str:
    """Sections with headers, `counts[topic]` sections per topic, grouped by topic."""
    return "\n".join(section(t, i, repeats) for t, n in counts.items() for i in range(n))


def words_document(words: int) -> str:
    """About `words` words of plain paragraphs on machine learning, no headers."""
    sentence = (
        "Neural networks learn weights by gradient descent on a loss function over "
        "many training examples. "
    )
    per_paragraph = 8
    paragraphs = max(1, words // (len(sentence.split()) * per_paragraph))
    return "\n\n".join(f"Paragraph {i}. " + sentence * per_paragraph for i in range(paragraphs))


def make_pdf(path: Path, pages: list[str], image: Path | None = None) -> Path:
    """A PDF at `path` with one page per text of `pages` (its lines drawn as text), each
    page also showing `image` when given."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    for text in pages:
        if image is not None:
            pdf.drawImage(str(image), 50, 400, width=300, height=300)
        y = 780
        for line in text.splitlines():
            pdf.drawString(50, y, line)
            y -= 14
        pdf.showPage()
    pdf.save()
    return path


# -- the other formats, written in code: (heading, paragraph) sections -----------------

Sections = list[tuple[str, str]]


def make_docx(path: Path, title: str, sections: Sections, items: tuple[str, ...] = ()) -> Path:
    """A Word file: `title` in the Title style, each section a Heading 1 and its paragraph,
    then `items` as a bulleted list and a two-row table."""
    from docx import Document

    document = Document()
    document.add_paragraph(title, style="Title")
    for heading, paragraph in sections:
        document.add_heading(heading, level=1)
        document.add_paragraph(paragraph)
    for item in items:
        document.add_paragraph(item, style="List Bullet")
    if items:
        table = document.add_table(rows=2, cols=2)
        for row, cells in zip(table.rows, [("Region", "Revenue"), ("North", "42")], strict=True):
            for cell, text in zip(row.cells, cells, strict=True):
                cell.text = text
    document.save(str(path))
    return path


def make_pptx(path: Path, slides: Sections, notes: str = "") -> Path:
    """A deck: one title-and-content slide per section, `notes` on the first slide."""
    from pptx import Presentation

    deck = Presentation()
    for heading, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = heading
        slide.placeholders[1].text_frame.text = body
        if notes and len(deck.slides) == 1:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(path))
    return path


def html_page(title: str, sections: Sections, extra: str = "") -> str:
    """A web page with a script, a style and a remote image beside its sections."""
    body = "".join(f"<h2>{h}</h2>\n<p>{p}</p>\n" for h, p in sections)
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
        "<style>body { color: red }</style><script>document.write('SCRIPTED')</script>"
        f"</head><body><h1>{title}</h1>{body}"
        "<img src='http://127.0.0.1:9/tracker.png' alt='tracker'>"
        f"<script>alert('SCRIPTED')</script>{extra}</body></html>"
    )


def make_epub(path: Path, title: str, chapters: Sections, *, drm: bool = False) -> Path:
    """An EPUB 3 book: one XHTML chapter per section (an <h1> and a paragraph), a
    navigation document, and with `drm` an encryption.xml that encrypts the chapters."""
    import zipfile

    items = "".join(
        f'<item id="c{i}" href="text/ch{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">urn:test:1</dc:identifier><dc:title>{title}</dc:title>'
        "<dc:language>en</dc:language></metadata>"
        '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml"'
        f' properties="nav"/>{items}</manifest><spine><itemref idref="nav"/>{spine}</spine>'
        "</package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0"'
        ' xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", container)
        book.writestr("OEBPS/content.opf", opf)
        book.writestr(
            "OEBPS/nav.xhtml", _xhtml("Contents", "<nav><ol><li>Contents</li></ol></nav>")
        )
        for i, (heading, paragraph) in enumerate(chapters):
            book.writestr(
                f"OEBPS/text/ch{i}.xhtml", _xhtml(heading, f"<h1>{heading}</h1><p>{paragraph}</p>")
            )
        if drm:
            refs = "".join(
                '<EncryptedData xmlns="http://www.w3.org/2001/04/xmlenc#"><EncryptionMethod'
                ' Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/><CipherData>'
                f'<CipherReference URI="OEBPS/text/ch{i}.xhtml"/></CipherData></EncryptedData>'
                for i in range(len(chapters))
            )
            book.writestr(
                "META-INF/encryption.xml",
                '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                f"{refs}</encryption>",
            )
    return path


def _xhtml(title: str, body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>{title}</title></head><body>{body}</body></html>"
    )


def make_eml(
    path: Path,
    subject: str,
    text: str | None,
    html: str | None = None,
    attachments: dict[str, bytes] | None = None,
) -> Path:
    """An e-mail from Ada to Bob: `text` and/or `html` bodies (alternatives), and files
    attached by name."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Ada Lovelace <ada@example.org>"
    message["To"] = "Bob <bob@example.org>"
    message["Subject"] = subject
    message["Date"] = "Tue, 01 Apr 2025 09:30:00 +0000"
    if text is not None:
        message.set_content(text)
    if html is not None:
        if text is None:
            message.set_content(html, subtype="html")
        else:
            message.add_alternative(html, subtype="html")
    for name, data in (attachments or {}).items():
        message.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    path.write_bytes(message.as_bytes())
    return path
