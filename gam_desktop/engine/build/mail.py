"""Reading an e-mail message (.eml, RFC 5322) with the standard library's `email`.

The subject is the level-1 heading; From, To, Cc and Date follow as a header block, with
the attachments' names (attachments are never read: a memory of the message says what
came with it). The body is the text/plain part when there is one, else the HTML part
read as an untrusted page (`markup`). An encrypted message (S/MIME, PGP) is refused by
name; a file with no message headers is not an e-mail.
"""

from __future__ import annotations

import email
from email import policy
from email.message import EmailMessage
from pathlib import Path

from gam_desktop.engine.build.blocks import TextBlocks
from gam_desktop.engine.build.documents import DocumentError, SourceDocument
from gam_desktop.engine.build.markup import add_html

HEADERS = ("From", "To", "Cc", "Date")
ENCRYPTED_TYPES = frozenset(
    {"multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}
)
PGP_ARMOR = "-----BEGIN PGP MESSAGE-----"


def load_eml(path: Path, data: bytes) -> SourceDocument:
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{path.name}: looks like a binary file, not an e-mail message")
    try:
        message = email.message_from_bytes(data, _class=EmailMessage, policy=policy.default)
        if not any(message.get(name) for name in ("From", "To", "Subject", "Date")):
            raise DocumentError(
                f"{path.name}: not an e-mail message (it has no From, To, Subject or Date)"
            )
        return _read(path, data, message)
    except (DocumentError, MemoryError):
        raise
    except Exception as exc:  # the email package is lenient; what still fails is damaged
        raise DocumentError(
            f"{path.name}: could not be read as an e-mail (damaged?): {exc}"
        ) from exc


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
    blocks.heading(str(message.get("Subject", "")), 1)
    lines = [f"{name}: {' '.join(str(message[name]).split())}" for name in HEADERS if message[name]]
    if attachments:
        lines.append(f"Attachments (not read): {', '.join(attachments)}")
    blocks.add("\n".join(lines))
    if body is not None and body.get_content_type() == "text/html":
        add_html(blocks, text, shift=1)
    else:
        blocks.add(text)
    return blocks.document(path, data)


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
