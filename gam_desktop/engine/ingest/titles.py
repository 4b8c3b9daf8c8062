"""Titles that say what a note is about and what sets it apart from its neighbours.

A small model titles a passage with two words picked from anywhere in it ("pasta_must"),
or gives three passages of one document the same title; numbering them (`_2`, `_3`)
tells a reader nothing. So a title is checked against its passage without the LLM: one
whose words are not a phrase of the passage is replaced by the heading the passage sits
under (or the key words of its first sentence), and notes sharing a title get what
differs between them: their section heading, else the first words of their own.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

from gam_desktop.engine.ingest.chunking import Chunk
from gam_desktop.engine.ingest.context import (
    SECTION_NUMBER,
    DocumentContext,
    document_title,
    prose_sentences,
)
from gam_desktop.engine.store.describing import is_generic_name
from gam_desktop.engine.store.naming import sanitize_name
from gam_desktop.engine.textutil import STOPWORDS, WORD

ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# A line underlined by === or --- (plain text and reStructuredText write headings so).
SETEXT_HEADING = re.compile(r"^([^\n]*\w[^\n]*)\n[ \t]*(?:={3,}|-{3,})[ \t]*$", re.MULTILINE)
UNDERLINE = re.compile(r"={3,}|-{3,}")
TITLE_WORDS = 6  # words taken from a heading or a first sentence
OWN_WORDS = 2  # words that tell one note from the others sharing its title
LOOSE_WORDS = 4  # a title of more words than this says enough even if it paraphrases
VERSIONED = re.compile(r"[^\W_]+(?:\.[^\W_]+)*")  # "3.0" and "15.10" stay one word
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@functools.lru_cache(maxsize=16)
def headings(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, words) of every heading of a document, in order: `# x` lines and lines
    underlined with === or ---, section numbers left out ("E.12.2. Changes" -> "Changes")."""
    found = [(m.start(), m.group(1)) for m in ATX_HEADING.finditer(text)]
    found += [(m.start(), m.group(1)) for m in SETEXT_HEADING.finditer(text)]
    cleaned = [(at, SECTION_NUMBER.sub("", " ".join(words.split())).strip()) for at, words in found]
    return tuple(sorted((at, words) for at, words in cleaned if WORD.search(words)))


def section_heading(chunk: Chunk) -> str:
    """The heading the chunk's text sits under (the last one before its first line of
    text: "## Rotation", not the "# Policy" just above it), else the first inside it, else
    a short first line without a full stop (a plain-text title)."""
    start = chunk.start + _text_start(chunk.text)
    found = headings(chunk.source.text)
    above = [words for at, words in found if at <= start]
    if above:
        return above[-1]
    inside = [words for at, words in found if at < chunk.end]
    if inside:
        return inside[0]
    first_line = chunk.text.strip().split("\n", 1)[0].strip()
    short = len(first_line.split()) <= TITLE_WORDS + 2
    return first_line if short and not first_line.endswith((".", "!", "?", ":")) else ""


def _text_start(text: str) -> int:
    """Where the first line that is neither blank nor a heading (nor its underline) starts."""
    offset = 0
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        heading = (
            ATX_HEADING.match(line.rstrip("\n"))
            or UNDERLINE.fullmatch(line.strip())
            or UNDERLINE.fullmatch(following)
        )
        if line.strip() and not heading:
            return offset
        offset += len(line)
    return offset


def content_words(text: str) -> list[str]:
    """The words of `text` in order, lowercase, stopwords left out."""
    return [w.lower() for w in WORD.findall(text) if w.lower() not in STOPWORDS]


def says_little(title: str, passage: str, context: DocumentContext) -> bool:
    """Whether a title fails to say what its passage is about: nothing but the subject or
    empty words ("overview"), or a few words picked from the passage no two of which make
    a phrase of it (a small model's "pasta_must"). A title in words of its own
    ("response_times") is a paraphrase, and stays."""
    subject = {w.lower() for w in context.subject} | set(context.label.split("_"))
    words = [w for w in title.split("_") if w and w not in STOPWORDS | subject]
    words = [w for w in words if not w.isdigit()]
    if not words or is_generic_name("_".join(words)):
        return True
    sequence = content_words(passage)
    picked = [w for w in words if w in sequence]
    if len(words) > LOOSE_WORDS or len(picked) < 2:  # said in its own words: a paraphrase
        return False
    pairs = set(itertools.pairwise(sequence))
    return not any({(a, b), (b, a)} & pairs for a, b in itertools.pairwise(words))


def passage_title(chunk: Chunk, heading: str | None = None) -> str:
    """A title from the passage itself: its section heading, else the key words of its
    first sentence, in their order."""
    heading = section_heading(chunk) if heading is None else heading
    words = content_words(heading)
    for sentence in prose_sentences(chunk.text) if not words else ():
        words = [w for w in content_words(sentence) if not w.isdigit()]
        if len(words) >= 2:  # "5." or "Definitions." alone say little
            break
    return sanitize_name("_".join(words[:TITLE_WORDS]), fallback="passage")


def joined(title: str, words: Sequence[str]) -> str:
    """`title` followed by `words`; a long title loses words from its middle, so what
    sets it apart (its end) stays."""
    return sanitize_name("_".join([title, *words]), fallback=title)


def distinguish(titles: Sequence[str], chunks: Sequence[Chunk]) -> list[str]:
    """Titles unique within the batch (case-insensitively), never by `_2`: each note of a
    group sharing a title gets its section heading when that is its own in the group, else
    the first words of its passage that the others lack."""
    result = list(titles)
    for _round in range(3):  # a title made unique may meet another one
        groups = _groups(result)
        if not groups:
            return result
        for members in groups:
            for i, words in zip(members, _what_differs(members, result, chunks), strict=True):
                result[i] = joined(result[i], words)
    for members in _groups(result):  # identical passages: only their order tells them apart
        for position, i in enumerate(members):
            result[i] = joined(result[i], [_ordinal(position), "part"])
    return result


def _groups(titles: Sequence[str]) -> list[list[int]]:
    by_title: dict[str, list[int]] = {}
    for i, title in enumerate(titles):
        by_title.setdefault(title.casefold(), []).append(i)
    return [members for members in by_title.values() if len(members) > 1]


def _what_differs(
    members: Sequence[int], titles: Sequence[str], chunks: Sequence[Chunk]
) -> list[list[str]]:
    """Per member, the words that set it apart from the other members: what its document's
    title says that theirs do not ("2023", "spring"), else its own section heading, else
    the first words of its passage that theirs lack."""
    kinds = (
        {i: _words(document_title(chunks[i].source) or "") for i in members},
        {i: _words(section_heading(chunks[i])) for i in members},
    )
    texts = {i: _words(chunks[i].text) for i in members}
    differing = []
    for i in members:
        taken = _Taken(titles[i])
        others = [j for j in members if j != i]
        found = next((own for kind in kinds if (own := _own(i, others, kind, taken))), None)
        if found is None:
            seen = {w for j in others for w in texts[j]}
            own = [w for w in dict.fromkeys(texts[i]) if w not in seen and w not in taken]
            found = ([w for w in own if not w.isdigit()] or own)[:OWN_WORDS]
        differing.append(found)
    return differing


def _words(text: str) -> list[str]:
    """The words of `text`, lowercase, versions whole, stopwords left out."""
    return [w.lower() for w in VERSIONED.findall(text) if w.lower() not in STOPWORDS]


class _Taken:
    """The words a title already has: "3.0" is in "widget_3_0_notes"."""

    def __init__(self, title: str) -> None:
        self.parts = set(title.split("_"))

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and set(re.split(r"[._]", word)) <= self.parts


def _own(i: int, others: list[int], words: dict[int, list[str]], taken: _Taken) -> list[str]:
    """The words of member i that no other member has (in order), when every other member
    differs from it; else none."""
    if any(words[j] == words[i] for j in others):
        return []
    seen = {w for j in others for w in words[j]}
    return [w for w in words[i] if w not in seen and w not in taken][:TITLE_WORDS]


def _ordinal(position: int) -> str:
    return ORDINALS[position] if position < len(ORDINALS) else f"{position + 1}th"
