"""Reading an e-mail message (.eml, RFC 5322) with the standard library's `email`.

The subject is the level-1 heading; From, To, Cc and Date follow as a header block, with
the attachments' names (attachments are never read: a memory of the message says what
came with it). The body is the text/plain part when there is one, else the HTML part
read as an untrusted page (`markup`). An encrypted message (S/MIME, PGP) is refused by
name; a file with no message headers is not an e-mail.

The message is untrusted, and the `email` package's header parser is slow: about 5 µs a
character, and quadratic in a long header (a 2 MB Subject took more than ten minutes). So
the headers are parsed through a policy that bounds the work (`_BoundedPolicy`): a header
longer than MAX_HEADER_CHARS is cut first (with a warning), and a message whose headers
take more than MAX_HEADER_WORK characters of parsing (thousands of parts, each with long
headers) is refused. Nothing else of the message is slow to read.
"""

from __future__ import annotations

import email
from email.message import EmailMessage
from email.policy import EmailPolicy
from pathlib import Path
from typing import Any, cast

from gam_desktop.engine.ingest.blocks import TextBlocks
from gam_desktop.engine.ingest.documents import DocumentError, SourceDocument
from gam_desktop.engine.ingest.markup import add_html

HEADERS = ("From", "To", "Cc", "Date")
ENCRYPTED_TYPES = frozenset(
    {"multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}
)
PGP_ARMOR = "-----BEGIN PGP MESSAGE-----"
# A real header stays far below (a To of 200 people is 8 KB); parsing 16 KB takes ~0.1 s.
MAX_HEADER_CHARS = 16 * 1024
MAX_SUBJECT_CHARS = 500  # the heading: a longer subject is no title (a cut one is 16 KB)
# The header characters one message may have parsed (each header counting 10 more): two
# to five seconds, at 4-10 µs a character. A message of 5,000 attachments stays below.
MAX_HEADER_WORK = 500_000
_HEADER_COST = 10
_RECENT = 8


class _TooMuchHeader(DocumentError):
    """The message's headers take too long to parse (`load_eml` names the file)."""


class _HeaderWork:
    """What the headers of one message cost to parse so far, and which were cut."""

    def __init__(self) -> None:
        self.chars = 0
        self.cut: list[str] = []
        # The last headers parsed: the parser and this reader ask for a part's Content-Type
        # several times in a row. Only a few: a parsed header holds its whole parse tree,
        # and thousands of them alive made Python's garbage collector ten times slower.
        self.parsed: dict[tuple[str, str], Any] = {}


class _BoundedPolicy(EmailPolicy):
    """The default policy, parsing each header (when it is first read, by this reader or
    by the parser itself) within the bounds of its message's `work`."""

    work: _HeaderWork | None = None

    def __init__(self, work: _HeaderWork) -> None:
        super().__init__(message_factory=EmailMessage)  # as the default policy's
        object.__setattr__(self, "work", work)  # a policy's attributes are read-only

    def header_fetch_parse(self, name: str, value: Any) -> Any:
        if self.work is None or hasattr(value, "name"):  # no bounds, or parsed already
            return super().header_fetch_parse(name, value)
        key = (name.lower(), value)
        header = self.work.parsed.get(key)
        if header is None:
            if len(value) > MAX_HEADER_CHARS:
                value = value[:MAX_HEADER_CHARS]
                self.work.cut.append(name)
            self.work.chars += len(value) + _HEADER_COST
            if self.work.chars > MAX_HEADER_WORK:
                raise _TooMuchHeader(
                    "its headers are too many or too long to read (more than"
                    f" {MAX_HEADER_WORK:,} characters of headers)"
                )
            header = super().header_fetch_parse(name, value)
            if len(self.work.parsed) >= _RECENT:
                del self.work.parsed[next(iter(self.work.parsed))]
            self.work.parsed[key] = header
        return header


def load_eml(path: Path, data: bytes) -> SourceDocument:
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{path.name}: looks like a binary file, not an e-mail message")
    work = _HeaderWork()
    try:
        message = cast(
            EmailMessage,
            email.message_from_bytes(data, _class=EmailMessage, policy=_BoundedPolicy(work)),
        )
        if not any(message.get(name) for name in ("From", "To", "Subject", "Date")):
            raise DocumentError(
                f"{path.name}: not an e-mail message (it has no From, To, Subject or Date)"
            )
        document = _read(path, data, message)
    except _TooMuchHeader as exc:
        raise DocumentError(f"{path.name}: {exc}") from exc
    except (DocumentError, MemoryError):
        raise
    except Exception as exc:  # the email package is lenient; what still fails is damaged
        raise DocumentError(
            f"{path.name}: could not be read as an e-mail (damaged?): {exc}"
        ) from exc
    if work.cut:
        cut = ", ".join(dict.fromkeys(work.cut))
        document.warnings.append(
            f"{path.name}: headers longer than {MAX_HEADER_CHARS // 1024} KB were cut ({cut})"
        )
    return document


def _read(path: Path, data: bytes, message: EmailMessage) -> SourceDocument:
    if message.get_content_type() in ENCRYPTED_TYPES:
        raise DocumentError(_encrypted(path))
    body = message.get_body(preferencelist=("plain", "html"))
    text = _text_of(body) if isinstance(body, EmailMessage) else ""
    if text.lstrip().startswith(PGP_ARMOR):
        raise DocumentError(_encrypted(path))
    attachments = _attachments(message)
    blocks = TextBlocks()
    if not text.strip():
        attached = f" (only attachments: {', '.join(attachments)})" if attachments else ""
        blocks.warnings.append(f"{path.name}: no text found in the message{attached}; skipped")
        return blocks.document(path, data)
    blocks.heading(_shortened(" ".join(str(message.get("Subject", "")).split())), 1)
    lines = [f"{name}: {' '.join(str(message[name]).split())}" for name in HEADERS if message[name]]
    if attachments:
        lines.append(f"Attachments (not read): {', '.join(attachments)}")
    blocks.add("\n".join(lines))
    if body is not None and body.get_content_type() == "text/html":
        add_html(blocks, text, shift=1)
    else:
        blocks.add(text)
    return blocks.document(path, data)


def _shortened(subject: str) -> str:
    if len(subject) <= MAX_SUBJECT_CHARS:
        return subject
    return subject[: MAX_SUBJECT_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _encrypted(path: Path) -> str:
    return f"{path.name}: the message is encrypted (S/MIME or PGP); it cannot be read"


def _text_of(part: EmailMessage) -> str:
    try:
        return str(part.get_content())
    except (LookupError, UnicodeError):  # an unknown or wrong charset: keep what decodes
        payload = part.get_payload(decode=True)
        return payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""


def _attachments(message: EmailMessage) -> list[str]:
    names = []
    for part in message.walk():
        if isinstance(part, EmailMessage) and part.is_attachment():
            filename = part.get_filename()
            names.append(" ".join(filename.split()) if filename else part.get_content_type())
    return names
