"""Memories that keep their document's context, written as notes a person would read.

A chunk from the middle of a document rarely names whose document it is; several
organizations' documents with the same headings then become indistinguishable memories.
So every chunk is memorized with its document's context (title, subject), and the result
is checked without the LLM: the title starts with the subject and the text names it. The
body is a note, not a copy: a body that opens by repeating the tldr loses the repetition
(the tldr is in the front matter), sentences that only say what the text is about ("The
document describes…") are left out, and a body with nothing else is made of the passage's
own sentences (its first, then those stating numbers), prose only. Numbers the model left out
are not pasted back: the original wording is kept and searched (`.gam/sources/`), so a
note needs no run of tokens from its chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gam_desktop.engine.ingest.documents import PASTED_TEXT, SourceDocument
from gam_desktop.engine.ingest.lexicon import (
    ABOUT_IT,
    ABOUT_THE_TEXT,
    ABOUT_WHAT,
    DOCUMENT_KINDS,
    STATES_A_FACT,
)
from gam_desktop.engine.store.naming import sanitize_name
from gam_desktop.engine.textutil import STOPWORDS, written_word

NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
SENTENCE = re.compile(r"(?<=[.!?])\s+")
TLDR_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])")  # see one_sentence
TLDR_WORDS = 80
LIST_MARK = re.compile(r"^(?:[-*•+]|\d+[.)])\s+")  # "- ", "* ", "3. ", "2) "
SECTION_NUMBER = re.compile(r"^(?:(?:[A-Za-z]\.)?\d+(?:\.\d+)*[.)]\s+)+")  # "B.4.1. ", "3) "
# Lines that are markup or code rather than prose: headings, underlines, fences, tables,
# directives and fields of reStructuredText, HTML tags.
NOT_PROSE = re.compile(r"^\s*(?:#|```|~~~|[=\-~^*]{3,}\s*$|\||\.\. |:\w[^:]*:|<|\{)")
LEAD_SENTENCES, LEAD_CHARS = 5, 700  # what a body made of the passage's own sentences holds
MIN_SENTENCE_WORDS = 4
TITLE_WORD = re.compile(r"[\w.]+(?:-[\w.]+)*")  # "In-House" and "Wi-Fi" whole


@dataclass(frozen=True)
class DocumentContext:
    title: str  # "Example Corp Travel Policy"
    subject: tuple[str, ...]  # ("Example", "Corp"): whose document it is
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
    """The document's one level-1 heading (its section number left out), else its file
    name; None when neither says what it is (pasted text whose headings are all sections)."""
    h1 = [line[2:].strip() for line in doc.text.splitlines() if line.startswith("# ")]
    if len(h1) == 1:
        return SECTION_NUMBER.sub("", h1[0]).strip() or h1[0]
    return file_title(doc)


def file_title(doc: SourceDocument) -> str | None:
    """The file name as words, each as the document writes it ("zylodb-4.2-notes" ->
    "ZyloDB 4.2 notes"), an initialism in capitals ("hvk-2.1-terms" -> "HVK 2.1
    terms")."""
    if doc.name == PASTED_TEXT:
        return None
    words = re.sub(r"[_-]+", " ", Path(doc.name).stem).split()
    return " ".join(written_word(w, [doc.text]) for w in words) or None


def subject_of(title: str) -> list[str]:
    """The words of a title that say whose document it is (at most three)."""
    words = [
        part.strip("._")
        for word in TITLE_WORD.findall(title)
        if not _compound_modifier(word)
        for part in word.split("-")
        if part.strip("._")
    ]
    words = [w for w in words if w.lower() not in DOCUMENT_KINDS | STOPWORDS]
    # Capitalized words (and versions) name the subject in a title; a lowercase file
    # name ("zephyr 4.2 notes") names it with all of its specific words.
    capitalized = [w for w in words if w[0].isupper() or any(c.isdigit() for c in w)]
    named = capitalized if any(w[0].isupper() for w in words) else words
    # a year or version after the name tells look-alikes apart ("Garden Club Minutes, 2021")
    dated = [w for w in named[3:] if any(c.isdigit() for c in w)]
    return named[:3] + dated[:1]


def _compound_modifier(word: str) -> bool:
    """A hyphenated word built on a function word ("In-House", "Off-Site", "End-of-Life")
    describes the kind of thing, as an adjective does; a name ("Wi-Fi") has none."""
    parts = word.lower().split("-")
    return len(parts) > 1 and any(part in STOPWORDS for part in parts)


def document_context(doc: SourceDocument) -> DocumentContext:
    title = document_title(doc)
    if title is None:
        return DocumentContext("", (), "")
    subject = subject_of(title)
    named = file_title(doc)
    if named and not any(c.isalpha() for w in subject for c in w):
        # a heading of a version alone ("Version 2.4"): the file name says of what
        title, subject = named, subject_of(named)
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
    if context.named_in(text):
        return text
    joint = "\n" if LIST_MARK.match(text) else " "  # a list starts below the title
    return f"{context.title}:{joint}{text}"


def number_coverage(memory: str, chunk: str) -> float:
    """The fraction of the chunk's numbers that the memory text holds (1.0 with none)."""
    numbers = set(NUMBER.findall(chunk))
    return len(numbers & set(NUMBER.findall(memory))) / len(numbers) if numbers else 1.0


def _flat(text: str) -> str:
    return " ".join(text.split())


def without_tldr(body: str, tldr: str) -> str:
    """`body` without the tldr it opens with, word for word (case and spacing aside), when
    the tldr ends where a sentence of the body ends: never half a sentence left."""
    flat, said = _flat(body), _flat(tldr).rstrip("…").strip()
    if not said or not flat.lower().startswith(said.lower()):
        return body.strip()
    rest = flat[len(said) :]
    ended = said.endswith((".", "!", "?"))
    if not ended and rest[:1] in (".", "!", "?"):  # a tldr without its full stop
        rest, ended = rest[1:], True
    if rest and not (ended and rest[:1].isspace()):
        return body.strip()
    return rest.strip()


def without_talk_about_the_text(body: str, title: str = "") -> str:
    """`body` without its sentences that say what the text is about instead of what it says
    (`ABOUT_THE_TEXT`, and "It also mentions…" after one or with nothing before it); ""
    when that is all it holds. Lines stay lines: a list keeps its items. A number of the
    document's `title` ("Widget 2.1") is no fact of the sentence that names it."""
    named = set(NUMBER.findall(title))
    lines, previous_about = [], True  # "It …" as the first sentence refers to nothing
    for line in body.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        mark = LIST_MARK.match(line.strip())
        text = line.strip()[mark.end() if mark else 0 :]
        kept = []
        for sentence in SENTENCE.split(text):
            about = _only_about_the_text(sentence, previous_about, named)
            if sentence:
                previous_about = about
            if not about:
                kept.append(sentence)
        said = " ".join(kept).strip()
        if said or not text:
            lines.append(indent + (mark.group(0) if mark and said else "") + said)
    return "\n".join(lines).strip()


def _opening(sentence: str, previous_about: bool) -> re.Match[str] | None:
    """The words of a sentence that talk about the text ("The passage outlines", "It
    covers" after such a sentence), if it opens with them."""
    return ABOUT_THE_TEXT.match(sentence) or (ABOUT_IT.match(sentence) if previous_about else None)


def _only_about_the_text(sentence: str, previous_about: bool, named: set[str]) -> bool:
    """Whether a sentence talks about the text and says nothing of its own after that: no
    "that" clause ("It specifies that…" states one) and no number but the document
    title's."""
    opening = _opening(sentence, previous_about)
    if opening is None:
        return False
    rest = NUMBER.sub(lambda m: "" if m[0] in named else m[0], sentence[opening.end() :])
    return not STATES_A_FACT.search(rest)


def said_directly(summary: str) -> str:
    """`summary` with each sentence that opens by talking about the text ("The document
    explains how to schedule jobs", "It covers the lock states") saying what it talks
    about instead ("How to schedule jobs", "The lock states"); a sentence that would keep
    fewer than three words stays as it is. A tldr is read in a list of notes, where "The
    document explains" is said by every one of them and tells them apart by nothing."""
    sentences, previous_about = [], True  # "It …" first refers to the text
    for sentence in SENTENCE.split(_flat(summary)):
        opening = _opening(sentence, previous_about)
        previous_about = bool(opening)
        rest = ABOUT_WHAT.sub("", sentence[opening.end() :]) if opening else ""
        if len(rest.split()) >= 3:
            sentence = rest[0].upper() + rest[1:]
        sentences.append(sentence)
    return " ".join(sentences)


def stated_tldr(tldr: str, body: str, title: str = "") -> str:
    """The tldr a note keeps: the model's, unless it only says what the text is about ("The
    Widget 2.0 notes outline the terms of use"), which tells a list of notes nothing; then
    the first sentence of the body that states something ("It specifies that pages are
    answered within 3 minutes" -> "Pages are answered within 3 minutes"). With none, the
    model's, said directly."""
    named = set(NUMBER.findall(title))
    if _only_about_the_text(_flat(tldr), True, named):
        previous_about = True
        for sentence in SENTENCE.split(_flat(body)):
            about = _only_about_the_text(sentence, previous_about, named)
            previous_about = _opening(sentence, previous_about) is not None
            if not about and len(sentence.split()) >= MIN_SENTENCE_WORDS:
                return said_directly(sentence)
    return said_directly(tldr)


def without_repeats(body: str) -> str:
    """`body` with each sentence said once: a small model's reply can loop, saying the same
    two sentences until its token cap cuts it ("It retains the environment. The at command
    runs jobs later. It retains the environment. …", 33 sentences, 4 different). The cut
    leaves a fragment of a sentence said before: it goes too. Lines stay lines."""
    seen: set[str] = set()
    lines = []
    for line in body.splitlines():
        kept = []
        for sentence in SENTENCE.split(line):
            said = " ".join(sentence.lower().split())
            if said and (said in seen or any(s.startswith(said) for s in seen)):
                continue
            seen.add(said)
            kept.append(sentence)
        if kept or not line.strip():
            lines.append(" ".join(kept))
    return "\n".join(lines).strip()


def says_something(body: str) -> bool:
    """Whether a body holds a sentence of a few words: a reference alone ("(ref. 2031-7)"),
    a name or a fragment left once the tldr and the talk about the text are out is none."""
    return any(len(s.split()) >= MIN_SENTENCE_WORDS for s in SENTENCE.split(_flat(body)))


def one_sentence(summary: str) -> str:
    """A tldr as the format has it, one sentence: the first of those the model wrote. A small
    model often writes a paragraph there, at times most of its passage, which every listing
    of the notes (a folder's README) then repeats; the rest is the note's body's to say. A
    sentence ends at ".", "!" or "?" before a capital or a digit ("e.g. the" goes on); one
    that runs on past `TLDR_WORDS` is cut at a word."""
    first = TLDR_END.split(" ".join(summary.split()), maxsplit=1)[0]
    words = first.split()
    if len(words) <= TLDR_WORDS:
        return first
    return " ".join(words[:TLDR_WORDS]).rstrip(",;:") + "…"


def prose_sentences(text: str) -> list[str]:
    """The sentences of the passage's prose, in order: code blocks, headings, tables and
    markup lines left out, list items as sentences."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or NOT_PROSE.match(line):
            lines.append("")
            continue
        lines.append(line.strip().lstrip("-*•").strip())
    blocks = "\n".join(lines).split("\n\n")
    found = [s for block in blocks for s in SENTENCE.split(_flat(block))]
    return [s for s in found if len(s.split()) >= MIN_SENTENCE_WORDS]


def opening(text: str, skip: str = "") -> str:
    """A body in the passage's own words: its first prose sentence, then the ones that
    state a number (at most LEAD_SENTENCES, about LEAD_CHARS, in the passage's order), the
    one `skip` says (the tldr) left out."""
    said = _flat(skip).rstrip("…").lower()
    sentences = [s for s in prose_sentences(text) if not (said and s.lower().startswith(said))]
    picked = [i for i, s in enumerate(sentences) if i == 0 or NUMBER.search(s)]
    kept: list[str] = []
    for i in picked[:LEAD_SENTENCES]:
        if kept and len(" ".join([*kept, sentences[i]])) > LEAD_CHARS:
            break
        kept.append(sentences[i])
    return " ".join(kept)
