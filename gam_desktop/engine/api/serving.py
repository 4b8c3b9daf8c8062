"""What gam-serve and gam-mcp read a memory with and keep its turns by: the sandboxed
search tools, a file as a passage shown to a model, the saved conversations, the turns
queued for saving."""

from __future__ import annotations

from gam_desktop.engine.answering import recall
from gam_desktop.engine.answering.recall import time_of
from gam_desktop.engine.chats.library import list_conversations, saved_turn_ids
from gam_desktop.engine.chats.record import parse as parse_conversation
from gam_desktop.engine.chats.saved_turns import TurnToSave
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.retrieval.corpus import CorpusFile, memory_of, title_of
from gam_desktop.engine.retrieval.tools import MemoryTools, ToolResult
from gam_desktop.engine.retrieval.words import tokenize
from gam_desktop.engine.store.markdown import body_of

__all__ = [
    "CorpusFile",
    "MemoryTools",
    "ToolResult",
    "TurnToSave",
    "list_conversations",
    "memory_of",
    "parse_conversation",
    "passage_of",
    "saved_turn_ids",
    "search_terms",
    "time_of",
    "utc_now",
]


def passage_of(path: str, text: str) -> tuple[str, str]:
    """What the file at `path` (its `text`) is and what of it a model is shown: a
    conversation as its dated turns and a fact as its dated statement, each labelled with
    its date ("a fact the user stated on 2026-01-02"); anything else by its title, its body
    without the front matter."""
    if recall.is_personal(path):
        return recall.personal_label(path, text), recall.personal_passage(path, text, None)
    return title_of(path, text), body_of(text)


def search_terms(text: str) -> set[str]:
    """The search terms of a file's body (its words, stemmed; not its front matter)."""
    return set(tokenize(body_of(text)))
