"""Finding things in a memory: the folder's files as a corpus (with each memory's original
wording), the search index (BM25 over stems, fused with embeddings where the memory has
them), the sandboxed tools (ls, cat, grep, bm25_search) and finding files for a person."""
