"""Which documents state a thing: "Which field reports mention fog?" answered by reading
every document that holds the question's rarest words, not by a model choosing among the
passages it was shown.

A small model shown eight passages names one document of the two that say it, or the
look-alike that says the opposite ("No settings were removed in this release"). The
documents settle it themselves: each one with a paragraph holding every word of the
question, in a sentence that does not deny it, is listed with that sentence, so the reader
sees the evidence for every name. A document holding all but one of them is listed apart,
with the word it lacks ("Threadline" and "incident" but not "chat"): a paraphrase or a
look-alike, for the reader to judge. A question that compares (the longest, five minutes
or less), denies ("… no fog"), gives a version, or asks for something other than documents
or who they are about ("Which settings …") is left to the model, as is one the documents
do not settle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gam_desktop.engine.ask.corpus import memory_of, reader_name
from gam_desktop.engine.ask.evidence import VERSION, qualifiers
from gam_desktop.engine.ask.paragraphs import blocks
from gam_desktop.engine.ask.tools import MemoryTools
from gam_desktop.engine.ask.words import stem, tokenize
from gam_desktop.engine.textutil import STOPWORDS

MAX_KEYS = 400  # files holding a telling word: more, and no short list answers it
MAX_DOCUMENTS = 30  # documents read for one question: more, and it is too broad for a list
MAX_LISTED = 12  # documents in one answer
QUOTE_CHARS = 240

QUESTION = re.compile(r"^\s*(?:which|what)\s+(.+?)[\s?.!]*$", re.IGNORECASE | re.DOTALL)
WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*['’]?")
AUXILIARIES = frozenset(
    "is are was were does do did has have had must can could should will would".split()
)


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(word) for word in words.split())


# Kinds of document: a document of the kind has the word in its name or its title.
DOCUMENT_KINDS = _stems(
    "reports papers articles policies procedures releases versions manuals guides minutes "
    "letters emails contracts invoices logs journals diaries specifications specs plans"
)
# Any document; and who or what a document is about, which its name need not say.
ANY_KINDS = _stems(
    "documents files notes memories records companies teams researchers authors customers "
    "clients vendors suppliers restaurants kitchens projects products organisations "
    "organizations sites cities"
)
# Words that say how a document states something, not what it states.
REPORTING = _stems(
    "mention mentions mentioned say says said state states stated talk talks discuss "
    "discusses describe describes refer refers according note notes include includes "
    "contain contains use uses used using require requires their any anything something "
    "everything"
)
COMPARING = re.compile(
    r"\b(?:most|least|more|less|fewer|fewest|than|first|last|only|both|any|every|all|each|"
    r"always|"
    r"(?:long|short|high|low|larg|small|bigg|lat|earli|new|old|fast|slow|great|cheap)est)\b",
    re.IGNORECASE,
)
# "…, and to how many days?": a second question a list of documents does not answer
SECOND_QUESTION = re.compile(
    r"\band\s+(?:to\s+)?(?:what|how|when|which|who|whom|where|why)\b", re.IGNORECASE
)
NEGATION = re.compile(
    r"\b(?:no|not|never|nothing|none|neither|nor|without|prevent(?:s|ed)?|unable|cannot|"
    r"absent|zero|lacks?|lacking)\b|n't\b",
    re.IGNORECASE,
)
# "At any hour": asked of documents, a sentence must say it always happens, and no
# sentence saying it "only between 07:00 and 22:00" says it (a quantifier, else compared).
ALWAYS_ASKED = re.compile(
    r"\b(?:at\s+)?(?:any|all)\s+(?:hours?|times?)(?:\s+of\s+(?:the\s+)?day(?:\s+or\s+night)?)?"
    r"|\b(?:a?round\s+the\s+clock|24/7|day\s+(?:and|or)\s+night)",
    re.IGNORECASE,
)
ALWAYS_SAID = re.compile(
    r"\b(?:any|all)\s+(?:hours?|times?)\b|\b24\s*(?:hours|h)\s+a\s+day\b|\b24\s*[/x]\s*7\b"
    r"|\ba?round\s+the\s+clock\b|\bday\s+(?:and|or)\s+night\b|\bwhatever\s+the\s+(?:hour|time)\b",
    re.IGNORECASE,
)
# What limits it: "only between 07:00 and 22:00", "except during the maintenance window",
# "on weekdays", "unless …", "suspended", "during the holiday freeze".
RESTRICTED = re.compile(
    r"\bonly\b|\boutside\s+(?:of\s+)?(?:th(?:ose|ese|at|is)|business|working|office)\b"
    r"|\b(?:except|unless|but\s+not|apart\s+from|suspended|paused|during|on\s+weekdays|"
    r"on\s+weekends|at\s+weekends|between\s+\d)\b",
    re.IGNORECASE,
)
# A comparison, not a denial: "for no longer than two hours"
NOT_A_DENIAL = re.compile(r"\bno\s+(?:longer|more|less|later|earlier|fewer|sooner)\s+than\b", re.I)
# What is yet to be done, not what was: "A landing should be attempted in a calmer month",
# "`x` will be removed in 5.0". Not "could" or "would", which also tell what was done.
PROSPECTIVE = re.compile(
    r"\b(?:should|ought|will|shall|(?:plan|hope|intend|aim)(?:s|ed)?\s+to|recommend\w*|"
    r"propos\w*)\b|['’]ll\b",
    re.IGNORECASE,
)
PAST = frozenset("found saw went took made held ran gave got came left kept".split())
# Before a verb, what makes it a plan or advice: "will be removed", "is to be attempted"
MODAL = frozenset("should ought will shall would could might may must to ll".split())
# A clause that only says "none": "Fog: none", "| Fog | 0 |"
BARE_DENIAL = re.compile(r"^\s*(?:none|no|nil|zero|0|n/a|-+)\s*[.|]?\s*$", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
CLAUSE_END = re.compile(r"[:;,—|]")


@dataclass
class Listed:
    """A document that states what the question asks about, with the sentence saying it."""

    document: str  # as a reader names it ("Field report okafor lind 2022")
    sentence: str
    memories: list[str]  # the memory files covering that sentence (what is cited)
    lacking: str = ""  # the question's word it does not say, when it says all but one


@dataclass
class _Question:
    kind: list[str]  # stems of the words naming what is listed ("lumenvault", "releas")
    words: list[tuple[str, str | None]]  # (stem, the joined stem of a hyphenated word)
    names: set[str]  # stems of the names and acronyms it gives
    shown: dict[str, str]  # each stem as the question writes it ("chat")
    past: str = ""  # its verb when it asks what was done ("landed"): a plan does not say it
    always: bool = False  # it asks what happens "at any hour"


def listing_question(question: str) -> _Question | None:
    """The parts of a "Which <documents or who they are about> <say something>?" question:
    None for any other question."""
    always = ALWAYS_ASKED.search(question) is not None
    question = ALWAYS_ASKED.sub(" ", question)
    match = QUESTION.match(question)
    if (
        match is None
        or COMPARING.search(question)
        or SECOND_QUESTION.search(question)
        or NEGATION.search(question)  # "Which releases removed no settings?"
        or VERSION.search(question)  # "3.2" is no one word of a document
    ):
        return None
    raw = [w.lower() for w in WORD.findall(match.group(1))]
    words = [w.rstrip("'’").removesuffix("'s").removesuffix("’s") for w in raw]
    for at, word in enumerate(words[:3]):
        if word in AUXILIARIES:
            return None
        if _plural(words, at):
            if raw[at] != word:  # "researchers' teams", "companies' on-call policies"
                at = next((j for j in range(at + 1, at + 4) if _plural(words, j)), at)
            kind = [t for w in words[: at + 1] for t in tokenize(w) if t not in STOPWORDS]
            rest = [(w, _parts(w)) for w in words[at + 1 :]]
            parts = [p for _, found in rest for p in found]
            shown = {p[0]: w for w, found in rest for p in found}
            names = {t for name in qualifiers(question) for t in tokenize(name)}
            # the verb after what is listed: "releases removed …", not "cooked food"
            verb = words[at + 1] if at + 1 < len(words) else ""
            return _Question(kind, parts, names, shown, verb if _past(verb) else "", always)
    return None


def _plural(words: list[str], at: int) -> bool:
    word = words[at] if at < len(words) else ""
    return word.endswith("s") and not word.endswith("ss") and len(word) > 3


def _past(word: str) -> bool:
    """Whether a question's word tells of what was done: "landed", "removed", "found"."""
    if word in PAST:
        return True
    return len(word) > 4 and word.endswith("ed") and stem(word) not in REPORTING


def _parts(word: str) -> list[tuple[str, str | None]]:
    """A word's search terms; a hyphenated one ("on-call") keeps its joined form too, which
    a document's name may use ("oncall-policy")."""
    pieces = tokenize(word)
    joined = stem("".join(word.split("-"))) if "-" in word else None
    return [(p, joined) for p in pieces if p not in STOPWORDS and p not in REPORTING]


def list_documents(tools: MemoryTools, question: str) -> list[Listed] | None:
    """The documents that state what a listing question asks about, each with the sentence
    that says it (those saying all its words first); None when the question is not one, or
    the documents do not settle it."""
    parsed = listing_question(question)
    if parsed is None or not parsed.words or not _asks_for_documents(parsed):
        return None
    holding = {t: tools.index.containing([t]) for t, _ in parsed.words}
    # The documents to read: those holding its names and figures, else its rarest words.
    found = sorted((t for t, keys in holding.items() if keys), key=lambda t: len(holding[t]))
    telling = [t for t in found if t.isdigit() or t in parsed.names] or found[:2]
    if not telling or any(len(holding[t]) > MAX_KEYS for t in telling):
        return None
    documents = _documents(tools, holding, telling)
    if documents is None or len(documents) > MAX_DOCUMENTS:
        return None
    weights = {t: 1 / (1 + len(keys)) for t, keys in holding.items()}  # the rarer, the more
    listed: list[Listed] = []
    for (name, digest), memories in documents.items():
        text = tools.corpus.source(digest)
        if not text:
            return None  # a document that cannot be read may be the one that says it
        if not _of_kind(parsed, name, text):
            continue
        stated = _stated(text, name, parsed, weights)
        if stated is not None:
            sentence, at, lacking = stated
            covering = [m for m, start, end in memories if start <= at < end]
            document = reader_name(name)
            listed.append(Listed(document, sentence, covering or [memories[0][0]], lacking))
            if len(listed) > MAX_LISTED:
                return None
    if not any(not item.lacking for item in listed):
        return None  # no document says all of it: the model's question
    return sorted(listed, key=lambda item: (bool(item.lacking), item.document.lower()))


def _asks_for_documents(parsed: _Question) -> bool:
    """Whether what is listed ("field reports", "companies") is documents or who they are
    about, not things inside them ("settings", "dishes", "people")."""
    head = parsed.kind[-1] if parsed.kind else ""
    return head in DOCUMENT_KINDS or head in ANY_KINDS


def _of_kind(parsed: _Question, name: str, text: str) -> bool:
    """Whether document `name` is of the kind listed: "field reports" have "report" in
    their name or title; "Lumenvault releases" name Lumenvault somewhere."""
    first_line = text.lstrip()[:300].split("\n", 1)[0]
    titled = set(tokenize(name)) | set(tokenize(first_line))
    head = parsed.kind[-1]
    if head in DOCUMENT_KINDS and head not in titled:
        return False
    kinds = DOCUMENT_KINDS | ANY_KINDS
    qualifiers = [k for k in parsed.kind[:-1] if k not in titled and k not in kinds]
    return not qualifiers or set(qualifiers) <= set(tokenize(text))


def _documents(
    tools: MemoryTools, holding: dict[str, list[str]], terms: list[str]
) -> dict[tuple[str, str], list[tuple[str, int, int]]] | None:
    """The documents whose memories hold one of `terms` (see `documents_of`)."""
    return documents_of(tools, [key for term in terms for key in holding[term]], MAX_DOCUMENTS)


def documents_of(
    tools: MemoryTools, keys: list[str], limit: int
) -> dict[tuple[str, str], list[tuple[str, int, int]]] | None:
    """The documents (name, content hash) of the memories at corpus `keys`, with those
    memories and the span of the document each covers; None for more than `limit`."""
    documents: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for memory in dict.fromkeys(memory_of(key) for key in keys):
        found = tools.corpus.source_of(memory)
        if found is not None:
            name, digest, start, end = found
            documents.setdefault((name, digest), []).append((memory, start, end))
            if len(documents) > limit:
                return None
    return documents


def _stated(
    text: str, name: str, parsed: _Question, weights: dict[str, float]
) -> tuple[str, int, str] | None:
    """The sentence of document `name` (its `text`) that states the question's words,
    where it starts, and the word it lacks if any; None when no paragraph holds all of them
    but at most one (never a name or figure), in a sentence that does not deny them."""
    named = set(tokenize(name))
    # A word of the document's name is said by the document ("oncall" of "oncall policy"),
    # a figure only by its text ("2022" of a report named for its year).
    wanted = {
        t for t, joined in parsed.words if t.isdigit() or (t not in named and joined not in named)
    }
    if not wanted:
        return None
    # Its names and figures must all be said ("Threadline", "90"); without any, its rarest
    # word ("purple" of purple boards, where another kitchen's boards are yellow).
    must = {t for t in wanted if t.isdigit() or t in parsed.names}
    must = must or {max(wanted, key=lambda t: weights.get(t, 0.0))}
    free = "free" in wanted  # "allergen-free" is asked for, not denied
    # the words it says no to somewhere, or only plans ("prevented any landing")
    refused = {
        t
        for sentence in SENTENCE_END.split(text)
        for t in set(tokenize(sentence)) & wanted
        if _denies(sentence, t, free, parsed.past)
    }
    best: tuple[tuple[int, float, float], str, int, str] | None = None
    for heading, block, at in blocks(text):
        in_heading = set(tokenize(heading)) & wanted
        in_block = set(tokenize(block)) & wanted
        lacking = wanted - in_heading - in_block
        # A word it lacks here and denies or only plans elsewhere ("prevented any landing",
        # "a landing should be attempted"): no paraphrase.
        if not in_block or len(lacking) > 1 or lacking & (must | refused):
            continue
        sentence = _saying(
            block, in_block, must & in_block, weights, free, parsed.past, parsed.always
        )
        if sentence is None:
            continue
        said = set(tokenize(sentence)) & wanted
        score = (
            -len(lacking),
            sum(weights.get(t, 0.0) for t in said | in_heading),
            sum(weights.get(t, 0.0) for t in in_heading),  # the section about it
        )
        if best is None or score > best[0]:
            missing = parsed.shown.get(next(iter(lacking)), "") if lacking else ""
            best = (score, _quoted(sentence), at + max(block.find(sentence), 0), missing)
    return (best[1], best[2], best[3]) if best else None


def _saying(
    block: str,
    words: set[str],
    must: set[str],
    weights: dict[str, float],
    free: bool = False,
    past: str = "",
    always: bool = False,
) -> str | None:
    """The sentence of `block` saying most of `words` (the rarest weigh most) without
    denying them (nor, for a question of what was done, planning or advising them; nor,
    `always` asked, without saying it happens at any hour, or saying "only between");
    None when every sentence holding its rarest word that must be said (of all, when none
    must) does."""
    key = max(sorted(must or words), key=lambda t: weights.get(t, 0.0))
    sentences = []
    limited = always and any(  # "… at any hour. This rule is suspended from 1 January."
        RESTRICTED.search(s) and key in tokenize(s) for s in SENTENCE_END.split(block)
    )
    for sentence in SENTENCE_END.split(block):
        terms = set(tokenize(sentence))
        if always and (limited or not ALWAYS_SAID.search(sentence)):
            continue
        if key in terms and not sentence.rstrip().endswith("?"):
            said = terms & words
            sentences.append((sum(weights.get(t, 0.0) for t in said), said, sentence))
    # The fullest sentence, or one saying as much when it denies ("There was no fog in May.
    # Fog covered the islands on 9 days."); never a lesser one ("No settings were removed.
    # The settings file is new.").
    fullest = max((len(said) for _score, said, _sentence in sentences), default=0)
    for _score, said, sentence in sorted(sentences, key=lambda s: -s[0]):
        if len(said) == fullest and not any(_denies(sentence, t, free, past) for t in said):
            return sentence
    return None


def _denies(sentence: str, word: str, free: bool = False, past: str = "") -> bool:
    """Whether `sentence` says no to `word` (a search term) wherever it has it: "No settings
    were removed", "Fog: none", "fog-free" do; "is removed: it did not work", "Fog did not
    stop us; fog lay on 6 days" and "for no longer than two hours" do not (nor "allergen-free"
    when the question asks for it: `free`). Asked what was done (`past`: the question's
    verb), a clause that plans or advises it does not say it either ("A landing should be
    attempted", "`x` will be removed"), unless it also says it was ("We landed, and will
    land again")."""
    plain = NOT_A_DENIAL.sub(" ", re.sub(r"\([^)]*\)", " ", sentence))  # an aside is no clause
    clauses = CLAUSE_END.split(plain)
    holding = [i for i, clause in enumerate(clauses) if word in tokenize(clause)]

    def denied(i: int) -> bool:
        clause = clauses[i]
        after = clauses[i + 1] if i + 1 < len(clauses) else ""
        without = not free and re.search(rf"\b{re.escape(word)}\w*-free\b", clause, re.I)
        planned = past and PROSPECTIVE.search(clause) and not _says_done(clause, past)
        return bool(NEGATION.search(clause) or BARE_DENIAL.match(after) or without or planned)

    return bool(holding) and all(denied(i) for i in holding)


def _says_done(clause: str, verb: str) -> bool:
    """Whether `clause` has the past verb `verb` ("landed") with no modal just before it
    ("will be removed" does not say it was removed)."""
    words = re.findall(r"[^\W_]+", clause.lower())
    return any(
        word == verb and not MODAL & set(words[max(0, at - 2) : at])
        for at, word in enumerate(words)
    )


def _quoted(sentence: str) -> str:
    flat = " ".join(sentence.replace("**", "").split()).lstrip("-*• ")
    return flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def listing_answer(listed: list[Listed]) -> str:
    """The documents saying all of it by name, each with the sentence that says it; then
    those saying all but one word, each with the word it lacks."""
    full = [item for item in listed if not item.lacking]
    partly = [item for item in listed if item.lacking]
    names = [item.document for item in full]
    head = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    lines = [f"{head}.", ""]
    lines += [f"- **{item.document}**: “{item.sentence}”" for item in full]
    if partly:
        lines += ["", "Close, but without every word of the question:"]
        lines += [
            f"- **{item.document}** (no “{item.lacking}”): “{item.sentence}”" for item in partly
        ]
    return "\n".join(lines)
