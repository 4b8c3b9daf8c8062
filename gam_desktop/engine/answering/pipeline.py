"""One answering pipeline: each answerer (`ANSWERERS`, in order) may draft an answer from
the evidence; every draft goes through the checks (`checks.CHECKS`); the first draft that
holds is the answer, and with none the memory does not say. Every passage shown to the
model is a file read, listed in the trajectory; an answer cites only passages it quotes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Protocol

from gam_desktop.engine.answering import recall
from gam_desktop.engine.answering.checks import (
    CHECKS,
    Check,
    Draft,
    Support,
    closest_sentences,
    numbers,
    words,
)
from gam_desktop.engine.answering.lexicon import NOT_CLEARLY, NOT_IN_MEMORY
from gam_desktop.engine.answering.mentioned import FirstMention
from gam_desktop.engine.answering.passages import PASSAGES, Passage, retrieve, unknown_names
from gam_desktop.engine.answering.reading import Reading, read
from gam_desktop.engine.answering.recall import is_fact
from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.llm import LLM
from gam_desktop.engine.models import ChatResult, Citation
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.markdown import parse_memory
from gam_desktop.engine.textutil import plural

FOLLOW_UP = re.compile(r"\b(it|its|they|them|their|that|this|these|those|he|she|his|her)\b", re.I)
CHECKED = 0.8  # confidence of an answer whose quotes and words hold
FROM_QUOTE = 0.25  # no checked answer: the closest sentence is shown, as not found
NOT_FOUND = 0.1


@dataclass(frozen=True)
class Step:
    """One step of answering as it happens ("read 5 passages: …"), for a live display."""

    number: int
    summary: str

    def describe(self) -> str:
        return self.summary


StepCallback = Callable[[Step], None]


@dataclass
class Evidence:
    """What an answerer works from, and what it has done so far (for the trajectory)."""

    question: str
    tools: MemoryTools
    llm: LLM
    cancel: CancelToken
    context: list[dict[str, str]] = field(default_factory=list)  # the conversation so far
    passages: list[Passage] = field(default_factory=list)  # every passage shown, numbered
    explored: list[str] = field(default_factory=list)  # folders listed (exploring)
    earlier: str = ""  # the conversation's last question, for a follow-up's search
    rejected: str = ""  # the last draft's answer, which the checks found no passage states
    steps: list[str] = field(default_factory=list)
    on_step: Callable[[str], None] = lambda _line: None
    _retrieved: dict[int, list[Passage]] = field(default_factory=dict, repr=False)

    @property
    def searched(self) -> str:
        """What to search for: the question, and the one before it when this one refers
        back to it with a pronoun ("and when was it released?")."""
        if self.earlier and FOLLOW_UP.search(self.question):
            return f"{self.question} {self.earlier}"
        return self.question

    def best_passages(self, limit: int = PASSAGES) -> list[Passage]:
        """The `limit` best passages for what is searched, retrieved once: an answerer
        that drafts nothing from them leaves them to the next."""
        if limit not in self._retrieved:
            self._retrieved[limit] = retrieve(self.tools, self.searched, limit)
        return self._retrieved[limit]

    @cached_property
    def unknown(self) -> frozenset[str]:
        """The names the question gives that no file of the memory writes."""
        return frozenset(unknown_names(self.tools, self.question))

    @cached_property
    def own_name(self) -> frozenset[str]:
        """The words of the person's own name, from their identity fact."""
        return own_name(self.tools)

    def step(self, line: str) -> None:
        self.steps.append(line)
        self.on_step(line)

    def show(self, passages: list[Passage]) -> None:
        self.passages = passages
        files = ", ".join(dict.fromkeys(p.memory for p in passages))
        self.step(f"read {plural(len(passages), 'passage')}: {files}" if passages else "")


class Answerer(Protocol):
    name: str

    def try_answer(self, evidence: Evidence) -> Draft | None: ...


class Grounded:
    """The question's best passages, read in one call that names the passages it answers
    from."""

    name = "grounded"

    def __init__(self, limit: int = PASSAGES) -> None:
        self.limit = limit

    def try_answer(self, evidence: Evidence) -> Draft | None:
        passages = evidence.best_passages(self.limit)
        if not passages:
            return None
        evidence.show(passages)
        reading = read(evidence.llm, evidence.question, passages, evidence.cancel, evidence.context)
        return _draft(evidence, reading)


class Reread:
    """When the checks found the first reading's answer stated by none of its passages: the
    same passages read again, each by only its sentences holding the most of the question's
    rarer words (`passages.excerpts`). Shown five windows, a small model often answers from
    what it knows or from a sentence beside the point; shown the few sentences about the
    question, it reads them. Its draft is checked against the whole passages, as the first
    was. Not after the model said no passage states it: a second look would only find it
    something to say. Nor is a second answer taken that says what the first said with
    another value ("… is 255." then "… is 4096."): the claim was made up, and the value
    the excerpts gave was put into it, not read (on two recorded dev runs, all six such
    answers were wrong, three of them to questions the documents do not answer)."""

    name = "reread"

    def try_answer(self, evidence: Evidence) -> Draft | None:
        if not (evidence.rejected and evidence.passages):
            return None
        evidence.step("read again: the sentences most about the question")
        reading = read(
            evidence.llm,
            evidence.question,
            evidence.passages,
            evidence.cancel,
            evidence.context,
            excerpt=True,
        )
        draft = _draft(evidence, reading)
        if draft is not None and _another_value(evidence.rejected, draft.answer):
            evidence.step("read again: the same answer with another value")
            return None
        return draft


def _another_value(first: str, second: str) -> bool:
    """Whether `second` says what `first` said with other numbers: the same words but for
    its numbers, or the same words (three or more) up to its first number, the value and
    what it counts after that ("… is 255 characters." then "… is 4096 bytes.")."""
    if numbers(second) == numbers(first):
        return False
    (opening, wording), (opening2, wording2) = _wording(first), _wording(second)
    return wording == wording2 or (len(opening) >= 3 and opening == opening2)


def _wording(text: str) -> tuple[list[str], list[str]]:
    """The words of `text` up to its first number, and all its words but numbers."""
    said = words(text)
    first = next((i for i, w in enumerate(said) if any(c.isdigit() for c in w)), len(said))
    return said[:first], [w for w in said if not any(c.isdigit() for c in w)]


def _draft(evidence: Evidence, reading: Reading | None) -> Draft | None:
    """The draft of one reading of `evidence.passages`."""
    if reading is None:
        evidence.step("the model gave no usable reply")
        return None
    passages = evidence.passages
    answer = reading.answer if reading.found else ""
    cited = tuple(n for n in reading.passages if 1 <= n <= len(passages))
    return Draft(
        evidence.question,
        answer,
        [],
        passages,
        cited=cited,
        unknown=evidence.unknown,
        own_name=evidence.own_name,
    )


def own_name(tools: MemoryTools) -> frozenset[str]:
    """The words of the person's own name, from their identity fact."""
    files = tools.corpus.snapshot()
    return recall.own_name((key, f.text) for key, f in files.items() if recall.is_fact(key))


# A second reading of the next five passages changed no answer on the dev halves of five
# corpora (ablate_checks.py, "first reading only") and cost a call per question the first
# one did not settle; the same passages' excerpts, read again only when the checks rejected
# the first answer, do (ARCHITECTURE.md).
# FirstMention answers "when did I first mention X?" from the dates, with no call.
ANSWERERS: tuple[Answerer, ...] = (FirstMention(), Grounded(), Reread())


def answer(
    evidence: Evidence,
    answerers: Sequence[Answerer] = ANSWERERS,
    checks: Sequence[Check] = CHECKS,
) -> ChatResult:
    """The first checked draft of `answerers`, as a ChatResult; "the memory does not say"
    when none holds."""
    read_files: list[str] = []
    for answerer in answerers:
        evidence.cancel.raise_if_cancelled()
        draft = answerer.try_answer(evidence)
        read_files += [p.memory for p in evidence.passages if p.memory not in read_files]
        if draft is None:
            continue
        held = _checked(draft, checks, evidence)
        if held is not None:
            return _result(evidence, held, read_files)
        evidence.rejected = draft.answer.strip()
    evidence.step("no passage states the answer")
    closest = [] if evidence.unknown else closest_sentences(evidence.question, evidence.passages)
    if closest:  # what the person may read for themself, as not found
        shown = Draft(evidence.question, "", [], evidence.passages, closest, from_quote=True)
        return _result(evidence, shown, read_files)
    return _finish(evidence, NOT_IN_MEMORY, NOT_FOUND, [], read_files, "not found")


def _checked(draft: Draft, checks: Sequence[Check], evidence: Evidence) -> Draft | None:
    return check_draft(draft, checks, evidence.step)


def check_draft(
    draft: Draft, checks: Sequence[Check], note: Callable[[str], None] = lambda _line: None
) -> Draft | None:
    """`draft` through `checks` in order: repaired where a check repairs it, None when one
    rejects it. Without a check that finds the quotes in the passages, they stand as given."""
    for check in checks:
        finding = check.check(draft)
        if finding is None:
            continue
        if finding.why:
            note(f"{check.name}: {finding.why}")
        if finding.repaired is None:
            return None
        draft = finding.repaired
    if not draft.support:
        by_number = {p.number: p for p in draft.passages}
        quoted = [Support(by_number[n], t) for n, t in draft.quotes if n in by_number]
        draft = replace(draft, support=quoted)
    return draft


def _result(evidence: Evidence, draft: Draft, read_files: list[str]) -> ChatResult:
    # a sentence the answer copies word for word is not quoted under it again; each quote
    # on one line and a paragraph of its own (Markdown joins adjacent "> " lines into one)
    said = words(draft.answer)
    quoted = "\n\n".join(
        f"> {' '.join(s.sentence.split())} ({s.passage.document or s.passage.memory})"
        for s in draft.support
        if draft.from_quote or words(s.sentence) != said
    )
    if draft.from_quote:  # the model's answer was not what its sentences say
        text = f"{NOT_CLEARLY}\n\n{quoted}"
        confidence, note = FROM_QUOTE, "not found; the closest sentence shown"
    else:
        shown = f"{draft.answer.strip()}\n\n{quoted}" if quoted else draft.answer.strip()
        text, confidence, note = shown, CHECKED, "quotes checked"
    sources = _with_conversations(evidence.tools, [s.passage.memory for s in draft.support])
    if draft.from_quote:
        evidence.step(f"showed the closest {plural(len(draft.support), 'sentence')}")
    else:
        evidence.step(f"answered from {plural(len(draft.support), 'quoted sentence')}")
    return _finish(evidence, text, confidence, sources, read_files, note)


def _finish(
    evidence: Evidence,
    text: str,
    confidence: float,
    sources: list[str],
    read_files: list[str],
    note: str,
) -> ChatResult:
    lines = [f"{n}. {line}" for n, line in enumerate(filter(None, evidence.steps), 1)]
    return ChatResult(
        question=evidence.question,
        answer=text,
        sources=sources,
        citations=[_citation(evidence.tools, s) for s in sources],
        confidence=confidence,
        files_read=read_files,
        dirs_explored=list(evidence.explored),
        trajectory="\n".join(lines),
        notes=note,
    )


def _with_conversations(tools: MemoryTools, sources: list[str]) -> list[str]:
    """`sources`, each fact followed by the conversation the person stated it in."""
    out: list[str] = []
    for source in dict.fromkeys(sources):
        out.append(source)
        if is_fact(source) and (said := _conversation_of(tools, source)) is not None:
            out.append(said)
    return list(dict.fromkeys(out))


def _conversation_of(tools: MemoryTools, fact: str) -> str | None:
    own = tools.corpus.snapshot().get(fact)
    said = parse_memory(own.text).front.get("source_conversation") if own is not None else None
    if not said:
        return None
    listed = list_conversations(tools.sandbox.root)
    return next((info.path for info in listed if info.id == str(said)), None)


def _citation(tools: MemoryTools, path: str) -> Citation:
    own = tools.corpus.snapshot().get(path)
    front = parse_memory(own.text).front if own is not None else {}
    if is_fact(path):  # a fact's source is the conversation it was stated in
        front = {"source": _conversation_of(tools, path)}
    return Citation.from_front(path, front)
