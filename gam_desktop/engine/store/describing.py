"""Words that say nothing about a folder, and descriptions made from its memories.

A small model asked for a taxonomy names folders "topic" or "general" and describes
them as "Memories about topic"; a README like that tells the exploring agent nothing.
These helpers recognise such names and descriptions and, where no LLM description is
available, write one from what the folder actually holds: its most frequent terms and
the titles of its memories.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from gam_desktop.engine.textutil import STOPWORDS, WORD, plural

# fmt: off
GENERIC_WORDS = frozenset({
    "topic", "topics", "subtopic", "general", "generic", "misc", "miscellaneous", "other",
    "others", "document", "documents", "doc", "docs", "note", "notes", "memory", "memories",
    "file", "files", "item", "items", "stuff", "things", "various", "uncategorized",
    "unsorted", "unknown", "content", "contents", "data", "info", "information",
    "everything", "folder", "folders", "directory", "group", "groups", "category",
    "categories", "section", "sections", "default", "new", "part", "more", "chunk",
    "chunks", "text", "untitled", "inbox", "root", "main", "common", "rest", "name",
    "names", "parent", "child", "subfolder", "example", "path",
})
# fmt: on
_NAME_WORD = re.compile(r"[^\W_]+")
_EMPTY_OPENINGS = ("memories about", "memories from", "memories on", "notes about")
_DOCUMENT_SUFFIX = re.compile(r"[._](md|markdown|txt|text|pdf|docx?|html?|rst)$", re.IGNORECASE)
MAX_TERMS = 3
MAX_LISTED = 4


def is_generic_name(name: str) -> bool:
    """True for a folder name made only of empty words and numbers ("topic",
    "misc_notes", "general_2", "part_1"): it says nothing about what the folder holds."""
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    return all(w in GENERIC_WORDS or w.isdigit() for w in words)


def is_empty_description(description: str, name: str = "") -> bool:
    """True when a description adds nothing to the folder's name: empty, "General",
    "Memories about <name>", or words that are all in the name or generic."""
    text = " ".join(description.split()).lower().rstrip(".")
    if not text or text.startswith(_EMPTY_OPENINGS):
        return True
    words = {w.lower() for w in WORD.findall(text)} - STOPWORDS
    own = {w.lower() for w in _NAME_WORD.findall(name)}
    return not (words - own - GENERIC_WORDS)


def _tokens(text: str) -> list[str]:
    return [w for w in WORD.findall(text.replace("_", " ")) if len(w) > 2 and not w.isdigit()]


def salient_terms(texts: Iterable[str], count: int = MAX_TERMS) -> list[str]:
    """The terms found in most of `texts` (then most often), in their most common
    spelling ("PagerDuty", not "pagerduty"); stopwords and empty words left out."""
    spread: Counter[str] = Counter()
    frequency: Counter[str] = Counter()
    spelling: dict[str, Counter[str]] = {}
    for text in texts:
        tokens = [t for t in _tokens(text) if t.lower() not in STOPWORDS | GENERIC_WORDS]
        frequency.update(t.lower() for t in tokens)
        spread.update({t.lower() for t in tokens})
        for token in tokens:
            spelling.setdefault(token.lower(), Counter())[token] += 1
    ranked = sorted(spread, key=lambda w: (-spread[w], -frequency[w], w))
    return [spelling[w].most_common(1)[0][0] for w in ranked[:count]]


def readable(name: str) -> str:
    """A file or folder name as words: "acme_oncall_rules.md" and "acme_oncall_rules_md"
    (a folder named after a document) -> "Acme oncall rules"."""
    words = _DOCUMENT_SUFFIX.sub("", name).replace("_", " ").strip() or name
    return words[:1].upper() + words[1:]


def join_words(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def describe_contents(
    folders: Sequence[tuple[str, int]],
    titles: Sequence[str],
    texts: Sequence[str] = (),
    terms: Sequence[str] | None = None,
) -> str:
    """One or two short sentences on what a folder holds: "3 memories on Acme, paging
    and escalation: Rotation, Paging and Escalation." from its memories' titles (and
    texts such as tldrs, or the given terms), then its subfolders (name, memory count)."""
    if terms is None:  # a list of folders says what they are about by itself
        terms = salient_terms([*titles, *texts]) if titles else []
    subject = f" on {join_words(list(terms))}" if terms else ""
    parts = []
    if titles:
        listed = _listing([readable(t) for t in titles])
        parts.append(f"{plural(len(titles), 'memory')}{subject}: {listed}.")
        subject = ""  # said once is enough
    if folders:
        total = sum(n for _, n in folders)
        shown = [f"{readable(name)} ({n})" for name, n in folders]
        where = plural(len(folders), "folder")
        parts.append(f"{plural(total, 'memory')}{subject} in {where}: {_listing(shown)}.")
    return " ".join(parts) or "Empty for now."


def _listing(names: Sequence[str], shown: int = MAX_LISTED) -> str:
    picked = list(names[:shown])
    more = len(names) - len(picked)
    return join_words(picked + ([f"{more} more"] if more else []))
