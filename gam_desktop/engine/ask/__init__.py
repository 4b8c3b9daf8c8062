"""Answering questions: the sandboxed tools (ls, cat, grep, BM25) over the folder and the
original wording, the evidence a question starts from, the agent loop, and the
conversation's working memory."""
