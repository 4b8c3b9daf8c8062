"""The scripted server's reader for the general answering pipeline (engine/answering): it
answers with the passage sentence sharing the most words with the question, naming that
passage; with no sentence sharing a word, it says the passages do not state it."""

from __future__ import annotations

import re
from typing import Any

from gam_desktop.engine.ask.words import query_terms, tokenize

PASSAGE = re.compile(r"^\[(\d+)\] \([^)\n]*\)\n(.*?)(?=^\[\d+\] \(|\Z)", re.M | re.S)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def read(user: str) -> dict[str, Any]:
    passages, _, question = user.rpartition("\n\nQuestion: ")
    wanted = set(query_terms(question))
    best: tuple[int, int, str] | None = None
    for match in PASSAGE.finditer(passages):
        for sentence in SENTENCE.split(match.group(2)):
            shared = len(wanted & set(tokenize(sentence)))
            if shared and (best is None or shared > best[0]):
                best = (shared, int(match.group(1)), sentence.strip())
    if best is None:
        return {"answer": "", "passages": [], "found": False}
    _, number, sentence = best
    return {"answer": sentence, "passages": [number], "found": True}
