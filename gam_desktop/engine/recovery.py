"""Keeping the files of an interrupted operation: which half-written documents go.

The rule (README "After a crash"): a document the interrupted operation was adding is
kept only if it was written whole, its source text and every one of its memories.
A partial one is removed (its memories and its source text), so that adding it again
gives it whole instead of leaving duplicates or a document the app believes it has.
Memories already in the memory before the operation are never touched.
"""

from __future__ import annotations

from typing import Any

from gam_desktop.engine.changeset import ChangeSet
from gam_desktop.engine.folder import SOURCES_DIR, MemoryFolder


def drop_partial_documents(
    folder: MemoryFolder, documents: dict[str, dict[str, Any]]
) -> list[tuple[str, int, int]]:
    """Remove the documents of `documents` (source hash -> name, planned memories) that
    were not written whole; returns (name, memories written, memories planned) of each."""
    changes, dropped = ChangeSet(), []
    for source_hash, entry in documents.items():
        planned = [str(p) for p in entry.get("memories", [])]
        present = [p for p in planned if folder.readable(folder.root / p)]
        source = folder.source_path(source_hash)
        if len(present) == len(planned) and folder.readable(source):
            continue
        changes.deletes += present
        if source.is_file():
            changes.deletes.append(f"{SOURCES_DIR}/{source_hash}.txt")
        dropped.append((str(entry.get("name") or source_hash[:12]), len(present), len(planned)))
    if changes.deletes:
        changes.apply(folder.root)
    return dropped
