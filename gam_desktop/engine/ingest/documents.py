"""Reading documents into plain text with provenance: PDF (`pdf`), Word and PowerPoint
(`office`), EPUB (`epub`), HTML (`markup`), e-mail (`mail`), text and Markdown (here), and
raw text.

Every source keeps its name, a content hash of its bytes and page spans, so a
memory can name exactly where its text came from. Problems a person can act on
(encrypted, damaged, binary, too large) raise DocumentError naming the file;
problems that still leave usable text become warnings on the document. The converters'
libraries (pypdf, python-docx, python-pptx, BeautifulSoup) are imported when a file of
theirs is read: a window that never reads a Word file does not pay for them at start.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store.links import resolve_within

log = logging.getLogger(__name__)

PLAIN_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".text"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".epub", ".eml", *HTML_SUFFIXES, *PLAIN_SUFFIXES}
)
# What the app says it reads, wherever it says so (drop hints, CLI help, messages).
READABLE = "PDF, Word, PowerPoint, EPUB, HTML, e-mail (.eml), text or Markdown"
# The most one document may be: its file on disk, and the text read out of it (a Word file
# or an EPUB is a zip: 5 MB of it can hold gigabytes of text). Tests lower it.
MAX_TEXT_BYTES = 100 * 1024 * 1024
# Text, not binary: at most this share of its characters are control codes other than
# whitespace and ESC (terminal colours). Random bytes read as Latin-1 have about 23%,
# as Windows-1252 about 10%; text written by people has next to none.
MAX_CONTROL_SHARE = 0.05
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_SAMPLE = 65_536  # characters measured at the start, middle and end of a text
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class DocumentError(GamError, ValueError):
    """A document that cannot be read; the message names the file and says why."""

    title = "A document could not be read"
    advice = "Save an unprotected or repaired copy of the file and drop that instead."


class TooMuchText(DocumentError):
    """A reader got more than MAX_TEXT_BYTES of text out of a document, or a part of it
    too large to parse (`load_file` puts the file's name before the reason)."""


@dataclass(frozen=True)
class PageSpan:
    page: int  # 1-based
    start: int  # character offsets into SourceDocument.text
    end: int


@dataclass
class SourceDocument:
    name: str
    text: str
    content_hash: str
    path: str | None = None
    pages: list[PageSpan] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def pages_for(self, start: int, end: int) -> list[int]:
        """The 1-based pages a character span touches (empty for non-PDF sources)."""
        return [p.page for p in self.pages if p.start < end and start < p.end]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def files_in(folder: Path) -> tuple[list[Path], list[Path]]:
    """A chosen folder's files, recursively: (supported, unsupported). Hidden names are
    left out, and so are links that leave the folder (an unpacked archive may hold
    `paper.txt -> ~/.ssh/id_rsa`) and linked folders (loops), the memory's own rule. Each
    supported file's identity is noted (`_walked`): read later, it must still be that file."""
    root = folder.resolve()
    supported: list[Path] = []
    unsupported: list[Path] = []
    for base, dirs, names in os.walk(folder):  # followlinks=False: linked folders skipped
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(base) / name
            if name.startswith(".") or resolve_within(root, path) is None or not path.is_file():
                continue
            if is_supported(path):
                supported.append(path)
                _walked.note(path)
            else:
                unsupported.append(path)
    return supported, unsupported


class _Walked:
    """The files a folder's walk approved, by absolute path: their identity (device, inode)
    then. Another program may swap one for a link to a secret between the walk and the
    read (`paper.txt -> ~/.ssh/id_rsa`, or its folder for a link elsewhere: an archive
    still unpacking, a synced folder): what is read must be the file the walk approved. A
    bounded table: a walk of more files forgets the oldest (they are read unchecked)."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def note(self, path: Path) -> None:
        try:
            found = path.stat()
        except OSError:  # gone meanwhile: the read says so
            return
        with self._lock:
            key = os.path.abspath(path)
            self._files[key] = (found.st_dev, found.st_ino)
            self._files.move_to_end(key)
            while len(self._files) > self.LIMIT:
                self._files.popitem(last=False)

    def approved(self, path: Path, opened: os.stat_result) -> bool:
        """Whether the file opened at `path` is the one a walk found there (True for a path
        no walk found: a file named by the person is read as named, links and all)."""
        with self._lock:
            identity = self._files.get(os.path.abspath(path))
        return identity is None or identity == (opened.st_dev, opened.st_ino)


_walked = _Walked()


PASTED_TEXT = "text"  # the name of a document added as raw text (gam-add --text)


def load_text(text: str, name: str = PASTED_TEXT) -> SourceDocument:
    clean = normalize(text)
    return SourceDocument(name=name, text=clean, content_hash=sha256_hex(clean.encode("utf-8")))


def load_file(path: str | Path) -> SourceDocument:
    path = Path(path)
    data = _read_file(path)
    try:
        doc = _reader(path.suffix.lower())(path, data) if data else _load_plain(path, data)
    except TooMuchText as exc:
        raise DocumentError(f"{path.name}: {exc}") from exc
    except MemoryError as exc:  # the last guard: one document must not end the whole drop
        raise DocumentError(f"{path.name}: too large to read in this computer's memory") from exc
    if not doc.text.strip() and not doc.warnings:
        doc.warnings.append(f"{path.name}: no text found (the file is empty); skipped")
    return doc


def _read_file(path: Path) -> bytes:
    """The bytes of the regular file at `path`, of a supported type and size. A named pipe,
    a device or a socket is refused without being opened: opening a pipe waits for a
    writer, reading a device may never end."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DocumentError(f"{path.name}: file not found ({path})") from None
    except OSError as exc:
        raise DocumentError(f"{path.name}: could not be read ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(mode):
        raise DocumentError(_not_regular(path, mode))
    if not is_supported(path):
        raise DocumentError(f"{path.name}: unsupported file type ({READABLE} files work)")
    # O_NONBLOCK: should the file be swapped for a pipe after the check, opening it does not
    # wait (and the pipe is refused below); it changes nothing for a regular file.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as file:
            opened = os.fstat(file.fileno())
            if not _walked.approved(path, opened):
                raise DocumentError(
                    f"{path.name}: replaced since its folder was read (by a link, or another"
                    " file); nothing of it was read: add it again"
                )
            if not stat.S_ISREG(opened.st_mode):
                raise DocumentError(_not_regular(path, opened.st_mode))
            _check_size(path, opened.st_size)
            data = file.read(MAX_TEXT_BYTES + 1)  # a file that grows meanwhile stops here
    except OSError as exc:
        raise DocumentError(f"{path.name}: could not be read ({exc.strerror or exc})") from exc
    _check_size(path, len(data))
    return data


def _check_size(path: Path, size: int) -> None:
    if size > MAX_TEXT_BYTES:
        raise DocumentError(
            f"{path.name}: too large ({size // 2**20} MB; the limit is {megabytes(MAX_TEXT_BYTES)})"
        )


def megabytes(size: int) -> str:
    """ "100 MB", "2 MB", "0.5 MB": a limit as people read it."""
    return f"{size / 2**20:.3g} MB"


_NOT_FILES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def _not_regular(path: Path, mode: int) -> str:
    kind = next((name for test, name in _NOT_FILES if test(mode)), "a special file")
    return f"{path.name}: not a regular file (it is {kind}); only files can be added"


Reader = Callable[[Path, bytes], SourceDocument]


def _reader(suffix: str) -> Reader:
    """The reader of a supported suffix (its module imported now, on first use)."""
    if suffix == ".pdf":
        from gam_desktop.engine.ingest.pdf import load_pdf

        return load_pdf
    if suffix in (".docx", ".pptx"):
        from gam_desktop.engine.ingest.office import load_docx, load_pptx

        return load_docx if suffix == ".docx" else load_pptx
    if suffix == ".epub":
        from gam_desktop.engine.ingest.epub import load_epub

        return load_epub
    if suffix in HTML_SUFFIXES:
        from gam_desktop.engine.ingest.markup import load_html

        return load_html
    if suffix == ".eml":
        from gam_desktop.engine.ingest.mail import load_eml

        return load_eml
    return _load_plain


# What `normalize` takes out of a text besides "\r": control codes, and line breaks other
# than "\n" (vertical tab, form feed, NEL, the Unicode line and paragraph separators).
_UNUSUAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# Terminal escape sequences (a log's colours, a window title) go whole: CSI and OSC.
# An OSC must end within its line (else only its ESC goes: the text after it stays).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)")
_BREAKS = re.compile("[\x0b\x0c\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def normalize(text: str) -> str:
    """`text` with "\n" for every line break and no control code but tab and newline:
    they are never text, and in a note an ESC repaints the terminal that shows it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _UNUSUAL.search(text) is None:  # the common case: one scan
        return text
    return _CONTROLS.sub("", _BREAKS.sub("\n", _ESCAPES.sub("", text)))


def decode_bytes(data: bytes, name: str) -> tuple[str, list[str]]:
    """Decode text bytes: BOMs first, then UTF-8, then a stated fallback; DocumentError
    when the bytes are not text (NUL bytes, or control codes where letters should be)."""
    text, warnings = _decode(data, name)
    refuse_binary(text, name)
    return text, warnings


def _decode(data: bytes, name: str) -> tuple[str, list[str]]:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), []
            except UnicodeDecodeError:
                break  # a binary file that happens to start like a BOM
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name}: looks like a binary file, not text (it contains NUL bytes)")
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    try:
        text, used = data.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "Latin-1"
    return text, [f"{name}: not valid UTF-8; decoded as {used}, some characters may be wrong"]


def refuse_binary(text: str, name: str) -> None:
    """DocumentError when more than MAX_CONTROL_SHARE of `text`'s characters are control
    codes: binary data that decoded (any byte is a Latin-1 character) but is no text.
    Measured on samples at the start, middle and end, so a huge file costs no more."""
    if len(text) > 3 * _SAMPLE:
        middle = len(text) // 2
        text = text[:_SAMPLE] + text[middle : middle + _SAMPLE] + text[-_SAMPLE:]
    controls = len(_CONTROL.findall(text))
    if text and controls > MAX_CONTROL_SHARE * len(text):
        raise DocumentError(
            f"{name}: looks like a binary file, not text ({100 * controls // len(text)}% of its"
            " characters are control codes)"
        )


def _load_plain(path: Path, data: bytes) -> SourceDocument:
    text, warnings = decode_bytes(data, path.name)
    return SourceDocument(
        name=path.name,
        text=normalize(text),
        content_hash=sha256_hex(data),
        path=str(path),
        warnings=warnings,
    )
