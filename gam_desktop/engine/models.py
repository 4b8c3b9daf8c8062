"""The engine's data model: memories, taxonomy plans, answers, chunking settings, the meta file.

Pydantic models only: no I/O here, so every other module can import this one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

META_FILE = ".gam_meta.json"
META_SCHEMA_VERSION = 1


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class MemorizedChunk(BaseModel):
    """One memory: the LLM's summary of one chunk."""

    index: int
    title: str  # snake_case: what its file is named by
    memory: str
    tldr: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The title as a reader sees it (its front matter's `title`), in the words, case and
    # dots its document writes ("Gizmo 2.4 User Guide"); empty: `title`.
    shown_title: str = ""

    @property
    def heading(self) -> str:
        return self.shown_title or self.title


class DirectoryNode(BaseModel):
    """A planned directory of the taxonomy.

    Every chunk index appears in exactly one leaf; parents hold only children.
    """

    path: str = ""
    name: str
    description: str = ""
    children: list[DirectoryNode] = Field(default_factory=list)
    chunk_indices: list[int] = Field(default_factory=list)

    def leaves(self) -> list[DirectoryNode]:
        if not self.children:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]

    def walk(self) -> list[DirectoryNode]:
        return [self, *(node for child in self.children for node in child.walk())]


class Citation(BaseModel):
    """Where a cited memory's original wording is: its source document, span and pages."""

    path: str  # the memory (or README) cited
    source: str | None = None  # the document it was written from
    span: list[int] | None = None  # character offsets into that document's text
    pages: list[int] | None = None  # first and last page, for PDFs

    @classmethod
    def from_front(cls, path: str, front: dict[str, Any]) -> Citation:
        """The citation of `path` from its front matter (what is malformed left out)."""
        span, pages, source = front.get("span"), front.get("pages"), front.get("source")
        return cls(
            path=path,
            source=str(source) if source else None,
            span=span if isinstance(span, list) and len(span) == 2 else None,
            pages=pages if isinstance(pages, list) and pages else None,
        )

    def where(self) -> str | None:
        """ "report.pdf, p. 3-4": the document and pages (None without a source)."""
        if not self.source:
            return None
        pages = ""
        if self.pages:
            first, last = self.pages[0], self.pages[-1]
            pages = f", p. {first}" + (f"-{last}" if last != first else "")
        return self.source + pages

    def describe(self) -> str:
        where = self.where()
        if where is None:
            return self.path
        span = f", characters {self.span[0]}-{self.span[1]}" if self.span else ""
        return f"{self.path} ({where}{span})"


class ChatResult(BaseModel):
    """The answer to one question."""

    question: str
    answer: str
    sources: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)  # one per source, same order
    confidence: float = 0.0
    files_read: list[str] = Field(default_factory=list)
    dirs_explored: list[str] = Field(default_factory=list)
    trajectory: str = ""
    notes: str | None = None


class ReorganizeOperation(BaseModel):
    """The file moves that carry out a re-planned directory.

    Paths are relative to the memory root, with "/" separators.
    """

    directory: str = ""
    moved_files: list[tuple[str, str]] = Field(default_factory=list)
    deleted_files: list[str] = Field(default_factory=list)
    new_directories: list[str] = Field(default_factory=list)
    # What the plan says beyond the moves, so that the plan a person saw is the one applied:
    # each new folder's description (its README), and the memories that stay where they are.
    descriptions: dict[str, str] = Field(default_factory=dict)
    kept_files: list[str] = Field(default_factory=list)


class ChunkConfig(BaseModel):
    """How documents are cut into chunks."""

    min_tokens: int = Field(default=100, ge=1)
    max_tokens: int = Field(default=1000, ge=16)
    tokenizer: str = "tiktoken"
    model: str = "gpt-4o-mini"


class GamMeta(BaseModel):
    """The `.gam_meta.json` file at the memory root."""

    schema_version: int = META_SCHEMA_VERSION
    version: str = "1.0"
    app: str = "gam-desktop"
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    total_chunks: int = 0
    total_directories: int = 0
    source_files: list[str] = Field(default_factory=list)
    model_used: str = ""
    chunk_config: ChunkConfig = Field(default_factory=ChunkConfig)
    # What the memory keeps of its user: chats saved as files, facts learned from them.
    save_conversations: bool = True
    learn_facts: bool = True
