"""Finding files for a person (the window's find box), not for the agent: the files whose
text best matches a query (BM25 over the memories, their original wording, the READMEs,
conversations and facts), one hit per file with a snippet and the query's words marked in
it; and every file's title, for filtering the tree by name.

Both read the shared corpus (refreshed by stat, cheap when nothing changed), so they run
as well on a task thread as the agent's tools do; given a cancel token, they stop between
their steps once it is cancelled (a newer query, another memory opened).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.retrieval.corpus import is_original, memory_of, title_of
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.retrieval.words import query_terms, snippet, tokenize

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # "gil_python_thread" is three words
_MARKUP = re.compile(r"(?:(?<=\s)|^)#{1,6}\s+|\*\*|__|`")  # headings, bold, code in a snippet


@dataclass(frozen=True)
class Found:
    """A file found by a search: its title, a passage of it (or of its original wording)
    and where the query's words are in that passage."""

    path: str
    title: str
    snippet: str
    marks: tuple[tuple[int, int], ...] = ()  # (start, end) of each query word in the snippet
    original: bool = False  # the passage is the memory's original wording, not its summary
    score: float = 0.0


def search(
    tools: MemoryTools, query: str, limit: int = 20, cancel: CancelToken | None = None
) -> list[Found]:
    """The files best matching `query`, best first, one per file (a memory matched by its
    own text and by its original wording is listed once, where it scored best). Raises
    OperationCancelled between steps once `cancel` is cancelled."""
    cancel = cancel or CancelToken()
    if not query.strip():
        return []
    cancel.raise_if_cancelled()  # (asked while an older search held the corpus)
    tools.corpus.refresh_if_stale()
    cancel.raise_if_cancelled()
    texts = tools.corpus.snapshot()
    terms = set(query_terms(query))
    found: dict[str, Found] = {}
    hits = tools.index.search(query, max(1, limit) * 2)
    cancel.raise_if_cancelled()
    for hit in hits:
        path = memory_of(hit.path)
        if path in found:
            continue
        text = texts.get(path)
        passage = hit.snippet
        original = texts.get(hit.path) if is_original(hit.path) else None
        if original is not None and original.text.startswith("["):
            # the original is indexed under a "[document — title]" line: not its wording
            passage = snippet(original.text.split("\n", 1)[-1], sorted(terms))
        passage = _MARKUP.sub("", passage)
        found[path] = Found(
            path=path,
            title=title_of(path, text.text if text is not None else ""),
            snippet=passage,
            marks=marks(passage, terms),
            original=is_original(hit.path),
            score=hit.score,
        )
        if len(found) >= limit:
            break
    return list(found.values())


def titles(tools: MemoryTools, cancel: CancelToken | None = None) -> dict[str, str]:
    """The title of every Markdown file in the memory, by path (kept by the index)."""
    cancel = cancel or CancelToken()
    cancel.raise_if_cancelled()
    tools.corpus.refresh_if_stale()
    cancel.raise_if_cancelled()
    return tools.index.titles()


def marks(snippet: str, terms: set[str]) -> tuple[tuple[int, int], ...]:
    """Where the words of `snippet` that are search terms are: stemmed as the index stems
    them ("released" is the term "releas"), Chinese, Japanese and Korean by their pairs."""
    if not terms:
        return ()
    return tuple(
        word.span() for word in _WORD.finditer(snippet) if terms.intersection(tokenize(word[0]))
    )
