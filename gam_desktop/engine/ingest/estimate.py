"""How big a build will be, before any LLM call: chunks, calls, tokens, time and cost.

Documents are read and chunked without the LLM (no split advisor), so the figures
are close to, not exactly, what the build will do; the prompt overhead per call is
the measured one (tests/benchmarks/bench_build.py: about 1.3 prompt tokens per
input token with the default chunk sizes). The time is the memorize calls spread over
the workers plus each step's planning calls, at the seconds per call measured in this
memory's last add (else a typical hosted model's); the cost comes from the price table
(llm/prices.py) when the provider is in it. Chunks whose memories an unfinished add kept
(ingest/resume.py) cost nothing.
"""

from __future__ import annotations

import math
from collections.abc import Set
from dataclasses import dataclass, field

from gam_desktop.engine.ingest.chunking import Chunker
from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.ingest.resume import PendingAdd
from gam_desktop.engine.llm.prices import Price
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.textutil import plural

SYSTEM_PROMPT_TOKENS = 260  # the memorize prompt around each chunk
ORGANIZE_TOKENS_PER_CHUNK = 40
MEMORIZE_OUTPUT_TOKENS = 250  # a memory's JSON (title, summary, tldr)
SECONDS_PER_CALL = 6.0  # a hosted small model writing one memory, when nothing was measured
CALLS_PER_STEP = 2  # a plan or a placement, and READMEs: made one after the other


@dataclass(frozen=True)
class Pace:
    """What the time and cost depend on: parallel calls, seconds per call (measured or
    assumed), the model and its price (None: unknown)."""

    workers: int = 8
    seconds_per_call: float = SECONDS_PER_CALL
    measured: bool = False
    model: str = ""
    price: Price | None = None


@dataclass
class Estimate:
    documents: int = 0
    chunks: int = 0
    input_tokens: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    steps: int = 1  # operations the drop is committed in
    step_documents: int = 0
    seconds: float = 0.0
    cost: float | None = None  # None: the provider's price is not known
    currency: str = "USD"
    model: str = ""
    unreadable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # An unfinished add of (some of) these documents: resuming it reuses what it paid for.
    resume: PendingAdd | None = None
    # What was read to make the estimate, so that the build does not parse it again: every
    # readable document (new or not), and each file's (mtime, size) when it was read.
    parsed: list[SourceDocument] = field(default_factory=list, repr=False)
    stamps: dict[str, tuple[int, int] | None] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """ "60 documents, about 64 memories: about 70 LLM calls, 40,000 prompt and 16,000
        completion tokens, about 2 minutes and about $0.02 at gpt-4o-mini's price; added in
        3 steps of 25 documents, each usable as soon as it is done"."""
        if self.completion_tokens:
            tokens = (
                f"{self.prompt_tokens:,} prompt and {self.completion_tokens:,} completion tokens"
            )
        else:
            tokens = plural(self.prompt_tokens, "prompt token")
        parts = [f"about {plural(self.llm_calls, 'LLM call')}", tokens]
        if self.seconds:
            parts.append(duration(self.seconds))
        if self.cost is not None:
            parts.append(f"{money(self.cost, self.currency)} at {self.model}'s price")
        text = (
            f"{plural(self.documents, 'document')}, about {plural(self.chunks, 'note')}: "
            + ", ".join(parts[:-1])
            + f" and {parts[-1]}"
        )
        if self.steps > 1:
            text += (
                f"; added in {plural(self.steps, 'step')} of {self.step_documents} documents, "
                "each usable as soon as it is done"
            )
        return text


def duration(seconds: float) -> str:
    """ "about 25 minutes", as a person says it."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "less than a minute"
    if minutes < 90:
        return f"about {plural(minutes, 'minute')}"
    return f"about {seconds / 3600:.1f} hours"


def money(amount: float, currency: str) -> str:
    if currency == "USD":
        return "less than $0.01" if amount < 0.01 else f"about ${amount:,.2f}"
    return f"less than 0.01 {currency}" if amount < 0.01 else f"about {amount:,.2f} {currency}"


def estimate(
    docs: list[SourceDocument],
    config: ChunkConfig,
    *,
    kept: Set[str] = frozenset(),
    step_documents: int = 0,
    pace: Pace | None = None,
) -> Estimate:
    """The size of adding `docs`; the chunks of documents in `kept` (their memories kept
    by an unfinished add) need no call."""
    pace = pace or Pace(seconds_per_call=0.0)
    chunks = Chunker(config).chunk_documents(docs)
    paid = [c for c in chunks if c.source.content_hash not in kept]
    tokens = sum(c.tokens for c in paid)
    steps = math.ceil(len(docs) / step_documents) if step_documents and docs else 1
    serial = steps * CALLS_PER_STEP if chunks else 0
    calls = len(paid) + serial + math.ceil(len(chunks) / 40) if chunks else 0
    prompt = tokens + len(paid) * SYSTEM_PROMPT_TOKENS + len(chunks) * ORGANIZE_TOKENS_PER_CHUNK
    completion = len(paid) * MEMORIZE_OUTPUT_TOKENS + len(chunks) * ORGANIZE_TOKENS_PER_CHUNK
    seconds = (math.ceil(len(paid) / max(1, pace.workers)) + serial) * pace.seconds_per_call
    price = pace.price
    return Estimate(
        len(docs),
        len(chunks),
        tokens,
        calls,
        prompt,
        completion,
        steps,
        step_documents if steps > 1 else 0,
        seconds,
        price.cost(prompt, completion) if price else None,
        price.currency if price else "USD",
        pace.model,
    )
