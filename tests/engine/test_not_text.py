"""What is not a text document is refused in one line that says what it is: random bytes
without a NUL (which Latin-1 decodes into "text"), a named pipe, a device, a socket. A
pipe is never opened (opening one waits for a writer: the drop would hang). Real text in
Latin-1 or Windows-1252 is still read, and the rest of a drop goes on."""

from __future__ import annotations

import os
import random
import socket
import sys
from pathlib import Path

import pytest

from gam_desktop.engine.ingest.documents import DocumentError, load_file

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="pipes and devices are POSIX")


def random_text_file(path: Path, size: int = 30_000, seed: int = 36) -> Path:
    """`size` random bytes with their NULs taken out (the adversarial run's garbage)."""
    data = random.Random(seed).randbytes(size).replace(b"\0", b"")
    path.write_bytes(data)
    return path


def refusal(path: Path) -> str:
    with pytest.raises(DocumentError) as caught:
        load_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path.name}: ") and "\n" not in message
    return message


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", ["noise.txt", "noise.md", "noise.html"])
def test_random_bytes_without_nul_are_not_text(tmp_path: Path, name: str, seed: int) -> None:
    path = random_text_file(tmp_path / name, seed=seed)
    message = refusal(path)
    assert "looks like a binary file, not text" in message
    assert "% of its characters are control codes" in message


def test_a_small_random_file_that_decodes_as_windows_1252_is_not_text(tmp_path: Path) -> None:
    """Without the five bytes Windows-1252 leaves undefined it decodes as Windows-1252
    (Latin-1's control codes become letters there): its C0 controls give it away."""
    data = bytes(b for b in random.Random(7).randbytes(3000) if b not in b"\0\x81\x8d\x8f\x90\x9d")
    path = tmp_path / "small.txt"
    path.write_bytes(data)
    assert "looks like a binary file" in refusal(path)


def test_binary_after_a_text_header_is_not_text(tmp_path: Path) -> None:
    """A text-looking start does not make the rest text: the middle and end are looked at."""
    path = tmp_path / "header.txt"
    noise = random.Random(3).randbytes(400_000).replace(b"\0", b"")
    path.write_bytes(b"Report 2025\n" * 8000 + noise)
    assert "looks like a binary file" in refusal(path)


LATIN_1 = (
    "Le comité a réuni à Genève les délégués de Zürich et de Besançon.\n"
    "Ça coûte 12 francs ; la façade est peinte en ocre, dit l'hôtelière.\n"
) * 40
WINDOWS_1252 = "Les “citations” coûtent 5 € — l’équipe d’Oslo a dit « oui ».\n" * 40


@pytest.mark.parametrize(
    "text,encoding,used",
    [(LATIN_1, "latin-1", "Windows-1252"), (WINDOWS_1252, "cp1252", "Windows-1252")],
)
def test_real_latin_1_and_windows_1252_text_is_still_read(
    tmp_path: Path, text: str, encoding: str, used: str
) -> None:
    path = tmp_path / "lettre.txt"
    path.write_bytes(text.encode(encoding))
    doc = load_file(path)
    assert doc.text == text
    assert doc.warnings == [
        f"lettre.txt: not valid UTF-8; decoded as {used}, some characters may be wrong"
    ]


def test_latin_1_with_bytes_windows_1252_leaves_undefined_is_read(tmp_path: Path) -> None:
    """0x81 and 0x8D are C1 controls in Latin-1: a few of them do not make a file binary."""
    path = tmp_path / "old.txt"
    path.write_bytes(LATIN_1.encode("latin-1") + b"\x81 \x8d\n")
    doc = load_file(path)
    assert doc.text.startswith(LATIN_1) and "decoded as Latin-1" in doc.warnings[0]


def test_text_with_terminal_colours_and_form_feeds_is_read(tmp_path: Path) -> None:
    """Read, not refused as binary; the colours' escape sequences go (an ESC in a note
    repaints the terminal showing it) and a form feed is a line break."""
    path = tmp_path / "build.txt"
    text = "\x1b[32mPASSED\x1b[0m test_one\n\x0cPage two\tcolumn\n" * 50
    path.write_text(text, encoding="utf-8")
    assert load_file(path).text == "PASSED test_one\n\nPage two\tcolumn\n" * 50


@posix_only
def test_a_named_pipe_is_refused_without_being_opened(tmp_path: Path) -> None:
    """Opening a pipe for reading waits for a writer: a load that opened it would hang
    (pytest-timeout ends it). It is named for what it is, not "file not found"."""
    pipe = tmp_path / "drop.txt"
    os.mkfifo(pipe)
    assert refusal(pipe) == (
        "drop.txt: not a regular file (it is a named pipe (FIFO)); only files can be added"
    )


@posix_only
def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    """/dev/zero never ends: a link named like a text file must not be read."""
    link = tmp_path / "zeros.txt"
    link.symlink_to("/dev/zero")
    assert refusal(link) == (
        "zeros.txt: not a regular file (it is a device); only files can be added"
    )


@posix_only
def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.md"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        assert refusal(path) == "s.md: not a regular file (it is a socket); only files can be added"
    finally:
        server.close()


def test_a_folder_and_a_missing_file_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "notes.md").mkdir()
    assert refusal(tmp_path / "notes.md") == (
        "notes.md: not a regular file (it is a folder); only files can be added"
    )
    gone = tmp_path / "gone.md"
    assert refusal(gone) == f"gone.md: file not found ({gone})"


@posix_only
def test_a_drop_with_a_pipe_and_noise_reads_the_rest(make_workflow, tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    pipe = drop / "pipe.txt"
    os.mkfifo(pipe)
    noise = random_text_file(drop / "noise.txt")
    notes = drop / "notes.md"
    notes.write_text("# Notes\n\nBorealis opens an office in Oslo in 2025.\n", encoding="utf-8")
    letter = drop / "lettre.txt"
    letter.write_bytes(LATIN_1.encode("latin-1"))
    report = make_workflow(min_tokens=5, max_tokens=300).add(files=[pipe, noise, notes, letter])
    assert sorted(report.documents) == ["lettre.txt", "notes.md"]
    assert [line.split(": ", 1)[0] for line in report.unreadable] == ["pipe.txt", "noise.txt"]
    assert "not a regular file" in report.unreadable[0]
    assert "binary" in report.unreadable[1]
