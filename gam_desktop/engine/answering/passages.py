"""Retrieval for answering: the question's best passages, each a window of a file's text
(a memory's original wording where it has one: the facts are there, word for word).

The search index ranks files (BM25, fused with embeddings where the memory has them); a
file's window is the run of its sentences around the one sharing the most of the question's
rarer words, with the heading it sits under. At most a few windows come from one document,
so a question about several documents sees each of them."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from gam_desktop.engine.answering.lexicon import FUNCTION_WORDS
from gam_desktop.engine.ask.corpus import ORIGINAL, CorpusFile, memory_of
from gam_desktop.engine.ask.evidence import source_name
from gam_desktop.engine.ask.search import query_terms, tokenize
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.chats.record import user_words
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR
from gam_desktop.engine.store.markdown import README, parse_memory

PASSAGES = 5  # windows shown to the model (as many as a one-call retrieval shows)
PER_DOCUMENT = 2  # windows of one document at most, while others have hits
WINDOW_WORDS = 100  # words of a window: a fact with its context, short for a small model
CANDIDATES = 30  # files read from the search before choosing
_UNIT = re.compile(r"\n\s*\n|\n(?=\s*(?:[#>|*-]|\d+[.)]))|(?<=[.!?])\s+(?=[\"“(\[A-Z0-9])")
_HEADING = re.compile(r"^\s*#{1,6}\s+\S")
_IDENTIFIER = re.compile(r"\w*\d\w*(?:[._-]\w+)+|\w+(?:[._-]\w+)*[._-]\d\w*|\w*[a-z]\d\w*", re.I)
_CAPITALIZED = re.compile(r"(?<![\w'’.-])([A-Z][\w'’-]*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*$")
RARE_SHARE = 0.5  # a name in fewer than this share of the files tells documents apart
_LABEL = re.compile(r"^\[([^\]\n]{1,300})\]\n")  # an original's "[document — title]" line


@dataclass(frozen=True)
class Passage:
    number: int
    memory: str  # the memory file it comes from: what a citation names
    document: str  # its source document as a reader names it ("" for a README)
    label: str  # what the model is told it is ("Widget 2.1 manual — Setup")
    text: str

    def render(self) -> str:
        return f"[{self.number}] ({self.label})\n{self.text}"


def retrieve(tools: MemoryTools, question: str, limit: int = PASSAGES) -> list[Passage]:
    """The question's best windows, best first, numbered from 1."""
    files = tools.corpus.snapshot()
    texts: dict[str, tuple[str, str]] = {}  # memory -> (label, text), in search order
    for hit in tools.index.search(question, top_k=CANDIDATES):
        memory = memory_of(hit.path)
        if memory not in texts and (shown := _shown(files, memory)) is not None:
            texts[memory] = shown
    weights = _weights(question, [text for _, text in texts.values()])
    chosen: list[Passage] = []
    per_document: Counter[str] = Counter()
    # A file holding the question's identifiers as written ("15.4", "utf-8", "GPL-3") comes
    # first, one whose name holds them before one that only mentions them (a document is
    # about what its name says; look-alikes mention each other): the search splits them into
    # digits that every look-alike holds. A README lists what its folder holds: it matches
    # a question's words without stating facts, so it only fills places no memory took.
    asked = identifiers(question)
    ordered = sorted(
        texts.items(),
        key=lambda item: (
            -_held(asked, item[1][0]),
            -_held(asked, item[1][1]),
            item[0].endswith(README),
        ),
    )
    for memory, (label, text) in ordered:
        document = source_name(files, memory)
        if per_document[document or memory] >= PER_DOCUMENT:
            continue
        per_document[document or memory] += 1
        window = best_window(text, weights)
        chosen.append(Passage(len(chosen) + 1, memory, document, label, window))
        if len(chosen) == limit:
            break
    return chosen


def identifiers(text: str) -> set[str]:
    """The words of `text` written with digits or joined by dots, dashes or underscores
    ("15.4", "3.0", "gpl-3", "sqlite3_open"), lowercased."""
    return {m.lower() for m in _IDENTIFIER.findall(text)}


def names(question: str) -> set[str]:
    """The words `question` writes with a capital where a sentence does not start, and words
    written with a capital inside ("SQLite", "GPL") anywhere, lowercased, possessives off:
    in English, the names of things."""
    found = set()
    for match in _CAPITALIZED.finditer(question):
        word = re.sub(r"['’]s?$", "", match.group(1))
        inner_capital = any(c.isupper() for c in word[1:])
        starts = _SENTENCE_START.search(question[: match.start()]) is not None
        if (inner_capital or not starts) and word.lower() not in FUNCTION_WORDS:
            found.add(word.lower())
    return found


def rare_names(tools: MemoryTools, question: str, share: float = RARE_SHARE) -> set[str]:
    """The names of `question` that fewer than `share` of the memory's files hold: they
    tell one document from its look-alikes ("Osprine" among companies), where a name every
    file holds ("SQLite" in SQLite's manual) tells nothing. A name no file holds is rare."""
    total = len(tools.corpus.snapshot())
    rare = set()
    for name in names(question):
        terms = tokenize(name)
        if terms and len(tools.index.containing(terms)) < share * total:
            rare.add(name)
    return rare


def _held(asked: set[str], text: str) -> int:
    """How many of the `asked` identifiers `text` writes as whole words."""
    return sum(holds(text, a) for a in asked)


def holds(text: str, identifier: str) -> bool:
    """Whether `text` writes `identifier` as a whole word ("3.1" is not in "3.10")."""
    pattern = rf"(?<![\w.-]){re.escape(identifier)}(?![\w-]|\.\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _shown(files: Mapping[str, CorpusFile], memory: str) -> tuple[str, str] | None:
    """A file's label and the text a window is cut from: a memory's original wording (its
    summary when it has none), a README's body, what the person said in a conversation."""
    own = files.get(memory)
    if own is None:
        return None
    parsed = parse_memory(own.text)
    title = str(parsed.front.get("title") or memory.rsplit("/", 1)[-1].removesuffix(".md"))
    document = source_name(files, memory)
    label = f"{document} — {title}" if document else f"{memory}: {title}"
    original = files.get(memory + ORIGINAL)
    if original is not None:
        return label, _LABEL.sub("", original.text, count=1).strip()
    if memory.startswith(CONVERSATIONS_DIR + "/"):
        said = user_words(own.text)
        return (label, said) if said else None
    return label, parsed.body.strip()


def _weights(question: str, texts: list[str]) -> dict[str, float]:
    """Each question term's weight: rarer among the candidates' sentences, heavier."""
    terms = set(query_terms(question))
    units = [set(tokenize(u)) for text in texts for u in units_of(text)]
    count = max(len(units), 1)
    return {t: math.log(1 + count / (1 + sum(t in u for u in units))) for t in terms}


def units_of(text: str) -> list[str]:
    """Sentences, list items, table rows and headings, in order."""
    return [u.strip() for u in _UNIT.split(text) if u and u.strip()]


def best_window(text: str, weights: Mapping[str, float], words: int = WINDOW_WORDS) -> str:
    """The run of `text`'s units around its best one, about `words` long, within the section
    it belongs to and under that section's heading."""
    units = units_of(text)
    if sum(len(u.split()) for u in units) <= words:
        return text.strip()
    scores = [sum(weights.get(t, 0.0) for t in set(tokenize(u))) for u in units]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    start, end, size = best, best + 1, len(units[best].split())
    forward = backward = True
    while size < words and (forward or backward):
        forward = forward and end < len(units) and not _HEADING.match(units[end])
        if forward:  # what follows the best sentence first: it goes on from it
            size += len(units[end].split())
            end += 1
        backward = backward and start > 0 and not _HEADING.match(units[start])
        if backward and size < words:
            start -= 1
            size += len(units[start].split())
    heading = next((units[i] for i in range(start, -1, -1) if _HEADING.match(units[i])), None)
    kept = ([heading] if heading and heading != units[start] else []) + units[start:end]
    return "\n".join(kept)
