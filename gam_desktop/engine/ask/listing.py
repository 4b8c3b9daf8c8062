"""Which documents state a thing: "Which field reports mention fog?" answered by reading
every document that holds the question's rarest word, not by a model choosing among the
passages it was shown.

A small model shown eight passages names one document of the two that say it, or the
look-alike that says the opposite ("No settings were removed in this release"). The
documents settle it themselves: each one with a paragraph holding the question's words,
the rarest of them in a sentence that does not deny it, is listed with that sentence, so
the reader sees the evidence for every name. A question that compares (the longest, five
minutes or less) or asks for something other than documents or who they are about
("Which settings …") is left to the model, as is one the documents do not settle.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gam_desktop.engine.ask.corpus import memory_of, reader_name
from gam_desktop.engine.ask.evidence import qualifiers
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.ask.words import stem, tokenize
from gam_desktop.engine.textutil import STOPWORDS

MAX_KEYS = 400  # files holding the rarest word: more, and no short list answers it
MAX_DOCUMENTS = 60  # documents read for one question: more, and it is too broad for a list
MAX_LISTED = 12  # documents in one answer
QUOTE_CHARS = 240

QUESTION = re.compile(r"^\s*(?:which|what)\s+(.+?)[\s?.!]*$", re.IGNORECASE | re.DOTALL)
WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*['’]?")
AUXILIARIES = frozenset(
    "is are was were does do did has have had must can could should will would".split()
)
# What a document is, or who or what it is about: the kinds a list of documents answers.
KINDS = frozenset(
    stem(word)
    for word in (
        "documents files notes reports papers articles memories records policies procedures "
        "releases versions manuals guides minutes letters emails contracts invoices "
        "companies teams people persons researchers authors customers clients vendors "
        "suppliers restaurants projects products organisations organizations sites cities"
    ).split()
)
# Words that say how a document states something, not what it states.
REPORTING = frozenset(
    stem(word)
    for word in (
        "mention mentions mentioned say says said state states stated talk talks discuss "
        "discusses describe describes refer refers according note notes include includes "
        "contain contains use uses used using require requires their any"
    ).split()
)
COMPARING = re.compile(
    r"\b(?:most|least|more|less|fewer|fewest|than|first|last|only|both|any|every|all|each|"
    r"always|"
    r"(?:long|short|high|low|larg|small|bigg|lat|earli|new|old|fast|slow|great|cheap)est)\b",
    re.IGNORECASE,
)
# "…, and to how many days?": a second question a list of documents does not answer
SECOND_QUESTION = re.compile(
    r"\band\s+(?:to\s+)?(?:what|how|when|which|who|whom|where|why)\b", re.I
)
NEGATION = re.compile(
    r"\b(?:no|not|never|nothing|none|neither|nor|without|prevent(?:s|ed)?|unable|cannot)\b"
    r"|n't\b",
    re.IGNORECASE,
)
UNDERLINE = re.compile(r"^[-=]{3,}$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
CLAUSE_END = re.compile(r"[:;,—]")


@dataclass
class Listed:
    """A document that states what the question asks about, with the sentence saying it."""

    document: str  # as a reader names it ("Field report okafor lind 2022")
    sentence: str
    memories: list[str]  # the memory files covering that sentence (what is cited)


@dataclass
class _Question:
    kind: list[str]  # stems of the words naming what is listed ("lumenvault", "releas")
    words: list[tuple[str, str | None]]  # (stem, the joined stem of a hyphenated word)
    names: set[str]  # stems of the names, versions and acronyms it gives


def listing_question(question: str) -> _Question | None:
    """The parts of a "Which <documents or who they are about> <say something>?" question:
    None for any other question."""
    match = QUESTION.match(question)
    if match is None or COMPARING.search(question) or SECOND_QUESTION.search(question):
        return None
    words = [
        w.lower().rstrip("'’").removesuffix("'s").removesuffix("’s")
        for w in WORD.findall(match.group(1))
    ]
    for at, word in enumerate(words[:3]):
        if word in AUXILIARIES:
            return None
        if (word.endswith("s") and not word.endswith("ss") and len(word) > 3) or word == "people":
            kind = [stem(w) for w in words[: at + 1] if w not in STOPWORDS]
            rest = [_parts(w) for w in words[at + 1 :]]
            names = {t for name in qualifiers(question) for t in tokenize(name)}
            return _Question(kind, [p for parts in rest for p in parts], names)
    return None


def _parts(word: str) -> list[tuple[str, str | None]]:
    """A word's search terms; a hyphenated one ("on-call") keeps its joined form too, which
    a document's name may use ("oncall-policy")."""
    pieces = tokenize(word)
    joined = stem("".join(word.split("-"))) if "-" in word else None
    return [(p, joined) for p in pieces if p not in STOPWORDS and p not in REPORTING]


def list_documents(tools: MemoryTools, question: str) -> list[Listed] | None:
    """The documents that state what a listing question asks about, each with the sentence
    that says it; None when the question is not one, or the documents do not settle it."""
    parsed = listing_question(question)
    if parsed is None or not parsed.words:
        return None
    holding = {t: tools.index.containing([t]) for t, _ in parsed.words}
    # The documents to read: those holding its names and figures, else its rarest words.
    found = sorted((t for t, keys in holding.items() if keys), key=lambda t: len(holding[t]))
    telling = [t for t in found if t.isdigit() or t in parsed.names] or found[:2]
    if not telling or any(len(holding[t]) > MAX_KEYS for t in telling):
        return None
    total = max(len(tools.corpus.snapshot()), 1) * 2  # memories and their originals
    weights = {t: math.log(1 + total / (1 + len(keys))) for t, keys in holding.items()}
    documents = _documents(tools, holding, telling)
    if len(documents) > MAX_DOCUMENTS:
        return None
    listed = []
    for (name, digest), memories in documents.items():
        text = tools.corpus.source(digest)
        stated = _stated(text, name, parsed, weights) if text else None
        if stated is not None:
            sentence, at = stated
            covering = [m for m, start, end in memories if start <= at < end]
            listed.append(Listed(reader_name(name), sentence, covering or [memories[0][0]]))
    if not listed or len(listed) > MAX_LISTED:
        return None
    named = {t for item in listed for t in tokenize(item.document)}
    if not any(k in KINDS for k in parsed.kind) and not named & set(parsed.kind):
        return None  # "Which settings …": not documents, nor who they are about
    return sorted(listed, key=lambda item: item.document.lower())


def _documents(
    tools: MemoryTools, holding: dict[str, list[str]], terms: list[str]
) -> dict[tuple[str, str], list[tuple[str, int, int]]]:
    """The documents (name, content hash) whose memories hold one of `terms`, with those
    memories and the span of the document each covers."""
    documents: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for memory in dict.fromkeys(memory_of(key) for term in terms for key in holding[term]):
        found = tools.corpus.source_of(memory)
        if found is not None:
            name, digest, start, end = found
            documents.setdefault((name, digest), []).append((memory, start, end))
    return documents


def _stated(
    text: str, name: str, parsed: _Question, weights: dict[str, float]
) -> tuple[str, int] | None:
    """The sentence of document `name` (its `text`) that states the question's words, and
    where it starts; None when no paragraph holds enough of them (every figure, and half
    their weight) with its rarest one in a sentence that does not deny it."""
    named = set(tokenize(name))
    document_words = set(tokenize(text))
    qualifiers = [k for k in parsed.kind if k not in KINDS and k not in named]
    if not set(qualifiers) <= document_words:
        return None  # "Which Lumenvault releases …" of another product's notes
    wanted = {t for t, joined in parsed.words if t not in named and joined not in named}
    if not wanted & document_words:
        return None
    weight = {t: weights.get(t, 1.0) for t in wanted}
    # Its figures and names must all be there ("Threadline", "90"); without any, its
    # rarest word ("purple" of purple boards); of the others, one may be said otherwise.
    must = {t for t in wanted if t.isdigit() or t in parsed.names}
    must = must or {max(wanted, key=lambda t: weight[t])}
    best: tuple[tuple[float, float], str, int] | None = None
    for heading, block, at in _blocks(text):
        in_heading = set(tokenize(heading)) & wanted
        in_block = set(tokenize(block)) & wanted
        held = in_heading | in_block
        if not in_block or not must <= held or len(wanted - held) > 1:
            continue
        key = max(in_block & must or in_block, key=lambda t: weight[t])
        said = [(sum(weight[t] for t in set(tokenize(s)) & wanted), s) for s in _sentences(block)]
        top, sentence = max((item for item in said if key in tokenize(item[1])), key=lambda i: i[0])
        if any(_denies(sentence, t) for t in wanted):
            continue  # its fullest sentence says no ("No settings were removed")
        score = (top + sum(weight[t] for t in in_heading), sum(weight[t] for t in in_heading))
        if best is None or score > best[0]:
            best = (score, _quoted(sentence), at + max(block.find(sentence), 0))
    return (best[1], best[2]) if best else None


def _blocks(text: str) -> list[tuple[str, str, int]]:
    """The paragraphs of a document with the heading they sit under, and where each starts.
    A heading is a line opened by #, or a line underlined with - or = ("4. COOLING")."""
    blocks: list[tuple[str, str, int]] = []
    heading, start, offset = "", 0, 0
    lines: list[str] = []
    rows = text.splitlines(keepends=True)

    def close() -> None:
        if lines and "".join(lines).strip():
            blocks.append((heading, "".join(lines).strip(), start))
        lines.clear()

    for number, row in enumerate(rows):
        line = row.strip()
        underlined = number + 1 < len(rows) and UNDERLINE.match(rows[number + 1].strip())
        if line.startswith("#") or (line and underlined):
            close()
            heading = line.lstrip("#").strip()
        elif not line or UNDERLINE.match(line):
            close()
        else:
            if not lines:
                start = offset
            lines.append(row)
        offset += len(row)
    close()
    return blocks


def _sentences(block: str) -> list[str]:
    return [s for s in SENTENCE_END.split(block) if s.strip()]


def _denies(sentence: str, word: str) -> bool:
    """Whether the clause of `sentence` holding `word` (a search term) denies it: "No
    settings were removed" does; "is removed: it did not work" does not."""
    plain = re.sub(r"\([^)]*\)", " ", sentence)  # an aside does not cut a clause in two
    return any(
        word in tokenize(clause) and NEGATION.search(clause) for clause in CLAUSE_END.split(plain)
    )


def _quoted(sentence: str) -> str:
    flat = " ".join(sentence.replace("**", "").split()).lstrip("-*• ")
    return flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def listing_answer(listed: list[Listed]) -> str:
    """The documents by name, then each with the sentence that says it."""
    names = [item.document for item in listed]
    head = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    lines = [f"{head}.", ""]
    lines += [f"- **{item.document}**: “{item.sentence}”" for item in listed]
    return "\n".join(lines)
