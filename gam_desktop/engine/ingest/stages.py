"""How a build's stages share its progress bar, and what the bar says while memories are
written. The weights are about how long each stage takes, in LLM calls made one after
another (the unit `progress.Stages` shares the bar in)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from gam_desktop.engine.ingest.documents import SourceDocument
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.textutil import plural

# Chunks are summarized `workers` at a time (their weight is counted where they are known);
# planning folders is a call with a long prompt, often re-asked; placing memories and
# describing folders are one call each; writing and committing is git's work, seconds in a
# big memory; cutting documents is local unless a passage is too long for one chunk.
PLAN_WEIGHT, PLACE_WEIGHT, DESCRIBE_WEIGHT, WRITE_WEIGHT, CUT_WEIGHT = 2.0, 1.5, 1.0, 1.0, 0.5


class WriteChanges(Protocol):
    """Writes one operation's change set: `committing()` is called before the commit."""

    def __call__(
        self,
        changes: ChangeSet,
        summary: str,
        trailers: dict[str, str],
        committing: Callable[[], None] | None = None,
    ) -> Any: ...


def later_stages(first: str, reorganize: bool) -> dict[str, float]:
    """The weights of what follows the memories: planning folders (a build) or placing
    memories (an add), the READMEs (no LLM call in a build), the write, and a share kept
    for reorganizing folders left overfull when that is on."""
    return {
        first: PLAN_WEIGHT if first == "organize" else PLACE_WEIGHT,
        "describe": DESCRIBE_WEIGHT if first == "place" else 0.1,
        "write": WRITE_WEIGHT,
        "reorganize": PLAN_WEIGHT / 2 if reorganize else 0.0,
    }


def summarizing(chunks: Sequence[Any], docs: Sequence[SourceDocument]) -> Callable[[int], str]:
    """What the bar says once `n` chunks are summarized: "Summarizing 3 of 12 chunks", and
    with several documents the one the work has reached (chunks go in document order)."""
    number = {id(doc): i for i, doc in enumerate(docs, 1)}
    where = [number.get(id(chunk.source), 0) for chunk in chunks]
    total = len(chunks)

    def said(n: int) -> str:
        text = (
            f"Summarizing {n} of {plural(total, 'chunk')}"
            if n
            else f"Summarizing {plural(total, 'chunk')}"
        )
        if len(docs) > 1 and where:
            text += f" (document {where[min(max(n - 1, 0), total - 1)]} of {len(docs)})"
        return text

    return said
