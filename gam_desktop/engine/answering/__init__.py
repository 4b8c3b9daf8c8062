"""Answering a question from the memory with one general pipeline: retrieve passages, read
them in one grounded call that quotes its support, check the quote against the source and
the answer against the quote, abstain when nothing supports it. It knows the language
(lexicon.py), never a subject."""
