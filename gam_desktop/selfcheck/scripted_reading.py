"""The scripted server's reader for the general answering pipeline (engine/answering): it
answers with the passage sentence sharing the most words with the question, naming that
passage; with no sentence sharing a word, it says the passages do not state it. Words of
the passage's document name count for nothing there (they say which document, not where
in it), and headings are not answers."""

from __future__ import annotations

import re
from typing import Any

from gam_desktop.engine.retrieval.words import query_terms, tokenize

PASSAGE = re.compile(r"^\[(\d+)\] \(([^)\n]*)\)\n(.*?)(?=^\[\d+\] \(|\Z)", re.M | re.S)
NAME = re.compile(r"(?<!^)(?<![.?!] )\b[A-Z][\w'’-]*")  # capitalized inside a sentence
EARLIER = re.compile(r"^Earlier: (.*)$", re.M)
PRONOUN = re.compile(r"\b(it|its|they|them|this|that)\b", re.I)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def read(user: str) -> dict[str, Any]:
    passages, _, question = user.rpartition("\n\nQuestion: ")
    wanted = set(query_terms(question))
    if PRONOUN.search(question):  # "when was it released?": what "it" was, asked before
        wanted |= {t for line in EARLIER.findall(passages) for t in query_terms(line)}
    named = set(tokenize(" ".join(NAME.findall(question))))
    measured = question.lower().startswith(("how ", "when ", "what time"))
    best: tuple[float, int, str] | None = None
    for match in PASSAGE.finditer(passages):
        label = match.group(2)
        document = set(tokenize(label.split(" — ")[0])) if " — " in label else set()
        for unit in SENTENCE.split(match.group(3)):
            lines = [line for line in unit.splitlines() if not line.lstrip().startswith("#")]
            sentence = " ".join(lines)
            if not sentence.strip():
                continue
            held = (wanted - document) & set(tokenize(sentence))
            # a name alone answers nothing when the question asks something of it
            shared: float = len(held) if held - named or not wanted - named else 0
            if shared and measured and re.search(r"\d", sentence):
                shared += 0.5  # "how long", "how many": a sentence with a figure answers
            if shared and (best is None or shared > best[0]):
                best = (shared, int(match.group(1)), sentence.strip())
    if best is None:
        return {"answer": "", "passages": [], "found": False}
    _, number, sentence = best
    return {"answer": sentence, "passages": [number], "found": True}
