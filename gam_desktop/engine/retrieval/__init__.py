"""Finding things in a memory: the folder's files as a corpus (with each memory's original
wording), the search index (BM25 over stems, fused with embeddings where the memory has
them), the sandboxed tools (ls, cat, grep, bm25_search) and finding files for a person.

The names below are what other subpackages build on (an import contract in pyproject.toml
keeps research to them): the modules behind them may change."""

from gam_desktop.engine.retrieval.search import query_terms, tokenize
from gam_desktop.engine.retrieval.tools import MemoryTools

__all__ = ["MemoryTools", "query_terms", "tokenize"]
