"""Placing memorized chunks in the folder: their files (front matter and text) and the
documents' extracted text, staged into a ChangeSet. A memory whose title a file of the
folder already has (from an earlier add) is told apart by words of its own, not `_2`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.ingest.titles import OWN_WORDS, content_words, joined
from gam_desktop.engine.models import MemorizedChunk
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import SOURCES_DIR, DirView
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.store.naming import fit_stem, memory_file_stem, unique_name

_FRONT_ORDER = (
    "source", "source_hash", "span", "pages", "tokens", "hash", "created", "fallback",
    "fallback_reason",  # why the LLM did not write it (ingest/memorize.py)
)  # fmt: skip


def memory_front(memory: MemorizedChunk) -> dict[str, Any]:
    front: dict[str, Any] = {"title": memory.heading, "index": memory.index, "tldr": memory.tldr}
    front.update({k: memory.metadata[k] for k in _FRONT_ORDER if k in memory.metadata})
    return front


def place_memory(changes: ChangeSet, directory: DirView, memory: MemorizedChunk) -> str:
    stem = fit_stem(memory_file_stem(memory.title), directory.path)
    if f"{stem}.md".casefold() in {name.casefold() for name in directory.files}:
        memory.title = told_apart(memory, directory.files.get(f"{stem}.md") or "")
        stem = fit_stem(memory_file_stem(memory.title), directory.path)
    name = unique_name(stem, [*directory.files], ".md")  # `_2` only when nothing differs
    directory.files[name] = memory.tldr
    directory.origins[name] = (memory.heading, str(memory.metadata.get("source") or ""))
    path = directory.child_path(name)
    changes.writes[path] = render_memory(memory_front(memory), memory.memory)
    if memory.metadata.get("source_hash"):
        source = (str(memory.metadata["source_hash"]), str(memory.metadata.get("source", "")))
        changes.memory_sources[path] = source
    return path


def told_apart(memory: MemorizedChunk, other: str) -> str:
    """The title of a memory whose file name a memory of an earlier add already has,
    followed by the first words of its own that the other's tldr (`other`) lacks."""
    title = memory.title
    seen = {*title.split("_"), *content_words(other)}
    own = [w for w in content_words(f"{memory.tldr} {memory.memory}") if w not in seen]
    if not own:
        return title
    added = list(dict.fromkeys(own))[:OWN_WORDS]
    if memory.shown_title:  # the reader's title says the same words
        memory.shown_title = " ".join([memory.shown_title, *added])
    return joined(title, added)


def stage_sources(changes: ChangeSet, docs: Iterable[SourceDocument]) -> None:
    """Keep each document's extracted text: a memory's original wording is text[span]."""
    for doc in docs:
        changes.writes[f"{SOURCES_DIR}/{doc.content_hash}.txt"] = doc.text
