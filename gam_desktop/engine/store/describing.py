"""Words that say nothing about a folder, and descriptions made from its memories.

A small model asked for a taxonomy names folders "topic" or "general" and describes
them as "Memories about topic" or "5 chunks: a; b; c"; a README like that tells the
exploring agent nothing. These helpers recognise such names and descriptions and, where
no LLM description is available, write one in words from what the folder actually holds:
what the titles of its memories share, and what each adds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePath

from gam_desktop.engine.textutil import STOPWORDS, WORD, opens_sentence, written_word

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
# "4 memories on a, b and c", "5 chunks: x; y": a count and a list, which the contents
# list under the description shows anyway
_COUNT_OPENING = re.compile(r"^\s*\d+\s+(?:memor(?:y|ies)|notes?|chunks?|files?|documents?)\b")
_DOCUMENT_SUFFIX = re.compile(r"[._](md|markdown|txt|text|pdf|docx?|html?|rst)$", re.IGNORECASE)
MAX_LISTED = 4
MAX_DOCUMENTS = 3


def is_generic_name(name: str) -> bool:
    """True for a folder name made only of empty words and numbers ("topic",
    "misc_notes", "general_2", "part_1"): it says nothing about what the folder holds."""
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    return all(w in GENERIC_WORDS or w.isdigit() for w in words)


def is_empty_description(description: str, name: str = "") -> bool:
    """True when a description adds nothing to the folder's name: empty, "General",
    "Memories about <name>", a count of what it holds ("5 chunks: a; b"), or words that
    are all in the name or generic."""
    text = " ".join(description.split()).lower().rstrip(".")
    if not text or text.startswith(_EMPTY_OPENINGS) or _COUNT_OPENING.match(text):
        return True
    words = {w.lower() for w in WORD.findall(text)} - STOPWORDS
    own = {w.lower() for w in _NAME_WORD.findall(name)}
    return not (words - own - GENERIC_WORDS)


def join_words(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def describe_contents(
    folders: Sequence[tuple[str, int]],
    titles: Sequence[str],
    texts: Sequence[str] = (),
    sources: Sequence[str] = (),
    headings: Sequence[str] = (),
) -> str:
    """One or two sentences on what a folder holds, in words, from its memories' titles
    (spelled as their tldrs, `texts`, spell them), their documents (`sources`, when
    known) and its subfolders' names: "Notes on North Pricing: prices,
    discounts and delivery." The words the titles share say what the
    folder is about; what is left of each title says what each note adds. Never a count
    ("4 memories on a, b and c"). With the titles as a reader sees them (`headings`, one a
    title), each names its part of its document as written ("Gizmo 2.4 Guide: Pairing the
    Remote"), which a file name's words lose ("pairing_the_remote")."""
    parts = []
    if titles:
        sentence = _parts_sentence(headings, texts, sources) if headings else None
        parts.append(sentence or _notes_sentence([_name_words(t) for t in titles], texts, sources))
        if len(titles) == 1 and texts and texts[0].strip():
            parts.append(" ".join(texts[0].split()))
    if folders:
        names = [_name_words(name) for name, _n in folders]
        parts.append(_folders_sentence(names, texts, alone=not titles))
    return " ".join(parts) or "Empty for now."


def _source_words(source: str) -> list[str]:
    """A document's file name as words: "acme-2.0_notes.md" -> "acme", "2.0", "notes"."""
    stem = _DOCUMENT_SUFFIX.sub("", PurePath(source).name)
    return [w for w in re.split(r"[-_\s]+", stem.lower()) if w]


def _name_words(name: str) -> list[str]:
    """A file name's words, without the "s" a possessive leaves alone ("tallyho_s_ledger"
    of "Tallyho's ledger"): once the name it was written on is out as a word every title
    says, it would read as a word of its own ("querying s ledger")."""
    return [w for w in _DOCUMENT_SUFFIX.sub("", name).lower().split("_") if w and w != "s"]


def _shared(names: Sequence[list[str]]) -> list[str]:
    """The words found in more than half of `names` (two at least), in reading order."""
    if len(names) < 2:
        return []
    spread = Counter(w for words in names for w in set(words))
    order = [w for words in names for w in words]
    common = [w for w in dict.fromkeys(order) if spread[w] * 2 > len(names) and spread[w] > 1]
    return [w for w in common if w not in STOPWORDS and not w.isdigit()]


def spelled(words: Sequence[str], texts: Sequence[str], whole: bool = False) -> str:
    """`words` as the texts write them ("widget 2 4" -> "Widget 2.4", "walk
    park" -> "Walk in the Park"), else word by word as the texts write each ("frontdesk
    hvk" -> "front-desk HVK"), numbers in a row as a version ("2 1" -> "2.1"). `whole`:
    the words are all there are (a file name a person wrote), so no function word goes
    between them: "gizmo quotas" is not the "Gizmo has quotas" of a sentence."""
    if not words:
        return ""
    # (a possessive's "'s" may follow a word: "tallyho ledger" is "Tallyho's ledger")
    fillers = "" if whole else r"(?:(?:" + "|".join(sorted(STOPWORDS)) + r")[\W_]+){0,2}"
    gap = r"(?:['’]s)?[\W_]+" + fillers
    pattern = re.compile(r"\b" + gap.join(re.escape(w) for w in words) + r"\b", re.IGNORECASE)
    for text in texts:
        found = pattern.search(text)
        if found:  # the phrase as written there, each word as the texts write it most
            said = _NAME_WORD.sub(lambda m: _cased(m.group(0), texts), " ".join(found[0].split()))
            first = _NAME_WORD.match(said)
            if first and opens_sentence(text, found.start()) and _lowercase_in(first[0], texts):
                # "Quota rules: …" opens a sentence, and its capital is the sentence's
                said = first[0].lower() + said[first.end() :]
            return said
    return _VERSION_GAP.sub(".", " ".join(written_word(w, texts) for w in words))


def _lowercase_in(word: str, texts: Sequence[str]) -> bool:
    """Whether the texts write `word` in lowercase, and most often so."""
    lower = word.lower()
    if not any(re.search(rf"(?<![\w-]){re.escape(lower)}(?![\w-])", t) for t in texts):
        return False
    return written_word(lower, texts) == lower


def _cased(word: str, texts: Sequence[str]) -> str:
    """`word` as the texts write it, when they write it other than in lowercase."""
    written = written_word(word.lower(), texts)
    return written if written != word.lower() else word


_VERSION_GAP = re.compile(r"(?<=\d) (?=\d)")  # "1 0" of a name's "1_0": "1.0"


def folder_title(name: str, texts: Sequence[str]) -> str:
    """A folder's heading made from its name, its words as what it holds (`texts`: its
    description, its notes' tldrs) writes them: "zylodb_4_2" -> "ZyloDB 4.2"."""
    said = spelled(_name_words(name), texts)
    return said[:1].upper() + said[1:] if said else "Memory"


def _notes_sentence(
    names: Sequence[list[str]], texts: Sequence[str], sources: Sequence[str]
) -> str:
    """ "Notes on <what the titles share>: <what each adds>.", or, the documents known,
    "Notes from <documents> [on <what the titles share>]: <what each adds>."."""
    shared = _shared(names)
    documents = [spelled(_source_words(s), texts, whole=True) for s in sources if s]
    documents = list(dict.fromkeys(documents))
    named = {w.lower() for d in documents for w in WORD.findall(d)}
    rest = [_edged(_after(named, _once([w for w in words if w not in shared]))) for words in names]
    topics = list(dict.fromkeys(spelled(words, texts) for words in rest if words))
    listed = _listing(topics)
    subject = spelled(shared, texts)
    if documents:  # whose notes they are says more than the words their titles share
        origin = f"Notes from {_listing(documents, MAX_DOCUMENTS)}"
        if subject and not named & set(shared):
            origin += f" on {subject}"
        return f"{origin}: {listed}." if topics else f"{origin}."
    if subject and topics:
        return f"Notes on {subject}: {listed}."
    return f"Notes on {subject or listed}."


def _parts_sentence(
    headings: Sequence[str], texts: Sequence[str], sources: Sequence[str]
) -> str | None:
    """ "Notes from <documents>: <each part as its heading writes it>.", when every heading
    names its document and then its part ("Gizmo 2.4 Guide: Pairing the Remote"; a heading
    that is the document's name alone adds no part); None when one does not, or none
    names a part."""
    documents = [spelled(_source_words(s), [*headings, *texts], whole=True) for s in sources]
    if len(documents) != len(headings) or not all(documents):
        return None
    topics = []
    for heading, document in zip(headings, documents, strict=True):
        said = " ".join(heading.split())
        if said.lower() == document.lower():
            continue
        opening = re.match(re.escape(document) + r"\s*[:—–-]\s+", said, re.IGNORECASE)
        if opening is None:
            return None
        topics.append(said[opening.end() :].rstrip("."))
    if not topics:
        return None
    origin = _listing(list(dict.fromkeys(documents)), MAX_DOCUMENTS)
    return f"Notes from {origin}: {_listing(list(dict.fromkeys(topics)))}."


def _once(words: list[str]) -> list[str]:
    """`words` with a word right after itself said once: "tallyho sync, tallyho-cli sync"
    less the words every title says is "sync sync"."""
    return [w for i, w in enumerate(words) if i == 0 or words[i - 1] != w]


def _edged(words: list[str]) -> list[str]:
    """A phrase without the function words at its edges: "with installing" -> "installing",
    "of a migration to testing" -> "migration to testing" (what was left of a title once
    the words every title says are out)."""
    while words and words[0] in STOPWORDS:
        words = words[1:]
    while words and words[-1] in STOPWORDS:
        words = words[:-1]
    return words


def _after(named: set[str], words: list[str]) -> list[str]:
    """`words` without the leading ones its document's name says ("2 0 manual" of
    "widget-2.0-manual" -> "manual"), and without numbers standing alone."""
    while words and (words[0] in named or words[0].isdigit()):
        words = words[1:]
    return [] if all(w.isdigit() for w in words) else words


def _folders_sentence(names: Sequence[list[str]], texts: Sequence[str], alone: bool) -> str:
    shared = _shared(names)
    subject = spelled(shared, texts)
    rest = [[w for w in words if w not in shared] or words for words in names]
    shown = [spelled(words, texts) for words in rest]
    topics = _listing(list(dict.fromkeys(shown)))
    if not alone:
        return f"Also folders on {topics}."
    if subject:
        return f"Notes on {subject}, in folders on {topics}."
    return f"Notes in folders on {topics}."


def _listing(names: Sequence[str], shown: int = MAX_LISTED) -> str:
    picked = list(names[:shown])
    more = len(names) - len(picked)
    return join_words(picked + ([f"{more} more"] if more else []))
