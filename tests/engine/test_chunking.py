"""Chunking (spec 5.2 and the chunking test of 11.1)."""

from __future__ import annotations

from gam_desktop.engine.ingest.chunking import Chunker
from gam_desktop.engine.ingest.documents import load_text
from gam_desktop.engine.ingest.memorize import llm_split_advisor
from gam_desktop.engine.ingest.prompts import SplitPlan
from gam_desktop.engine.models import ChunkConfig
from gam_desktop.engine.progress import CancelToken
from tests.documents import topic_document, words_document
from tests.fakes import FakeLLM


def chunk(text: str, min_tokens: int = 50, max_tokens: int = 300, advisor=None):
    doc = load_text(text)
    return doc, Chunker(
        ChunkConfig(min_tokens=min_tokens, max_tokens=max_tokens), advisor
    ).chunk_documents([doc])


def test_chunks_align_with_headers_and_respect_limits() -> None:
    text = topic_document({"python": 3, "rust": 3}, repeats=4)
    _, chunks = chunk(text, min_tokens=50, max_tokens=300)
    assert len(chunks) == 6
    assert all(c.text.startswith("# ") for c in chunks)  # every chunk is one header section
    assert all(c.tokens <= 300 for c in chunks)
    assert [c.index for c in chunks] == list(range(6))


def test_no_chunk_over_max_or_under_min_except_the_last() -> None:
    _doc, chunks = chunk(words_document(5000), min_tokens=100, max_tokens=400)
    assert len(chunks) > 10
    assert all(c.tokens <= 400 for c in chunks)
    assert all(c.tokens >= 100 for c in chunks[:-1])


def test_chunks_are_exact_spans_that_cover_the_text() -> None:
    doc, chunks = chunk(topic_document({"git": 4, "docker": 2}), max_tokens=120)
    for c in chunks:
        assert c.text == doc.text[c.start : c.end]
    covered = "".join(c.text for c in chunks).replace(" ", "").replace("\n", "")
    assert covered == doc.text.replace(" ", "").replace("\n", "")


def test_small_sections_merge_with_neighbours() -> None:
    text = "# A\n\nShort one.\n\n# B\n\nShort two.\n\n# C\n\nShort three."
    _, chunks = chunk(text, min_tokens=50, max_tokens=300)
    assert len(chunks) == 1
    assert "Short one" in chunks[0].text and "Short three" in chunks[0].text


def test_oversize_paragraph_asks_the_llm_for_split_points() -> None:
    paragraph = " ".join(f"Sentence number {i} talks about gradient descent." for i in range(80))
    llm = FakeLLM({SplitPlan: SplitPlan(split_before=list(range(10, 80, 10)))})
    advisor = llm_split_advisor(llm, CancelToken())
    _, chunks = chunk(paragraph, min_tokens=20, max_tokens=150, advisor=advisor)
    assert "split" in llm.stages()
    assert len(chunks) > 3 and all(c.tokens <= 150 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)  # cut at sentence ends, never mid-sentence


def test_split_falls_back_to_sentences_when_the_llm_gives_nothing() -> None:
    paragraph = " ".join(f"Sentence {i} is about attention heads." for i in range(80))
    _, chunks = chunk(paragraph, min_tokens=20, max_tokens=100, advisor=lambda *a: None)
    assert len(chunks) > 3 and all(c.tokens <= 100 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)


def test_text_without_any_boundary_is_still_cut_under_max() -> None:
    _, chunks = chunk("x" * 20000, min_tokens=10, max_tokens=200)
    assert len(chunks) > 1 and all(c.tokens <= 200 for c in chunks)


def test_japanese_text_is_chunked_at_sentence_ends() -> None:
    sentence = "ニューラルネットワークは勾配降下法で重みを学習します。"
    _, chunks = chunk(sentence * 200, min_tokens=20, max_tokens=200)
    assert len(chunks) > 5 and all(c.tokens <= 200 for c in chunks)
    assert all(c.text.endswith("。") for c in chunks)


def test_very_large_document_is_chunked() -> None:
    doc, chunks = chunk(words_document(100_000), min_tokens=100, max_tokens=1000)
    assert len(doc.text.split()) >= 95_000
    assert len(chunks) > 100 and all(c.tokens <= 1000 for c in chunks)


def test_empty_text_gives_no_chunks() -> None:
    assert chunk("   \n\n  ")[1] == []
