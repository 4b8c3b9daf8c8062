"""Zip bombs: a Word, PowerPoint or EPUB file that unpacks to far more than its size is
refused in one line naming the file and the reason, before it fills the memory, and the
rest of the drop is read. The limits are lowered here (2 MB for a part, 1 MB of text) so
that the bombs are small and quick to build; one test checks the defaults against the
reported bomb (5 MB on disk, 1 GB unpacked) with a size stated in its zip directory."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from gam_desktop.engine.ingest import documents, packages
from gam_desktop.engine.ingest.documents import DocumentError, load_file
from gam_desktop.selfcheck.formats import SECTIONS
from tests.documents import make_docx, make_epub, make_pptx

MB = 2**20
# Each format's main part: the XML its converter parses whole.
MAIN_PART = {
    ".docx": "word/document.xml",
    ".pptx": "ppt/slides/slide1.xml",
    ".epub": "OEBPS/text/ch0.xhtml",
}


def make(suffix: str, path: Path, sections: list[tuple[str, str]] = SECTIONS) -> Path:
    if suffix == ".docx":
        return make_docx(path, "Borealis", sections)
    if suffix == ".pptx":
        return make_pptx(path, sections)
    return make_epub(path, "Borealis", sections)


def repacked(path: Path, member: str = "", pad: int = 0) -> Path:
    """`path` packed again with deflate (as Office and most EPUBs are), its part `member`
    grown by an XML comment of `pad` zeros: a valid document that unpacks to far more
    than its size on disk."""
    with zipfile.ZipFile(path) as source:
        parts = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in parts:
            if info.filename == member:
                data = data.replace(b"?>", b"?><!--" + b"0" * pad + b"-->", 1)
            target.writestr(info.filename, data)
    return path


def stating(path: Path, member: str, size: int) -> Path:
    """`path` whose zip directory states that `member` unpacks to `size` bytes (a lie
    costs a bomb nothing: the directory is not checked against the packed data)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    at = data.find(b"PK\x01\x02")
    while at != -1:  # the central directory's entries: the unpacked size is at +24
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + name_length] == name:
            struct.pack_into("<I", data, at + 24, size)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(DocumentError) as caught:
        load_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path.name}: ") and "\n" not in message
    return message


@pytest.mark.parametrize("suffix", sorted(MAIN_PART))
def test_a_part_that_unpacks_past_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    monkeypatch.setattr(packages, "MAX_PART", 2 * MB)
    bomb = repacked(make(suffix, tmp_path / f"bomb{suffix}"), MAIN_PART[suffix], 5 * MB)
    assert bomb.stat().st_size < 100_000  # small on disk, 5 MB unpacked
    assert refusal(bomb) == (
        f"bomb{suffix}: too large once unpacked (its part {MAIN_PART[suffix]} unpacks to"
        " 5 MB; the limit for one part is 2 MB)"
    )


@pytest.mark.parametrize("suffix", sorted(MAIN_PART))
def test_parts_that_unpack_past_the_limit_together_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """Five parts of 1 MB each, every one under the limit for a part: 5 MB together."""
    monkeypatch.setattr(packages, "MAX_UNPACKED", 2 * MB)
    path = make(suffix, tmp_path / f"many{suffix}")
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as package:
        for number in range(5):
            package.writestr(f"media/zeros{number}.bin", b"\0" * MB)
    assert refusal(path).startswith(
        f"many{suffix}: too large once unpacked (5 MB; the limit is 2 MB)"
    )


@pytest.mark.parametrize("suffix", sorted(MAIN_PART))
def test_more_text_than_the_limit_is_refused_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """Under every unpacking limit, but 1.5 MB of text where the limit is 1 MB (the limit
    of a text file on disk, applied to the text read out of a package)."""
    monkeypatch.setattr(documents, "MAX_TEXT_BYTES", MB)
    words = "Borealis hires engineers in Oslo. " * 15_000  # about 0.5 MB
    sections = [(f"Part {n}", words) for n in range(3)]
    path = repacked(make(suffix, tmp_path / f"long{suffix}", sections))
    assert path.stat().st_size < MB  # the file itself is within the limit
    assert refusal(path) == (
        f"long{suffix}: holds more than 1 MB of text, the limit for one document; split it"
        " and add the parts"
    )


def test_the_same_text_under_the_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "MAX_TEXT_BYTES", MB)
    words = "Borealis hires engineers in Oslo. " * 15_000
    doc = load_file(repacked(make(".docx", tmp_path / "fits.docx", [("Part", words)])))
    assert doc.text.count("Borealis hires engineers in Oslo.") == 15_000


@pytest.mark.parametrize("suffix", sorted(MAIN_PART))
def test_the_reported_bomb_is_refused_at_the_default_limits(tmp_path: Path, suffix: str) -> None:
    """The issue's bomb unpacked to 1 GB and was accepted (the limit was 1,024 MB). Its
    stated size is enough to refuse it: nothing is inflated."""
    member = MAIN_PART[suffix]
    path = stating(repacked(make(suffix, tmp_path / f"gig{suffix}")), member, 1024 * MB)
    assert refusal(path) == (
        f"gig{suffix}: too large once unpacked (its part {member} unpacks to 1024 MB; the"
        " limit for one part is 128 MB)"
    )


def test_a_part_that_holds_more_than_its_stated_size_is_damaged(tmp_path: Path) -> None:
    """A bomb that understates its size in the zip directory gets past the stated-size
    check, but zipfile, which every reader goes through, stops the part at its stated
    size as it unpacks it: the part is cut short, its checksum fails, the file is
    refused as damaged, and no more than the stated size was ever unpacked."""
    member = MAIN_PART[".docx"]
    bomb = repacked(make(".docx", tmp_path / "liar.docx"), member, 5 * MB)
    stating(bomb, member, 4096)
    message = refusal(bomb)
    assert "could not be read as a Word document (damaged?)" in message and "CRC" in message


def test_a_drop_with_bombs_reads_the_rest(
    make_workflow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packages, "MAX_PART", 2 * MB)
    drop = tmp_path / "drop"
    drop.mkdir()
    bombs = [
        repacked(make(suffix, drop / f"bomb{suffix}"), MAIN_PART[suffix], 5 * MB)
        for suffix in sorted(MAIN_PART)
    ]
    good = [make(suffix, drop / f"good{suffix}") for suffix in sorted(MAIN_PART)]
    notes = drop / "notes.md"
    notes.write_text("# Notes\n\nBorealis opens an office in Oslo in 2025.\n", encoding="utf-8")
    report = make_workflow(min_tokens=5, max_tokens=300).add(files=[*bombs, *good, notes])
    assert sorted(report.documents) == sorted(p.name for p in [*good, notes])
    assert sorted(report.unreadable) == sorted(
        f"{bomb.name}: too large once unpacked (its part {MAIN_PART[bomb.suffix]} unpacks to"
        " 5 MB; the limit for one part is 2 MB)"
        for bomb in bombs
    )
