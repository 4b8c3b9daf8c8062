"""Cutting documents into chunks.

Sections start at Markdown headers; a section over `max_tokens` is cut at
paragraphs, and a paragraph still over the limit goes to the LLM for split points
(falling back to sentence boundaries). Neighbouring pieces under `min_tokens`
merge. Chunks are spans of the document's text, so the original wording of every
memory can be recovered exactly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.llm.tokenizer import count_tokens
from gam_desktop.engine.models import ChunkConfig

_HEADER = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")

# Splits one oversize passage: (sentences, token counts, max_tokens) -> indices that
# start a new part, or None to use the sentence-boundary fallback.
SplitAdvisor = Callable[[Sequence[str], Sequence[int], int], list[int] | None]
ParallelMap = Callable[[Callable[[Any], Any], list[Any]], list[Any]]


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass
class Chunk:
    index: int
    source: SourceDocument
    start: int
    end: int
    tokens: int

    @property
    def text(self) -> str:
        return self.source.text[self.start : self.end]


def _trim(text: str, span: Span) -> Span | None:
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end) if end > start else None


def _cut(text: str, span: Span, pattern: re.Pattern[str], *, at_match_start: bool) -> list[Span]:
    """Split `span` of `text` where `pattern` matches, dropping empty pieces."""
    pieces, cursor = [], span.start
    for match in pattern.finditer(text, span.start, span.end):
        cut = match.start() if at_match_start else match.end()
        if cut > cursor:
            pieces.append(Span(cursor, cut))
            cursor = cut
    pieces.append(Span(cursor, span.end))
    return [t for p in pieces if (t := _trim(text, p))]


class Chunker:
    def __init__(self, config: ChunkConfig, advisor: SplitAdvisor | None = None) -> None:
        self.config = config
        self.advisor = advisor

    def tokens(self, text: str) -> int:
        return count_tokens(text)

    def segment(self, doc: SourceDocument) -> list[Span]:
        """Header sections, cut at paragraphs where too long. Oversize paragraphs remain."""
        whole = _trim(doc.text, Span(0, len(doc.text)))
        if whole is None:
            return []
        units: list[Span] = []
        for section in _cut(doc.text, whole, _HEADER, at_match_start=True):
            if self.tokens(doc.text[section.start : section.end]) <= self.config.max_tokens:
                units.append(section)
            else:
                paragraphs = _cut(doc.text, section, _PARAGRAPH_BREAK, at_match_start=False)
                units.extend(self._pack(doc.text, paragraphs, absorb_small=True))
        return units

    def _pack(self, text: str, parts: list[Span], absorb_small: bool = False) -> list[Span]:
        """Greedy packing of consecutive parts up to max_tokens (an oversize part stays alone)."""
        packed: list[Span] = []
        current: Span | None = None
        for part in parts:
            # A small piece (typically a header line) joins what follows even when that
            # overflows: the oversize result is split at sentences afterwards anyway.
            small = (
                absorb_small
                and current is not None
                and (self.tokens(text[current.start : current.end]) < self.config.min_tokens)
            )
            if current and (
                small or self.tokens(text[current.start : part.end]) <= self.config.max_tokens
            ):
                current = Span(current.start, part.end)
                continue
            if current:
                packed.append(current)
            current = part
        if current:
            packed.append(current)
        return packed

    def split_oversize(self, text: str, span: Span) -> list[Span]:
        """Cut one passage over the limit at the advisor's split points, else at sentence
        boundaries; a sentence still over the limit is cut by characters."""
        sentences = _cut(text, span, _SENTENCE_END, at_match_start=False)
        counts = [self.tokens(text[s.start : s.end]) for s in sentences]
        starts = None
        if self.advisor and len(sentences) > 1:
            starts = self.advisor(
                [text[s.start : s.end] for s in sentences], counts, self.config.max_tokens
            )
        parts = (self._parts_from_starts(sentences, starts) if starts else None) or [span]
        result: list[Span] = []
        for part in parts:
            if self.tokens(text[part.start : part.end]) <= self.config.max_tokens:
                result.append(part)
                continue
            inside = [s for s in sentences if part.start <= s.start < part.end]
            for piece in self._pack(text, inside):
                if self.tokens(text[piece.start : piece.end]) > self.config.max_tokens:
                    result.extend(self._pack(text, self._hard_split(text, piece)))
                else:
                    result.append(piece)
        return result

    @staticmethod
    def _parts_from_starts(sentences: list[Span], starts: list[int]) -> list[Span] | None:
        valid = sorted({i for i in starts if 0 < i < len(sentences)})
        if not valid:
            return None
        bounds = [0, *valid, len(sentences)]
        return [
            Span(sentences[a].start, sentences[b - 1].end) for a, b in itertools.pairwise(bounds)
        ]

    def _hard_split(self, text: str, span: Span) -> list[Span]:
        """A run with no sentence ends (a table, a giant line): cut by characters."""
        pieces, start = [], span.start
        limit = self.config.max_tokens
        while start < span.end:
            end = min(span.end, start + limit * 2)
            while end > start + 1 and self.tokens(text[start:end]) > limit:
                end = start + (end - start) * 3 // 4
            pieces.append(Span(start, end))
            start = end
        return [t for p in pieces if (t := _trim(text, p))]

    def merge_small(self, text: str, units: list[Span]) -> list[Span]:
        """Merge pieces under min_tokens into their neighbours while the result fits."""
        merged: list[Span] = []
        for unit in units:
            if merged:
                last = merged[-1]
                small = (
                    self.tokens(text[last.start : last.end]) < self.config.min_tokens
                    or self.tokens(text[unit.start : unit.end]) < self.config.min_tokens
                )
                if small and self.tokens(text[last.start : unit.end]) <= self.config.max_tokens:
                    merged[-1] = Span(last.start, unit.end)
                    continue
            merged.append(unit)
        return merged

    def chunk_documents(
        self, docs: Sequence[SourceDocument], parallel_map: ParallelMap | None = None
    ) -> list[Chunk]:
        """Chunks of all documents with sequential indices; oversize passages are split
        through `parallel_map` so their LLM calls run on the worker pool."""
        run = parallel_map or (lambda fn, items: [fn(item) for item in items])
        segmented = [(doc, self.segment(doc)) for doc in docs]
        oversize = [
            (doc, unit)
            for doc, units in segmented
            for unit in units
            if self.tokens(doc.text[unit.start : unit.end]) > self.config.max_tokens
        ]
        splits = run(lambda job: self.split_oversize(job[0].text, job[1]), oversize)
        replacement = {
            (id(doc), unit): parts for (doc, unit), parts in zip(oversize, splits, strict=True)
        }
        chunks: list[Chunk] = []
        for doc, units in segmented:
            resolved = [p for u in units for p in replacement.get((id(doc), u), [u])]
            for span in self.merge_small(doc.text, resolved):
                tokens = self.tokens(doc.text[span.start : span.end])
                chunks.append(Chunk(len(chunks), doc, span.start, span.end, tokens))
        return chunks
