"""Word, PowerPoint, EPUB, HTML and e-mail documents written in code, one of each format
the app reads beside PDF and text: `gam-desktop --self-test` drops them with the samples,
so the packaged app proves it carries every converter (python-docx, python-pptx,
BeautifulSoup, lxml); the tests build good and broken files from them."""

from __future__ import annotations

from pathlib import Path

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
            "OEBPS/nav.xhtml",
            _xhtml("Contents", "<h1>Table of contents</h1><nav><ol><li>Chapter</li></ol></nav>"),
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


def make_pdf(path: Path, pages: Sections) -> Path:
    """A PDF written by hand (the packaged app carries pypdf to read PDFs, no library to
    write them): one page per section, its heading and its paragraph in Helvetica."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for heading, paragraph in pages:
        text = f"BT /F1 16 Tf 72 720 Td ({_pdf_text(heading)}) Tj /F1 11 Tf 0 -28 Td "
        text += f"({_pdf_text(paragraph)}) Tj ET"
        objects.append(f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {len(objects)} 0 R >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    data, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(data))
        data += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    table = "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    data += (
        f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n{table}trailer\n"
        f"<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{len(data)}\n%%EOF\n"
    ).encode("latin-1")
    path.write_bytes(data)
    return path


def _pdf_text(text: str) -> str:
    """`text` inside a PDF string's parentheses (Latin-1, its delimiters escaped)."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


SECTIONS = [
    ("Quarterly revenue", "Borealis revenue grew 12 percent in the third quarter."),
    ("Hiring plan", "Borealis hires 4 engineers in Oslo during 2025."),
]


def one_of_each(folder: Path) -> dict[str, Path]:
    """One document per format (by suffix) in `folder`, each about Borealis."""
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "borealis_intranet.html"
    page.write_text(html_page("Borealis intranet", SECTIONS), encoding="utf-8")
    body = "Hi Bob,\n\nThe Borealis budget for 2025 is 42 EUR per engineer."
    return {
        ".docx": make_docx(folder / "borealis_report.docx", "Borealis Annual Report", SECTIONS),
        ".pptx": make_pptx(folder / "borealis_deck.pptx", SECTIONS, notes="Open with revenue."),
        ".epub": make_epub(folder / "borealis_book.epub", "The Borealis Book", SECTIONS),
        ".html": page,
        ".eml": make_eml(folder / "borealis_budget.eml", "Borealis budget", body),
    }
