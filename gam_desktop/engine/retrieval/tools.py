"""The chat agent's tools: ls, cat, grep, bm25_search.

Pure Python over the memory folder: no shell, every path through the Sandbox.
Each call returns the text the agent sees plus what it touched, so that a
ChatResult can list exactly the files read, matched and the folders explored.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gam_desktop.engine.llm.tools import Tool
from gam_desktop.engine.retrieval.corpus import ORIGINAL, Corpus, is_original, memory_of
from gam_desktop.engine.retrieval.sandbox import Sandbox, ToolError
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory

if TYPE_CHECKING:
    from gam_desktop.engine.llm.embeddings import EmbeddingSettings
    from gam_desktop.engine.retrieval.search import SearchIndex

GREP_LIMIT = 40
GREP_READ_LIMIT = 500  # a folder of up to this many files is read; above, the index narrows
CAT_LIMIT = 60_000  # characters; a memory is far smaller, a pasted book is not


@dataclass
class ToolResult:
    text: str
    read: list[str] = field(default_factory=list)  # files whose content the agent saw
    matched: list[str] = field(default_factory=list)  # files named by grep or search
    explored: list[str] = field(default_factory=list)  # directories listed
    error: bool = False


TOOLS = [
    Tool(
        "ls",
        "List contents of a directory (names, types, sizes)",
        {
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Directory path relative to GAM root"}
            },
        },
    ),
    Tool(
        "cat",
        "Read the contents of a file; with original=true, the original wording a memory "
        "was written from (every fact of the source passage)",
        {
            "type": "object",
            "required": ["file"],
            "properties": {
                "file": {"type": "string", "description": "File path relative to GAM root"},
                "original": {
                    "type": "boolean",
                    "description": "Read the memory's original source text instead",
                },
            },
        },
    ),
    Tool(
        "grep",
        "Search for a pattern in files (case-insensitive substring)",
        {
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern"},
                "path": {
                    "type": "string",
                    "description": "Folder or file to search in (default: root)",
                },
            },
        },
    ),
    Tool(
        "bm25_search",
        "Search all memory files using BM25 full-text search",
        {
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "description": "Search query"},
                "top_k": {"type": "integer", "description": "Number of results (default 5)"},
            },
        },
    ),
    Tool(
        "answer",
        "Provide the final answer to the user's question",
        {
            "type": "object",
            "required": ["text"],
            "properties": {
                "text": {"type": "string", "description": "The answer"},
                "confidence": {"type": "number", "description": "Confidence 0.0-1.0"},
                "sources": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "File paths that informed the answer",
                },
            },
        },
    ),
]


def _is_dir(found: os.stat_result) -> bool:
    return stat.S_ISDIR(found.st_mode)


def _wrongly_typed(name: str, arguments: dict[str, Any]) -> str:
    """What of `arguments` is not of the type its tool's schema gives ("file must be
    text"), or "" when they all are (None stands for an argument left out)."""
    schema = next((t.parameters for t in TOOLS if t.name == name), {})
    kinds = {"string": (str,), "integer": (int, str), "boolean": (bool, str, int)}
    for key, value in arguments.items():
        wanted = schema.get("properties", {}).get(key, {}).get("type")
        if value is not None and wanted in kinds and not isinstance(value, kinds[wanted]):
            return f"{key} must be {'text' if wanted == 'string' else 'a ' + wanted}"
    return ""


class MemoryTools:
    """The tools over one memory folder. With `embeddings` (not off), search fuses BM25 with
    the nearest texts by meaning (retrieval/vectors.py); without, BM25 alone."""

    def __init__(
        self,
        root: str | Path,
        corpus: Corpus | None = None,
        index: SearchIndex | None = None,
        embeddings: EmbeddingSettings | None = None,
    ) -> None:
        self.sandbox = Sandbox(root)
        self.folder = MemoryFolder(self.sandbox.root)
        self.corpus = corpus or Corpus(self.sandbox.root)
        self._index = index
        self.embeddings = embeddings

    @property
    def index(self) -> SearchIndex:
        """The search index, made on first use: it imports numpy, which the app's start
        (the find box holds tools) should not wait for."""
        if self._index is None:
            from gam_desktop.engine.llm.embeddings import Embedder
            from gam_desktop.engine.retrieval.search import SearchIndex

            wanted = self.embeddings
            embedder = Embedder(wanted) if wanted and wanted.enabled != "off" else None
            self._index = SearchIndex(self.corpus, embedder)
        return self._index

    def use_embeddings(self, embeddings: EmbeddingSettings | None) -> None:
        """Other embedding settings from now on (a key that arrived from the keychain after
        the tools were made). Whether search is by meaning at all stays as it was made."""
        self.embeddings = embeddings
        semantic = self._index.semantic if self._index is not None else None
        if semantic is not None and embeddings is not None:
            semantic.embedder.use(embeddings)

    def close(self) -> None:
        """Close the files the tools hold open in the memory (the search index's database)."""
        if self._index is not None:
            self._index.close()

    def run(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool call; refusals and bad arguments come back as error results."""
        handlers: dict[str, Callable[..., ToolResult]] = {
            "ls": self.ls,
            "cat": self.cat,
            "grep": self.grep,
            "bm25_search": self.bm25_search,
        }
        if name not in handlers:
            return ToolResult(f"error: unknown tool '{name}'", error=True)
        wrong = _wrongly_typed(name, arguments)
        if wrong:  # a model's {"file": 5}: said to it, as any other mistake
            return ToolResult(f"error: bad arguments for {name}: {wrong}", error=True)
        try:
            return handlers[name](**{k: v for k, v in arguments.items() if v is not None})
        except ToolError as exc:
            return ToolResult(f"error: {exc}", error=True)
        except (TypeError, ValueError) as exc:
            return ToolResult(f"error: bad arguments for {name}: {exc}", error=True)
        except OSError as exc:
            return ToolResult(f"error: {exc.strerror or exc}", error=True)

    def ls(self, path: str = "/") -> ToolResult:
        folder, rel = self.sandbox.resolve(path, want_dir=True)
        entries = self._entries(folder)
        lines = []
        for child, found in sorted(entries, key=lambda e: (not _is_dir(e[1]), e[0].name)):
            if _is_dir(found):
                lines.append(f"dir\t{child.name}/\t{len(self._entries(child))} items")
            else:
                lines.append(f"file\t{child.name}\t{found.st_size} bytes")
        return ToolResult("\n".join(lines) or "(empty directory)", explored=[rel or "/"])

    def _entries(self, folder: Path) -> list[tuple[Path, os.stat_result]]:
        """The files and folders `folder` shows the agent, with their stat: a named pipe,
        a socket or a device is neither (the agent would only try to read it), and is left
        out, as the search and the history leave it out."""
        shown = []
        for child in folder.iterdir():
            if not self.sandbox.visible(child):
                continue
            try:
                found = child.stat()  # (a link inside the memory: what it leads to)
            except OSError:  # gone meanwhile, or a link to nothing
                continue
            if _is_dir(found) or stat.S_ISREG(found.st_mode):
                shown.append((child, found))
        return shown

    def cat(self, file: str, original: bool = False) -> ToolResult:
        path, rel = self.sandbox.resolve(file, want_dir=False)
        # never more than is shown: a 400 MB file another program put in the folder is
        # read up to the limit, not whole (it cost 800 MB of memory for 60,000 characters)
        text = self.sandbox.read(path, rel, CAT_LIMIT + 1)
        if original in (True, "true", "True", 1):
            text = self._original(rel, text)
        if len(text) > CAT_LIMIT:
            size = path.stat().st_size
            text = (
                text[:CAT_LIMIT] + f"\n[truncated: the file has {size:,} bytes; "
                f"the first {CAT_LIMIT:,} characters are shown]"
            )
        return ToolResult(text, read=[rel])

    def _original(self, rel: str, memory_text: str) -> str:
        front = parse_memory(memory_text).front
        original = self.folder.original_text(front)
        if original is None:
            raise ToolError(
                f"'{rel}' has no original text (it is not a memory, or its source is gone)"
            )
        where = f"{front.get('source', 'its source')}"
        pages = front.get("pages")
        if isinstance(pages, list) and pages:
            where += f", page{'s' if pages[0] != pages[-1] else ''} " + "-".join(
                str(p) for p in dict.fromkeys([pages[0], pages[-1]])
            )
        return f"Original text of {rel} (from {where}):\n\n{original}"

    def grep(self, pattern: str, path: str = "/") -> ToolResult:
        if not pattern.strip():
            raise ToolError("grep needs a non-empty pattern")
        found, scope = self.sandbox.resolve(path)
        self.corpus.refresh_if_stale()
        if found.is_file():  # one file (small models grep the file they mean to read)
            texts = self.corpus.snapshot()
            keys = [k for k in (scope, scope + ORIGINAL) if k in texts]
            candidates: tuple[list[str], set[str] | None] = (keys, None)
        else:
            candidates = self._grep_candidates(pattern.lower(), scope)
        hits, files = self._grep(pattern.lower(), *candidates)
        if not hits:
            return ToolResult(f"no matches for '{pattern}'")
        if len(hits) >= GREP_LIMIT:
            hits.append(
                f"(showing the first {GREP_LIMIT} matching lines; {len(files)} files "
                "match in all; narrow the pattern or the path)"
            )
        return ToolResult("\n".join(hits), matched=list(files))

    def _grep(
        self, needle: str, keys: list[str], unsure: set[str] | None
    ) -> tuple[list[str], dict[str, None]]:
        """(the first GREP_LIMIT matching lines, every matching memory in order) among
        `keys`: read until the lines are found, then only `unsure` ones (None: all)."""
        hits: list[str] = []
        files: dict[str, None] = {}  # matching memories, in order (a dict: 10k matches)
        for at, key in enumerate(keys):
            if len(hits) >= GREP_LIMIT and unsure is not None and not unsure:
                files.update(dict.fromkeys(map(memory_of, keys[at:])))  # sure: not read
                break
            rel = memory_of(key)
            if len(hits) >= GREP_LIMIT and unsure is not None and key not in unsure:
                files[rel] = None  # past the cap, a sure match is only counted: not read
                continue
            text = self.corpus.text(key)
            if text is None or needle not in text.lower():
                continue
            files[rel] = None
            if len(hits) >= GREP_LIMIT:
                continue  # past the cap, only count matching files: no line splitting
            shown = f"{rel} (original text)" if is_original(key) else rel
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line.lower() and len(hits) < GREP_LIMIT:
                    hits.append(f"{shown}:{number}: {line.strip()[:200]}")
        return hits, files

    def _grep_candidates(self, needle: str, scope: str) -> tuple[list[str], set[str] | None]:
        """(the corpus keys below `scope` that may hold `needle`, sorted; which of them are
        only candidates, None for all): a folder is read, the whole memory is narrowed
        down by the index's words (reading 100,000 files takes seconds)."""
        many = len(self.corpus.below(scope)) > GREP_READ_LIMIT
        held = self.index.holding(needle) if many else None
        if held is None:
            return [key for key, _ in self.corpus.under(scope)], None
        inside = [k for k in held.keys if k.startswith(f"{scope}/")] if scope else held.keys
        return inside, held.unsure

    def bm25_search(self, query: str, top_k: int = 5) -> ToolResult:
        self.corpus.refresh_if_stale()
        hits = self.index.search(query, max(1, min(int(top_k), 20)))
        if not hits:
            return ToolResult(f"no results for '{query}'")
        lines = [
            f"{memory_of(h.path)}{' (original text)' if is_original(h.path) else ''} "
            f"(score {h.score:.2f}): {h.snippet}"
            for h in hits
        ]
        matched = list(dict.fromkeys(memory_of(h.path) for h in hits))
        return ToolResult("\n".join(lines), matched=matched)
