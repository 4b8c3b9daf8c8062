from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from gam_desktop.engine.ingest import documents
from gam_desktop.engine.ingest.documents import DocumentError, load_file, load_text
from tests.documents import make_pdf


@pytest.fixture
def picture(tmp_path: Path) -> Path:
    path = tmp_path / "picture.png"
    Image.new("RGB", (200, 200), (200, 30, 30)).save(path)
    return path


def test_utf8_text_keeps_name_hash_and_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Héllo wörld\r\nsecond line", encoding="utf-8")
    doc = load_file(path)
    assert doc.name == "notes.txt"
    assert doc.text == "Héllo wörld\nsecond line"
    assert doc.content_hash == documents.sha256_hex(path.read_bytes())
    assert doc.warnings == []


@pytest.mark.parametrize(
    "bom,encoding",
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ],
)
def test_text_with_bom_is_decoded(tmp_path: Path, bom: bytes, encoding: str) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(bom + "# Título\n\n日本語のテキスト".encode(encoding))
    doc = load_file(path)
    assert doc.text == "# Título\n\n日本語のテキスト"
    assert doc.warnings == []


def test_non_utf8_text_uses_stated_fallback(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes("Café crème – naïve".encode("cp1252"))
    doc = load_file(path)
    assert doc.text == "Café crème – naïve"
    assert len(doc.warnings) == 1 and "Windows-1252" in doc.warnings[0]
    assert "legacy.txt" in doc.warnings[0]


def test_binary_bytes_in_txt_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "photo.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(DocumentError, match=r"photo\.txt.*binary"):
        load_file(path)


def test_empty_file_is_a_warning_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(b"")
    doc = load_file(path)
    assert doc.text == ""
    assert "empty" in doc.warnings[0]


def test_name_with_spaces_and_non_ascii_letters(tmp_path: Path) -> None:
    path = tmp_path / "Résumé de l'été 2024.txt"
    path.write_text("Un texte.", encoding="utf-8")
    assert load_file(path).name == "Résumé de l'été 2024.txt"


def test_unsupported_and_missing_and_huge_files(tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "sheet.xlsx"
    other.write_bytes(b"PK")
    with pytest.raises(DocumentError, match="unsupported"):
        load_file(other)
    with pytest.raises(DocumentError, match="not found"):
        load_file(tmp_path / "gone.txt")
    big = tmp_path / "big.txt"
    big.write_text("x" * 2000)
    monkeypatch.setattr(documents, "MAX_TEXT_BYTES", 1000)
    with pytest.raises(DocumentError, match="too large"):
        load_file(big)


def test_raw_text_is_a_source_too() -> None:
    doc = load_text("Some\r\ntext\x00here", name="clipboard")
    assert doc.text == "Some\ntexthere"
    assert doc.name == "clipboard" and len(doc.content_hash) == 64


def test_pdf_text_with_page_spans(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "paper.pdf",
        ["First page about transformers.", "Second page about attention heads."],
    )
    doc = load_file(path)
    assert "transformers" in doc.text and "attention heads" in doc.text
    assert [p.page for p in doc.pages] == [1, 2]
    second = doc.pages[1]
    assert "attention heads" in doc.text[second.start : second.end]
    assert doc.pages_for(second.start, second.end) == [2]
    assert doc.pages_for(0, len(doc.text)) == [1, 2]


def test_pdf_with_images_extracts_text_and_ignores_images(tmp_path: Path, picture: Path) -> None:
    path = make_pdf(
        tmp_path / "figures.pdf",
        ["Figure one shows a red square.", "Figure two shows it again."],
        image=picture,
    )
    doc = load_file(path)
    assert "red square" in doc.text and "again" in doc.text
    assert doc.warnings == []


def test_pdf_without_text_warns_scanned(tmp_path: Path, picture: Path) -> None:
    path = make_pdf(tmp_path / "scan.pdf", [""], image=picture)
    doc = load_file(path)
    assert doc.text == ""
    assert "scanned" in doc.warnings[0] and "scan.pdf" in doc.warnings[0]


def test_encrypted_pdf_is_refused_by_name(tmp_path: Path) -> None:
    plain = make_pdf(tmp_path / "plain.pdf", ["Secret text."])
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password="hunter2", owner_password="owner", algorithm="AES-256")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    with pytest.raises(DocumentError, match=r"locked\.pdf.*encrypted"):
        load_file(locked)


def test_pdf_with_only_an_owner_password_opens(tmp_path: Path) -> None:
    plain = make_pdf(tmp_path / "plain.pdf", ["Readable but protected."])
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-128")
    protected = tmp_path / "protected.pdf"
    with protected.open("wb") as handle:
        writer.write(handle)
    assert "Readable but protected" in load_file(protected).text


@pytest.mark.parametrize("payload", [b"%PDF-1.4\n this is not really a pdf", b"not a pdf at all"])
def test_corrupt_pdf_is_refused_by_name(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(payload)
    with pytest.raises(DocumentError, match=r"broken\.pdf.*(damaged|encrypted)"):
        load_file(path)


def test_truncated_pdf_is_refused_by_name(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "cut.pdf", ["Page one text.", "Page two text."])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DocumentError, match=r"cut\.pdf.*damaged"):
        load_file(path)
