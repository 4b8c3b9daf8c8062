"""The read path (seed 003 §3): the memory's passages for a request, as a system message.

BM25 over every file the corpus holds (memories, their original wording, READMEs,
conversations and facts: `SearchIndex.search`, no second index), then each candidate's
score is blended with how recent it is, `(1 - w) * relevance + w * exp(-age / 30 days)`,
and Maximal Marginal Relevance over token overlap keeps five near-identical facts from
filling the message. The chosen passages go in as one system message, each under its
file path, so the model (and the person reading the reply) can name where it came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gam_desktop.engine.api import (
    CorpusFile,
    MemoryTools,
    memory_of,
    passage_of,
    search_terms,
    time_of,
)

PREAMBLE = (
    "Passages from the user's memory (GAM), most relevant first, each under its file path. "
    "Use them when they help to answer; they may be incomplete or out of date, and the "
    "user's own instructions come first."
)
PASSAGE_CHARS = 1200  # a memory is a paragraph; a conversation or a README can be long


@dataclass(frozen=True)
class ReadOptions:
    top_k: int = 5
    pool: int = 3  # candidates per result taken from BM25 before reranking
    recency_weight: float = 0.2
    half_life_days: float = 30.0  # the e-folding time of recency, as in seed 003
    mmr_lambda: float = 0.7


@dataclass(frozen=True)
class Passage:
    path: str  # the file, relative to the memory's root (a memory, not its #original)
    label: str  # what it is: its title, "a fact the user stated on 2026-01-02", …
    text: str
    score: float


def passages(
    tools: MemoryTools,
    query: str,
    options: ReadOptions,
    now: datetime | None = None,
    *,
    refresh: bool = True,
) -> list[Passage]:
    """The best `options.top_k` passages for `query`, relevance and recency blended,
    near-duplicates removed. Without `refresh` the tools are read as they are (someone
    else keeps them fresh: `serve.index.FreshIndex`)."""
    if not query.strip():
        return []
    if refresh:
        tools.corpus.refresh_if_stale()
    hits = tools.index.search(query, options.top_k * options.pool)
    if not hits:
        return []
    files = tools.corpus.snapshot()
    best = hits[0].score or 1.0
    now = now or datetime.now(UTC)
    scored: dict[str, tuple[float, CorpusFile]] = {}
    for hit in hits:
        path = memory_of(hit.path)
        file = files.get(path)
        if path in scored or file is None:  # a memory and its original count once
            continue
        relevance = hit.score / best
        fresh = _recency(path, file, now, options.half_life_days)
        weight = options.recency_weight
        scored[path] = ((1 - weight) * relevance + weight * fresh, file)
    chosen = _mmr(scored, options.top_k, options.mmr_lambda)
    return [_passage(path, *scored[path]) for path in chosen]


def _recency(path: str, file: CorpusFile, now: datetime, half_life: float) -> float:
    """exp(-age / half_life) from the front matter's time (a fact's update, a
    conversation's start), else the file's modification time."""
    when = time_of(file.text)
    if when is None:
        when = datetime.fromtimestamp(file.mtime_ns / 1e9, UTC)
    age_days = max(0.0, (now - when).total_seconds() / 86400)
    return math.exp(-age_days / half_life)


def _mmr(scored: dict[str, tuple[float, CorpusFile]], top_k: int, lam: float) -> list[str]:
    """Maximal Marginal Relevance: λ·score − (1 − λ)·(largest overlap with one chosen),
    the overlap being the Jaccard index of the two files' token sets."""
    tokens = {path: search_terms(file.text) for path, (_, file) in scored.items()}
    chosen: list[str] = []
    left = sorted(scored, key=lambda p: -scored[p][0])
    while left and len(chosen) < top_k:

        def gain(path: str) -> float:
            overlap = max((_jaccard(tokens[path], tokens[c]) for c in chosen), default=0.0)
            return lam * scored[path][0] - (1 - lam) * overlap

        pick = max(left, key=gain)
        chosen.append(pick)
        left.remove(pick)
    return chosen


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _passage(path: str, score: float, file: CorpusFile) -> Passage:
    label, text = passage_of(path, file.text)
    text = " ".join(text.split())
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
    return Passage(path, label, text, round(score, 4))


def system_message(found: list[Passage]) -> str:
    """The passages as the text of one system message."""
    blocks = [f"### {p.path} ({p.label})\n{p.text}" for p in found]
    return "\n\n".join([PREAMBLE, *blocks])


def inject(messages: list[dict[str, Any]], found: list[Passage]) -> list[dict[str, Any]]:
    """`messages` with the passages as a system message. A client's own leading system
    message is kept and follows the passages in the same message: several chat templates
    (Mistral's, Gemma's) refuse a second system message or one after the first turn."""
    if not found:
        return messages
    memory = system_message(found)
    first = messages[0] if messages else None
    if (
        first is not None
        and first.get("role") == "system"
        and isinstance(first.get("content"), str)
    ):
        return [{**first, "content": f"{memory}\n\n---\n\n{first['content']}"}, *messages[1:]]
    return [{"role": "system", "content": memory}, *messages]


def query_of(messages: list[dict[str, Any]]) -> str:
    """What to search for: the last user message's text (a list of parts: their text)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": …}, {"type": "image_url", …}]
        return "\n".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""
