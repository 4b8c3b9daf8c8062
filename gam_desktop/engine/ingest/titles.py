"""Titles that say what a note is about and what sets it apart from its neighbours.

A small model titles a passage with two words picked from anywhere in it ("glaze_must"),
or gives three passages of one document the same title; numbering them (`_2`, `_3`)
tells a reader nothing. So a title is checked against its passage without the LLM: one
whose words are not a phrase of the passage is replaced by the heading the passage sits
under (or the key words of its first sentence), and notes sharing a title get what
differs between them: their section heading, else the first words of their own; a
document's opening keeps the document's title when its other parts have words of their own.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
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
from gam_desktop.engine.textutil import STOPWORDS, WORD, initialism

ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# A line underlined by === or --- (plain text and reStructuredText write headings so).
SETEXT_HEADING = re.compile(r"^([^\n]*\w[^\n]*)\n[ \t]*(?:={3,}|-{3,})[ \t]*$", re.MULTILINE)
UNDERLINE = re.compile(r"={3,}|-{3,}")
TITLE_WORDS = 6  # words taken from a heading or a first sentence
HEADING_WORDS = 10  # a heading's words in a title: an author's heading is kept whole
OWN_WORDS = 2  # words that tell one note from the others sharing its title
LOOSE_WORDS = 4  # a title of more words than this says enough even if it paraphrases
VERSIONED = re.compile(r"[^\W_]+(?:\.[^\W_]+)*")  # "2.4" and "11.12" stay one word
LONG_TITLE_CHARS = 200  # a title's words before its file name is cut
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@functools.lru_cache(maxsize=16)
def headings(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, words) of every heading of a document, in order: `# x` lines and lines
    underlined with === or ---, section numbers left out ("B.4.1. Changes" -> "Changes")."""
    found = [(m.start(), m.group(1)) for m in ATX_HEADING.finditer(text)]
    found += [(m.start(), m.group(1)) for m in SETEXT_HEADING.finditer(text)]
    cleaned = [(at, _as_title(headline(words), text)) for at, words in found]
    return tuple(sorted((at, words) for at, words in cleaned if WORD.search(words)))


def _as_title(heading: str, text: str) -> str:
    """A heading as a title reads: a label in capitals before it that the text's sentences
    write otherwise ("TIP Pruning in frost", "BACK TO BASICS Graft unions") is left out,
    and a heading all in capitals ("WINTER WATERING") is written in title case; words the
    sentences write in capitals ("API", "UV") stay so."""
    words = heading.split(" ")
    shouted = [_in_capitals(w) and not _written_in_capitals(w, text) for w in words]
    label = next((i for i, s in enumerate(shouted) if not s), len(words))
    rest = words[label:]
    if label > 0 and any(c.islower() for w in rest for c in w):
        return " ".join(rest)
    if all(_in_capitals(w) or not any(c.isalpha() for c in w) for w in words):
        return " ".join(w.capitalize() if s else w for w, s in zip(words, shouted, strict=True))
    return heading


def _in_capitals(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def _written_in_capitals(word: str, text: str) -> bool:
    """Whether a line of `text` that is no heading and not all in capitals (a sentence)
    writes `word` in capitals: a name ("UV"), not a label ("TIP")."""
    core = re.escape(word.strip(".,:;!?()[]'\"’"))
    for line in re.findall(rf"^.*(?<![\w-]){core}(?![\w-]).*$", text, re.MULTILINE):
        if not ATX_HEADING.match(line) and any(c.islower() for c in line):
            return True
    return False


def section_heading(chunk: Chunk) -> str:
    """The heading the chunk's text sits under (the last one before its first line of
    text: "## Brakes", not the "# Servicing" just above it), else the first inside it, else
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
    a phrase of it (a small model's "glaze_must"). A title in words of its own
    ("drying_times") is a paraphrase, and stays."""
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
    """`title` followed by `words`, every word kept: the title a reader sees is written from
    them, and the file name is cut where it is written (`memory_file_stem`: words from the
    middle go, so what sets it apart, its end, stays)."""
    return sanitize_name("_".join([title, *words]), fallback=title, max_chars=LONG_TITLE_CHARS)


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
    title says that theirs do not ("1998", "draft"), else its own section heading, whole
    ("working with several hosts", not the "several hosts" that the others' headings
    lack), else the words its passage says most that theirs lack."""
    documents = {i: _words(document_title(chunks[i].source) or "") for i in members}
    headings = {i: _phrase(section_heading(chunks[i])) for i in members}
    texts = {i: _words(_unnumbered(chunks[i].text)) for i in members}
    found: dict[int, list[str]] = {}
    bare = []  # the members no document title or heading tells apart
    for i in members:
        taken, others = _Taken(titles[i]), [j for j in members if j != i]
        own = _own(i, others, documents, taken) or _own_heading(i, others, headings, taken)
        if not own:
            bare.append(i)
            own = _said_most(i, others, texts, taken)
        found[i] = own
    # A document's opening keeps the document's title when every other note has words of
    # its own: "Widget 2.4 notes", not "Widget 2.4 notes: release date" (the first words of
    # an opening's "Release date: …" that its later parts lack, saying nothing of it).
    openings = [i for i in bare if chunks[i].start == 0]
    if len(openings) == 1 and all(found[j] for j in members if j != openings[0]):
        found[openings[0]] = []
    return [found[i] for i in members]


def _said_most(i: int, others: list[int], texts: dict[int, list[str]], taken: _Taken) -> list[str]:
    """The words member i's passage says most often that no other member's passage says
    (in the order it first says them): what it is about, rather than whichever words
    happen to open it ("however", "whole")."""
    seen = {w for j in others for w in texts[j]}
    own = [w for w in texts[i] if w not in seen and w not in taken and not w.isdigit()]
    counts = Counter(own)
    picked = sorted(counts, key=lambda w: (-counts[w], own.index(w)))[:OWN_WORDS]
    return sorted(picked, key=own.index)


def _own_heading(
    i: int, others: list[int], headings: dict[int, list[str]], taken: _Taken
) -> list[str]:
    """Member i's section heading as it is written, less what the title already says at
    its start, when no other member's heading is the same."""
    words = headings[i]
    if not words or any(headings[j] == words for j in others):
        return []
    while words and (words[0] in taken or words[0] in STOPWORDS):
        words = words[1:]
    return words


def _unnumbered(text: str) -> str:
    """`text` with its headings' section numbers left out: "1.6" of "# 1.6. Lifecycle" says
    where a passage sits in its document, not what it is about."""
    return ATX_HEADING.sub(lambda m: headline(m.group(1)), text)  # only its words are read


def headline(words: str) -> str:
    return SECTION_NUMBER.sub("", " ".join(words.split())).strip()


def _words(text: str) -> list[str]:
    """The words of `text`, lowercase, versions whole, stopwords left out."""
    return [w.lower() for w in VERSIONED.findall(text) if w.lower() not in STOPWORDS]


def _phrase(text: str) -> list[str]:
    """The words of `text`, lowercase, versions whole, with the stopwords between them
    ("working with several hosts") but none at either end, at most `HEADING_WORDS`
    that are not stopwords."""
    words, content = [], 0
    for word in (w.lower() for w in VERSIONED.findall(text)):
        content += word not in STOPWORDS
        if content > HEADING_WORDS:
            break
        words.append(word)
    while words and words[-1] in STOPWORDS:
        words.pop()
    while words and words[0] in STOPWORDS:
        words.pop(0)
    return words


class _Taken:
    """The words a title already has: "3.0" is in "widget_3_0_notes"."""

    def __init__(self, title: str) -> None:
        self.parts = set(title.split("_"))

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        parts = set(re.split(r"[._]", word))
        return parts <= self.parts or {p.removesuffix("s") for p in parts} <= self.parts


def _own(i: int, others: list[int], words: dict[int, list[str]], taken: _Taken) -> list[str]:
    """The words of member i that no other member has (in order), when every other member
    differs from it; else none."""
    if any(words[j] == words[i] for j in others):
        return []
    seen = {w for j in others for w in words[j]}
    return [w for w in words[i] if w not in seen and w not in taken][:TITLE_WORDS]


def _ordinal(position: int) -> str:
    return ORDINALS[position] if position < len(ORDINALS) else f"{position + 1}th"


# Between two words of one written phrase: spaces, or one mark inside a word ("2.4",
# "Orla's", "read/write", "semi-final", "max_speed"). A colon, a full stop and a space,
# or a line break end a phrase.
_JOINER = re.compile(r"[ \t]+|[.'’/_-]")
_KEPT_MARKS = frozenset(":,;-–—&")  # what may separate two phrases of a title
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def written_title(slug: str, texts: Sequence[str]) -> str:
    """The title a reader sees, from the slug its file is named by: its words as `texts`
    (the document's title, the section's heading, the passage) write them, case, dots and
    apostrophes kept ("gizmo_2_4_user_guide" -> "Gizmo 2.4 User Guide",
    "orla_s_recipe_book" -> "Orla's Recipe Book"), in as few written phrases as can be; two
    phrases one after the other in a text keep what separates them there ("Part: Two"),
    and the whole of the first text (the document's title) is followed by a colon. A word
    no text writes stays as it is."""
    words = [w for w in slug.split("_") if w]
    if not words:
        return slug
    phrases = [_Phrases(text) for text in texts]
    title = ""
    previous: _Run | None = None
    for run in _cheapest_runs(words, phrases):
        t, first, last = run
        if t < 0:
            written, separator = initialism(words[first]), " "
        else:
            found = phrases[t]
            written = found.written(first, last, phrases)
            follows = previous is not None and previous[0] == t and previous[2] + 1 == first
            between = found.text[found.spans[first - 1][2] : found.spans[first][1]]
            kept = follows and "\n" not in between and set(between.strip()) <= _KEPT_MARKS
            separator = re.sub(r"\s+", " ", between) if kept and between.strip() else " "
            whole_title = previous is not None and previous[:2] == (0, 0)
            if whole_title and previous and previous[2] == len(phrases[0].spans) - 1 and t:
                separator = ": "  # the whole document title, then what this note is on
        title += (separator if title else "") + written
        previous = run
    return title[:1].upper() + title[1:]


_Run = tuple[int, int, int]  # (text, first token, last token); (-1, i, i): word i as is


def _cheapest_runs(words: Sequence[str], phrases: Sequence[_Phrases]) -> list[_Run]:
    """The fewest written phrases that say `words` in order: a phrase costs 1, a word no
    text writes 1.5, a phrase that starts inside a written word ("s" of "Orla's") 1.5, and
    a phrase that goes on where the one before it ended in the same text 0.75."""
    best: list[tuple[float, list[_Run]]] = [(0.0, [])] * (len(words) + 1)
    for i in range(len(words) - 1, -1, -1):
        options = [(1.5 + best[i + 1][0], [(-1, i, i), *best[i + 1][1]])]
        for t, found in enumerate(phrases):
            for first in found.at.get(words[i], ()):
                last = first
                while True:
                    n = last - first + 1
                    rest = best[i + n]
                    cost = 1.0 + 0.5 * found.mid_word[first] + rest[0]
                    if rest[1] and rest[1][0][:2] == (t, last + 1):  # the text goes on so
                        cost -= 0.25
                    options.append((cost, [(t, first, last), *rest[1]]))
                    if not found.continues(last, words, i + n):
                        break
                    last += 1
        best[i] = min(options, key=lambda option: option[0])
    return best[0][1]


class _Phrases:
    """A text's words, lowercase, with where each is written and whether it continues the
    word before it within one phrase."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        self.joined = [False] + [
            _JOINER.fullmatch(text[before[2] : after[1]]) is not None
            for before, after in itertools.pairwise(self.spans)
        ]
        # A word joined to the one before by a mark: the "s" of "Orla's", the "4" of "2.4".
        self.mid_word = [
            joined and not self.text[self.spans[i - 1][2] : self.spans[i][1]].isspace()
            for i, joined in enumerate(self.joined)
        ]
        self.at: dict[str, list[int]] = {}
        for position, (word, _start, _end) in enumerate(self.spans):
            self.at.setdefault(word, []).append(position)

    def written(self, first: int, last: int, others: Sequence[_Phrases]) -> str:
        """Tokens first..last as this text writes them; a text in lowercase only (a file
        name) takes each word's case from the other texts ("abc 2.0" -> "ABC 2.0")."""
        start, end = self.spans[first][1], self.spans[last][2]
        if self.text != self.text.lower():
            return self.text[start:end]
        cased: dict[str, str] = {}
        for other in reversed(others):  # the first text's writing wins
            if other is not self:
                cased.update((word, other.text[a:b]) for word, a, b in other.spans)
        return _TOKEN.sub(
            lambda m: cased.get(m.group(), initialism(m.group())), self.text[start:end]
        )

    def continues(self, last: int, words: Sequence[str], i: int) -> bool:
        """Whether the phrase ending at token `last` goes on with words[i]."""
        return (
            i < len(words)
            and last + 1 < len(self.spans)
            and self.joined[last + 1]
            and self.spans[last + 1][0] == words[i]
        )
