"""Memorizing chunks (ingest/memorize.py) with the in-process fake LLM: the model's draft is
checked without it (the document's subject named, titles told apart, nothing pasted from the
original), a failed or empty reply falls back to the chunk's own words, and every call is
capped."""

from __future__ import annotations

import re

from gam_desktop.engine.ingest.chunking import Chunk, Chunker
from gam_desktop.engine.ingest.documents import load_text
from gam_desktop.engine.ingest.memorize import llm_split_advisor, memorize_chunks
from gam_desktop.engine.ingest.prompts import MemoryDraft, SplitPlan
from gam_desktop.engine.llm import LLM, LLMCallFailed, LLMClient, LLMSettings
from gam_desktop.engine.models import ChunkConfig, MemorizedChunk
from gam_desktop.engine.progress import CancelToken
from tests.documents import topic_document
from tests.fakes import FakeLLM

SNAKE = re.compile(r"^[^\W_A-Z]+(_[^\W_A-Z]+)*$")
POLICY = (
    "# Borealis Systems On-Call Policy\n\n"
    "Pages are answered within 15 minutes. The duty manager is called after 30 minutes."
)


def chunks_of(text: str, name: str = "text") -> list[Chunk]:
    config = ChunkConfig(min_tokens=20, max_tokens=200)
    return Chunker(config).chunk_documents([load_text(text, name)])


def memorize(llm: FakeLLM, chunks: list[Chunk], first_index: int = 0) -> list[MemorizedChunk]:
    done: list[int] = []
    memories = memorize_chunks(
        llm, chunks, first_index=first_index, cancel=CancelToken(), on_done=done.append
    )
    assert done == list(range(1, len(chunks) + 1))  # progress after every chunk
    return memories


def test_the_fake_and_the_client_are_both_an_llm() -> None:
    assert isinstance(FakeLLM(), LLM) and isinstance(LLMClient(LLMSettings()), LLM)


def test_every_chunk_becomes_one_memory_titled_by_its_heading_when_the_model_says_nothing() -> None:
    chunks = chunks_of(topic_document({"python": 1, "rust": 1, "git": 1, "docker": 1}))
    draft = MemoryDraft(title="notes", memory="A summary of the section.", tldr="A summary.")
    llm = FakeLLM({MemoryDraft: draft})
    memories = memorize(llm, chunks, first_index=7)
    assert [m.index for m in memories] == [7, 8, 9, 10]
    assert llm.stages() == ["memorize"] * 4
    assert all(call.max_tokens == 900 for call in llm.calls)  # a stage caps its reply
    titles = [m.title for m in memories]  # "notes" says nothing: each section's heading does
    assert titles == ["python_notes_0", "rust_notes_0", "git_notes_0", "docker_notes_0"]
    assert all(m.metadata["source"] == "text" and "fallback" not in m.metadata for m in memories)


def test_a_failed_call_falls_back_to_the_chunks_own_words() -> None:
    chunks = chunks_of(topic_document({"python": 2, "rust": 2}))
    memories = memorize(FakeLLM({MemoryDraft: LLMCallFailed("HTTP 500")}), chunks)
    assert len(memories) == 4 and all(m.metadata["fallback"] is True for m in memories)
    assert all(SNAKE.match(m.title) and m.memory and m.tldr for m in memories)


def test_an_empty_memory_falls_back() -> None:
    (chunk,) = chunks_of(POLICY)
    empty = MemoryDraft(title="response_times", memory="  ", tldr="")
    (memory,) = memorize(FakeLLM({MemoryDraft: empty}), [chunk])
    assert memory.metadata["fallback"] is True and "15 minutes" in memory.tldr
    assert "30 minutes" in memory.memory and "15 minutes" not in memory.memory  # said once


def test_the_memory_names_its_document_and_pastes_nothing_from_the_original() -> None:
    """The numbers the model left out stay in the original, which is kept and searched
    beside the note: nothing is appended to what the model wrote (issue 35)."""
    (chunk,) = chunks_of(POLICY)
    vague = MemoryDraft(
        title="response_times", memory="Pages are answered quickly.", tldr="Pages are answered."
    )
    (memory,) = memorize(FakeLLM({MemoryDraft: vague}), [chunk])
    assert memory.title == "borealis_systems_response_times"
    assert memory.memory == "Borealis Systems On-Call Policy: Pages are answered quickly."
    assert memory.tldr.startswith("Borealis Systems")


def test_split_points_come_from_the_model_and_a_failure_gives_none() -> None:
    sentences, counts = ["One.", "Two.", "Three."], [5, 5, 5]
    llm = FakeLLM({SplitPlan: [SplitPlan(split_before=[2]), LLMCallFailed("HTTP 500")]})
    advise = llm_split_advisor(llm, CancelToken())
    assert advise(sentences, counts, 10) == [2]
    assert advise(sentences, counts, 10) is None  # the chunker cuts at sentence ends
    assert llm.stages() == ["split", "split"] and llm.calls[0].max_tokens == 200
