"""How big a build will be, before any LLM call: chunks, calls and tokens.

Documents are read and chunked without the LLM (no split advisor), so the figures
are close to, not exactly, what the build will do; the prompt overhead per call is
the measured one (tests/benchmarks/bench_build.py: about 1.3 prompt tokens per
input token with the default chunk sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gam_desktop.engine.build.chunking import Chunker
from gam_desktop.engine.build.documents import SourceDocument
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.textutil import plural

SYSTEM_PROMPT_TOKENS = 260  # the memorize prompt around each chunk
ORGANIZE_TOKENS_PER_CHUNK = 40


@dataclass
class Estimate:
    documents: int = 0
    chunks: int = 0
    input_tokens: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    unreadable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # What was read to make the estimate, so that the build does not parse it again: every
    # readable document (new or not), and each file's (mtime, size) when it was read.
    parsed: list[SourceDocument] = field(default_factory=list, repr=False)
    stamps: dict[str, tuple[int, int] | None] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        return (
            f"{plural(self.documents, 'document')}, about {plural(self.chunks, 'memory')}: "
            f"about {plural(self.llm_calls, 'LLM call')} and "
            f"{plural(self.prompt_tokens, 'prompt token')}"
        )


def estimate(docs: list[SourceDocument], config: ChunkConfig) -> Estimate:
    chunks = Chunker(config).chunk_documents(docs)
    tokens = sum(c.tokens for c in chunks)
    calls = len(chunks) + 1 + math.ceil(len(chunks) / 40) if chunks else 0
    prompt = tokens + len(chunks) * (SYSTEM_PROMPT_TOKENS + ORGANIZE_TOKENS_PER_CHUNK)
    return Estimate(len(docs), len(chunks), tokens, calls, prompt)
