"""Memories that keep their document's context and their chunk's facts.

A chunk from the middle of a policy rarely names the company; four companies' policies
with the same headings then become four indistinguishable memories, and a small model
summarizing "limits, defaults, renamed settings" may keep only the headings. So every
chunk is memorized with its document's context (title, subject), and the result is
checked without the LLM: the title starts with the subject, the text names it, and
every number of the chunk the summary dropped comes back from the original sentences.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gam_desktop.engine.build.documents import PASTED_TEXT, SourceDocument
from gam_desktop.engine.store.naming import sanitize_name
from gam_desktop.engine.textutil import STOPWORDS, WORD, keywords

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
FACTS_LIMIT = 900  # characters of original sentences added back to one memory
# Title words that say what kind of document it is, not whose: never the subject.
GENERIC = frozenset(
    {"policy", "policies", "notes", "note", "release", "releases", "report", "reports",
     "field", "guide", "manual", "procedure", "procedures", "handbook", "overview", "call",
     "introduction", "chapter", "section", "document", "standard", "operating", "kitchen",
     "rules", "summary", "the", "version", "readme", "on", "oncall", "changelog", "log"}
)  # fmt: skip


@dataclass(frozen=True)
class DocumentContext:
    title: str  # "Borealis Systems On-Call Policy"
    subject: tuple[str, ...]  # ("Borealis", "Systems"): whose document it is
    label: str  # "borealis_systems": what every memory title starts with

    def describe(self, name: str) -> str:
        if not self.subject:
            return f"Document: {name}"
        return f"Document: {name}\nTitle: {self.title}\nSubject: {' '.join(self.subject)}"

    def named_in(self, text: str) -> bool:
        """Whether `text` names the subject (trivially so when there is none)."""
        lower = text.lower()
        return not self.subject or any(word.lower() in lower for word in self.subject)


def document_title(doc: SourceDocument) -> str | None:
    """The document's one level-1 heading, else its file name; None when neither says
    what it is (pasted text whose headings are all sections)."""
    h1 = [line[2:].strip() for line in doc.text.splitlines() if line.startswith("# ")]
    if len(h1) == 1:
        return h1[0]
    if doc.name != PASTED_TEXT:
        return re.sub(r"[_-]+", " ", Path(doc.name).stem).strip() or None
    return None


def document_context(doc: SourceDocument) -> DocumentContext:
    title = document_title(doc)
    if title is None:
        return DocumentContext("", (), "")
    words = [w.strip("._") for w in re.findall(r"[\w.]+", title) if w.strip("._")]
    words = [w for w in words if w.lower() not in GENERIC | STOPWORDS]
    # Capitalized words (and versions) name the subject in a title; a lowercase file
    # name ("zephyr 4.2 notes") names it with all of its specific words.
    capitalized = [w for w in words if w[0].isupper() or any(c.isdigit() for c in w)]
    subject = (capitalized if any(w[0].isupper() for w in words) else words)[:3]
    label = (
        sanitize_name("_".join(subject).lower().replace(".", "_"), fallback="") if subject else ""
    )
    return DocumentContext(title, tuple(subject), label)


def with_subject_title(title: str, context: DocumentContext) -> str:
    """`title` starting with the document's label unless it names the subject already."""
    if context.named_in(title.replace("_", " ")):
        return title
    words = f"{context.label}_{title}".split("_")
    return sanitize_name("_".join(words[:8]), fallback=context.label)


def with_subject_text(text: str, context: DocumentContext) -> str:
    return text if context.named_in(text) else f"{context.title}: {text}"


def missing_facts(memory: str, chunk: str) -> str:
    """The chunk's sentences holding numbers the memory lost, for adding back."""
    kept = set(NUMBER.findall(memory))
    lost = [n for n in dict.fromkeys(NUMBER.findall(chunk)) if n not in kept]
    if not lost:
        return ""
    picked: list[str] = []
    for sentence in SENTENCE_END.split(chunk):
        flat = " ".join(sentence.split()).lstrip("#-* ")
        if flat and any(n in NUMBER.findall(flat) for n in lost) and flat not in picked:
            picked.append(flat)
    text = " ".join(picked)
    return text if len(text) <= FACTS_LIMIT else text[: FACTS_LIMIT - 1].rsplit(" ", 1)[0] + "…"


def number_coverage(memory: str, chunk: str) -> float:
    """The fraction of the chunk's numbers that the memory text holds (1.0 with none)."""
    numbers = set(NUMBER.findall(chunk))
    return len(numbers & set(NUMBER.findall(memory))) / len(numbers) if numbers else 1.0


def distinguish(titles: Sequence[str], texts: Sequence[str]) -> list[str]:
    """Titles made unique by a word of their own text that the look-alikes lack (never
    `_2`): the first keyword of the text not in the title and not common to the group."""
    groups: dict[str, list[int]] = {}
    for i, title in enumerate(titles):
        groups.setdefault(title, []).append(i)
    result = list(titles)
    for title, members in groups.items():
        if len(members) < 2:
            continue
        counts = Counter(w for i in members for w in set(keywords(texts[i], 12)))
        for i in members:
            own = [
                w
                for w in keywords(texts[i], 12)
                if counts[w] < len(members) and w not in title.split("_") and WORD.fullmatch(w)
            ]
            if own:
                result[i] = sanitize_name(f"{title}_{own[0]}", fallback=title)
    return result
