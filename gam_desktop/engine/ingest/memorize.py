"""Memory generation and LLM split points, with fallbacks.

A call that keeps failing (LLMCallFailed) is replaced by an extractive fallback
so one bad chunk does not sink a build of hundreds; the memory is marked
`fallback: true`, with why (`fallback_reason`: the call's error, its secrets out), and the
report says how many were made that way. Fatal errors
(unreachable server, refused key, cancel) propagate and abort the operation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import Any

from gam_desktop.engine.ingest.chunking import Chunk, SplitAdvisor
from gam_desktop.engine.ingest.context import (
    DocumentContext,
    document_context,
    one_sentence,
    opening,
    prose_sentences,
    says_something,
    stated_tldr,
    with_subject_text,
    with_subject_title,
    without_repeats,
    without_talk_about_the_text,
    without_tldr,
)
from gam_desktop.engine.ingest.documents import normalize, sha256_hex
from gam_desktop.engine.ingest.faithful import faithful
from gam_desktop.engine.ingest.prompts import (
    MemoryDraft,
    SplitPlan,
    memorize_messages,
    split_messages,
)
from gam_desktop.engine.ingest.resume import NO_RESULTS, StageResults
from gam_desktop.engine.ingest.titles import (
    distinguish,
    passage_title,
    says_little,
    section_heading,
    written_title,
)
from gam_desktop.engine.llm import LLM, LLMCallFailed
from gam_desktop.engine.llm.protocol import Messages
from gam_desktop.engine.llm.redact import known
from gam_desktop.engine.models import MemorizedChunk, utc_now
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.store.naming import sanitize_name, stored_name
from gam_desktop.engine.textutil import first_sentence

log = logging.getLogger(__name__)
FALLBACK_CHARS = 1200  # of the passage's prose in a memory written without the LLM
FALLBACK_REASON = "fallback_reason"  # the front matter's why: the last error of its call
REASON_CHARS = 300


def fallback_reason(exc: Exception) -> str:
    """Why a memory was written without the LLM, as its front matter keeps it: the error on
    one line, cut, with every secret this process knows taken out (the client redacted the
    key already; this is the last line of defence, as for the logs)."""
    said = " ".join(known(str(exc)).split()) or type(exc).__name__
    return said if len(said) <= REASON_CHARS else said[: REASON_CHARS - 1].rstrip() + "…"


def fallback_draft(chunk: Chunk) -> MemoryDraft:
    """A memory without the LLM: the passage's heading as title, its prose as text."""
    prose = " ".join(prose_sentences(chunk.text)) or " ".join(chunk.text.split())
    memory = prose if len(prose) <= FALLBACK_CHARS else prose[: FALLBACK_CHARS - 1].rstrip() + "…"
    return MemoryDraft(title=passage_title(chunk), memory=memory, tldr=first_sentence(memory))


class MemorizeRequests:
    """The memorize request of each chunk, its document's context made once per document."""

    def __init__(self) -> None:
        self.contexts: dict[str, DocumentContext] = {}

    def context(self, chunk: Chunk) -> DocumentContext:
        source = chunk.source
        if source.content_hash not in self.contexts:
            self.contexts[source.content_hash] = document_context(source)
        return self.contexts[source.content_hash]

    def messages(self, chunk: Chunk) -> Messages:
        return memorize_messages(chunk.text, self.context(chunk).describe(chunk.source.name))


def already_memorized(chunks: Sequence[Chunk], results: StageResults) -> int:
    """How many of `chunks` have their memory kept from an earlier run (no call needed)."""
    requests = MemorizeRequests()
    keys = [results.key("memorize", requests.messages(c), MemoryDraft) for c in chunks]
    kept = results.kept(keys)
    return sum(1 for key in keys if key in kept)


def memorize_chunks(
    llm: LLM,
    chunks: Sequence[Chunk],
    *,
    first_index: int,
    cancel: CancelToken,
    on_done: Callable[[int], None],
    results: StageResults = NO_RESULTS,
) -> list[MemorizedChunk]:
    """A memory per chunk, in parallel calls; a chunk whose memory `results` kept from an
    earlier run costs no call, and each new one is kept as it arrives."""
    requests = MemorizeRequests()
    for chunk in chunks:  # on this thread: the contexts are made once, before the pool
        requests.context(chunk)

    def one(chunk: Chunk) -> MemorizedChunk:
        fallback: str | None = None  # why it was written without the LLM
        context = requests.context(chunk)
        try:
            draft = results.structured(
                llm,
                requests.messages(chunk),
                MemoryDraft,
                stage="memorize",
                document=chunk.source.content_hash,
                cancel=cancel,
                max_tokens=900,
            )
            if not draft.memory.strip():
                raise LLMCallFailed("empty memory")
        except LLMCallFailed as exc:
            log.warning("memory for chunk %d written without the LLM: %s", chunk.index, exc)
            draft, fallback = fallback_draft(chunk), fallback_reason(exc)
        return _memorized(
            chunk, in_context(draft, chunk, context), first_index + chunk.index, fallback
        )

    memories = llm.parallel_map(one, chunks, cancel=cancel, on_done=on_done)
    titles = distinguish([m.title for m in memories], chunks)
    for memory, title, chunk in zip(memories, titles, chunks, strict=True):
        memory.title = title
        context = requests.context(chunk)
        heading = section_heading(chunk)
        memory.shown_title = written_title(title, [context.title, heading, chunk.text])
    return memories


def in_context(draft: MemoryDraft, chunk: Chunk, context: DocumentContext) -> MemoryDraft:
    """The draft checked without the LLM: a title that says what the passage is about (its
    heading's words when the model's are no phrase of it), a tldr of one sentence (the
    model's first; the body's first that states something when the model's only says what
    the text is about), a body that does not open by repeating the tldr (the passage's own
    opening sentences when it said nothing else, or no sentence of a few words: "(ref. 41)"),
    each sentence once (a reply that loops until its cap says two sentences fifteen times),
    no sentence that says the opposite of the passage's (`faithful`: the passage's own
    sentence instead), and the document's subject named in all three. Nothing is pasted
    from the chunk: its original wording is kept and searched beside the note."""
    written = faithful(without_repeats(draft.memory.strip()), chunk.text)
    given = one_sentence(faithful(" ".join(draft.tldr.split()), chunk.text))
    tldr = one_sentence(stated_tldr(given or first_sentence(written), written, context.title))
    # (talk about the text goes first: the tldr may be the sentence after it)
    body = without_tldr(without_talk_about_the_text(written, context.title), tldr)
    if not says_something(body):  # nothing but a reference, a name, a fragment
        body = opening(chunk.text, skip=tldr) or body or written
    title = _without_extension(sanitize_name(draft.title, fallback=""), chunk.source.name)
    if says_little(title, f"{section_heading(chunk)}\n{chunk.text}", context):
        title = passage_title(chunk)
    return MemoryDraft(
        title=with_subject_title(title, context),
        memory=with_subject_text(body, context),
        tldr=with_subject_text(tldr, context),
    )


def _without_extension(title: str, source: str) -> str:
    """`title` without a last word that is its document's file extension: shown "Document:
    gizmo-guide.md", a small model titles a note "gizmo_guide_md"."""
    extension = PurePath(source).suffix.lstrip(".").lower()
    trimmed = title.removesuffix(f"_{extension}") if extension else title
    return trimmed if trimmed.strip("_") else title


def _memorized(
    chunk: Chunk, draft: MemoryDraft, index: int, fallback: str | None
) -> MemorizedChunk:
    source = chunk.source
    metadata: dict[str, Any] = {
        "source": stored_name(source.name),  # a newline or ESC in it, escaped
        "source_hash": source.content_hash,
        "span": [chunk.start, chunk.end],
        "tokens": chunk.tokens,
        "hash": sha256_hex(chunk.text.encode("utf-8")),
        "created": utc_now().isoformat(),
    }
    pages = source.pages_for(chunk.start, chunk.end)
    if pages:
        metadata["pages"] = [pages[0], pages[-1]]
    if fallback is not None:
        metadata["fallback"] = True
        metadata[FALLBACK_REASON] = fallback
    title = sanitize_name(draft.title, fallback=passage_title(chunk))
    memory = normalize(draft.memory).strip()  # the model may echo control codes: none kept
    tldr = " ".join(normalize(draft.tldr).split()) or first_sentence(memory)
    return MemorizedChunk(index=index, title=title, memory=memory, tldr=tldr, metadata=metadata)


def llm_split_advisor(
    llm: LLM, cancel: CancelToken, results: StageResults = NO_RESULTS
) -> SplitAdvisor:
    def advise(
        sentences: Sequence[str], counts: Sequence[int], max_tokens: int
    ) -> list[int] | None:
        try:
            plan = results.structured(
                llm,
                split_messages(sentences, counts, max_tokens),
                SplitPlan,
                stage="split",
                max_tokens=200,
                cancel=cancel,
            )
        except LLMCallFailed as exc:
            log.info("split points from sentence boundaries instead: %s", exc)
            return None
        return plan.split_before

    return advise
