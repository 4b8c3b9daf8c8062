"""File and folder names from LLM output, made safe on Windows, macOS and Linux.

The LLM proposes titles and directory names; anything may come back: slashes,
`..`, `CON`, 300 characters, names that differ only in case (which collide on
the default macOS and Windows file systems).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# conversations/, facts/ and research/ (store.folder names them; folder imports this module)
RESERVED_FOLDER_NAMES = frozenset({"conversations", "facts", "research"})

MAX_NAME_CHARS = 64
# 255 bytes is the usual limit; room is left for "_12.md" and the temp file's ".x.tmp" parts.
MAX_NAME_BYTES = 120
# Windows fails past 260 characters of a whole path (Python cannot open the file, git says
# "Filename too long"), and a memory often sits under C:\Users\<name>\OneDrive\Documents\...
# (about 100): a memory's path inside the folder stays within 120, three folder levels of
# at most 28 characters leaving room for a file name.
MAX_PATH_CHARS = 120
MAX_FOLDER_CHARS = 28
MIN_STEM_CHARS = 12
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    "clock$",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}
# Anything but letters, digits and "_" (in any script) separates words: slashes and
# reserved characters, but also the commas, dashes and ampersands of document titles.
_NOT_WORD = re.compile(r"[^\w]+")
_RESERVED_FILE_STEMS = {"readme"}
# What a document's name, stored in a note (`source:`) or the meta file, must not hold as
# is: control codes (a newline split the front matter's line, an ESC repaints the terminal
# that shows the note) and the bidirectional controls that show a name reversed
# ("\u202eevil\u202dtxt.md"); the command line shows names by the same rule (cli.common).
_UNSHOWN = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def stored_name(name: str) -> str:
    """A document's file name as a memory stores it: those characters written as escapes
    ("new\\nline.txt", "esc\\x1b[31m.txt"), so the name stays on one line and can still be
    told to be that file's; any other name as it is."""
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), name)


def sanitize_name(raw: str, fallback: str = "untitled", max_chars: int = MAX_NAME_CHARS) -> str:
    """A lowercase snake_case name valid on every OS; `fallback` when nothing is left."""
    name = unicodedata.normalize("NFKC", str(raw)).strip().lower()
    name = _NOT_WORD.sub("_", name)
    name = re.sub(r"_+", "_", name).strip("_")
    if len(name) > max_chars:
        name = _cut(name, max_chars)
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:  # file systems count bytes, not chars
        name = name[:-1].rstrip("_.")
    if not name:
        name = fallback
    if name.split(".")[0] in _WINDOWS_RESERVED:
        name = f"{name}_"
    return name


def _cut(name: str, limit: int) -> str:
    """`name` within `limit` characters. A name starts with its subject and ends with what
    distinguishes it (a year, a version, a word of its own): whole words from both ends
    stay and words from the middle go ("garden_club_minutes_1998")."""
    words = name.split("_")
    head: list[str] = []
    tail: list[str] = []
    while words and len("_".join(head + words[:1])) <= limit // 2:
        head.append(words.pop(0))
    while words and len("_".join(head + words[-1:] + tail)) <= limit:
        tail.insert(0, words.pop())
    return "_".join(head + tail) or name[:limit]


def sanitize_folder_name(raw: str, fallback: str = "topic") -> str:
    """A folder name for documents: never the name of the folders the memory keeps its
    conversations and facts in (store.folder.PERSONAL_DIRS), at whatever level."""
    name = sanitize_name(raw, fallback, MAX_FOLDER_CHARS)
    return f"{name}_notes" if name in RESERVED_FOLDER_NAMES else name


def fit_stem(stem: str, folder: str) -> str:
    """`stem` shortened so that `folder/stem_NN.md` stays within MAX_PATH_CHARS."""
    room = max(MAX_PATH_CHARS - (len(folder) + 1 if folder else 0) - len("_99.md"), MIN_STEM_CHARS)
    return stem if len(stem) <= room else _cut(stem, room)


def memory_file_stem(title: str) -> str:
    stem = sanitize_name(title, fallback="memory")
    return f"{stem}_note" if stem in _RESERVED_FILE_STEMS else stem


def unique_name(name: str, taken: Iterable[str], suffix: str = "") -> str:
    """`name + suffix`, numbered if it collides case-insensitively with `taken`."""
    used = {t.casefold() for t in taken}
    candidate, n = f"{name}{suffix}", 2
    while candidate.casefold() in used:
        candidate, n = f"{name}_{n}{suffix}", n + 1
    return candidate
