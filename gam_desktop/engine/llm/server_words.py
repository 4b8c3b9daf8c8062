"""A server's own words in an SDK error (the key it refused, the limit it hit, why it
rejected a request), made fit for a line a person reads."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from gam_desktop.engine.llm.redact import Redactor

# Characters of a server's own words that a refused key's or a rate limit's line shows: a
# JSON error's message takes a sentence or two; more is a page, not words for that line.
SHOWN_WORDS = 200
_MASK = re.compile(r"\*{4,}")  # a key masked in a server's words, star by star


def server_reason(exc: Any) -> str:
    """What the server said of a request it refused, in one line (the SDK's message is
    "Error code: 400 - <the server's message>"; a body that is no JSON error, its start)."""
    said = " ".join((server_words(exc) or "").split())
    if not said:
        return "no reason given"
    return said if len(said) <= 300 else said[:299] + "…"


def shown_words(exc: Any, redactor: Redactor) -> str:
    """The server's own words of a refused key or a rate limit (the key it refused, the
    limit or the quota it hit) as ": <words>", for the end of the line a person is shown; ""
    when it said none that fit in such a line: words longer than SHOWN_WORDS or of more than
    one line (a page, a traceback), or markup (an HTML page). Control characters are taken
    out (a terminal's escapes, a text's direction turned round) and any key this client
    sends is redacted, after: a key with a control character inside is whole only then."""
    words = server_words(exc)
    if words is None or len(words.strip().splitlines()) != 1:
        return ""
    words = " ".join(words.split())  # (a tab too)
    words = "".join(c for c in words if unicodedata.category(c) not in ("Cc", "Cf"))
    # OpenAI's "Incorrect API key provided: sk-proj-*****…***AbCd" masks with ~150 stars
    words = redactor.text(_MASK.sub("***", words)).strip()
    if not words or words.startswith("<") or len(words) > SHOWN_WORDS:
        return ""
    return f": {words}"


def server_words(exc: Any) -> str | None:
    """The server's words in an SDK error: its JSON error's message (which the SDK puts in
    its own, "Error code: 401 - <message>"), or its body when that is text, or a JSON
    body's "detail" (FastAPI's); None for none."""
    message = str(getattr(exc, "message", "") or "")
    if message.startswith("Error code:") and " - " in message:
        return message.partition(" - ")[2]
    if message and not message.startswith("Error code:"):
        return message  # an error of our own making, not the SDK's
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        body = body.get("message") or body.get("detail")
    return body if isinstance(body, str) else None
