"""A saved conversation: one Markdown file a person can read, that the app reads back.

    ---
    id: 20261122-204400-1f3a9c
    title: How long is the warranty on the Model X?
    started: '2026-11-22T20:44:00+00:00'
    updated: '2026-11-22T20:50:12+00:00'
    model: qwen2.5-coder-1.5b-instruct
    turns: 2
    summarized: 0            # the first N turns are folded into `summary`
    summary: ''
    ---

    # How long is the warranty on the Model X?

    ## Turn 1 · 2026-11-22 20:44 UTC
    <!-- turn {"time": "...", "sources": [...], "confidence": 0.6} -->

    > How long is the warranty on the Model X?

    After 45 minutes.

    *Sources: `policies/borealis.md` · confidence 0.60*

The front matter is small and read alone when listing; the turns are split on their
`<!-- turn … -->` line, so a 1,000-turn file parses in milliseconds. A turn that shows a
research report keeps the report's structured form in that line too (`report`): read back,
the window shows the report again with its "Save to memory" link. Questions and
answers are untrusted text: a line of theirs that looks like a turn marker or a turn
heading is escaped when written, so it can never forge a turn.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from gam_desktop.engine.models import Citation, utc_now
from gam_desktop.engine.store.folder import CONVERSATIONS_DIR
from gam_desktop.engine.store.markdown import (
    ParsedMemory,
    parse_count,
    parse_memory,
    parse_time,
    split_front,
)
from gam_desktop.engine.store.naming import sanitize_name

TITLE_CHARS = 80
MARKER = re.compile(r"^<!-- turn (\{.*\}) -->$", re.MULTILINE)
_FORGED = re.compile(r"^(<!-- turn |## Turn )", re.MULTILINE)  # escaped in a turn's text
_SOURCES_LINE = re.compile(r"\n+\*Sources: .*\*\s*$")


@dataclass
class Turn:
    time: datetime
    question: str
    answer: str
    sources: list[str] = field(default_factory=list)
    confidence: float | None = None
    # set when the turn came through gam-serve's queue: a queued turn replayed after a
    # crash is never saved twice (the replay looks for its id among the saved turns)
    id: str | None = None
    # set by gam-serve: the key of the conversation as its client will resend it (this
    # turn included), so a restarted gam-serve still knows which conversation it continues
    history_key: str | None = None
    # how the answer was found and where its sources' wording is (document, pages): the
    # window shows them again when the conversation is reopened
    steps: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    statement: bool = False  # the person told something, asked nothing: nothing was looked up
    # the structured form of the research report the answer shows (opaque here: the front
    # end makes it and reads it back), so the report can still be saved after a restart
    report: dict[str, Any] | None = None


@dataclass
class ConversationRecord:
    id: str
    title: str
    started: datetime
    updated: datetime
    model: str = ""
    turns: list[Turn] = field(default_factory=list)
    summary: str = ""  # the running summary of the first `summarized` turns
    summarized: int = 0

    @property
    def path(self) -> str:
        """conversations/<yyyy-mm>/<yyyy-mm-dd>-<slug>-<id tail>.md: by month, then date."""
        day = self.started.strftime("%Y-%m-%d")
        slug = sanitize_name(self.title, fallback="conversation", max_chars=40)
        return f"{CONVERSATIONS_DIR}/{self.started:%Y-%m}/{day}-{slug}-{self.id[-6:]}.md"


def new_record(
    first_question: str, model: str = "", now: datetime | None = None
) -> ConversationRecord:
    now = now or utc_now()
    title = title_from(first_question)
    conversation_id = f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    return ConversationRecord(conversation_id, title, now, now, model)


def title_from(question: str) -> str:
    """The first question, on one line and cut at a word: what the list shows."""
    line = " ".join(question.split())
    if len(line) <= TITLE_CHARS:
        return line or "Conversation"
    return line[:TITLE_CHARS].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def render(record: ConversationRecord) -> str:
    front: dict[str, Any] = {
        "id": record.id,
        "title": record.title,
        "started": record.started.isoformat(),
        "updated": record.updated.isoformat(),
        "model": record.model,
        "turns": len(record.turns),
        "summarized": record.summarized,
        "summary": record.summary,
    }
    parts = [f"# {_one_line(_escaped(record.title))}"]
    for number, turn in enumerate(record.turns, 1):
        parts.append(_render_turn(number, turn))
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{header}---\n\n" + "\n\n".join(parts) + "\n"


def _render_turn(number: int, turn: Turn) -> str:
    meta: dict[str, Any] = {
        "time": turn.time.isoformat(),
        "sources": turn.sources,
        "confidence": turn.confidence,
    }
    if turn.id:
        meta["id"] = turn.id
    if turn.history_key:
        meta["history"] = turn.history_key
    if turn.steps:
        meta["steps"] = turn.steps
    if turn.citations:
        meta["citations"] = [c.model_dump(exclude_none=True) for c in turn.citations]
    if turn.statement:
        meta["statement"] = True
    if turn.report:
        meta["report"] = turn.report
    question = "\n".join(f"> {line}".rstrip() for line in _escaped(turn.question).splitlines())
    # a step quoting "-->" must not end the comment: its ">" as JSON's \u003e
    data = json.dumps(meta, ensure_ascii=False).replace("-->", "--\\u003e")
    lines = [
        f"## Turn {number} · {turn.time:%Y-%m-%d %H:%M} UTC",
        f"<!-- turn {data} -->",
        "",
        question or ">",
        "",
        _escaped(turn.answer).strip() or "(no answer)",
    ]
    if turn.sources or turn.confidence is not None:
        cited = ", ".join(f"`{s}`" for s in turn.sources) or "none"
        score = f" · confidence {turn.confidence:.2f}" if turn.confidence is not None else ""
        lines += ["", f"*Sources: {cited}{score}*"]
    return "\n".join(lines)


def parse(text: str) -> ConversationRecord:
    """The record a conversation file holds; a file edited by hand still gives what it
    can (ValueError only when it is not a conversation at all)."""
    parsed = parse_memory(text)
    front = parsed.front
    if not front.get("id"):
        why = f"its front matter cannot be read: {parsed.problem}" if parsed.problem else ""
        raise ValueError(f"not a conversation: {why or 'its front matter has no id'}")
    turns = []
    pieces = MARKER.split(parsed.body)  # [before, meta1, text1, meta2, text2, ...]
    for raw_meta, raw_text in zip(pieces[1::2], pieces[2::2], strict=True):
        turns.append(_parse_turn(raw_meta, raw_text))
    started = parse_time(front.get("started")) or utc_now()
    return ConversationRecord(
        id=str(front["id"]),
        title=str(front.get("title") or "Conversation"),
        started=started,
        updated=parse_time(front.get("updated")) or started,
        model=str(front.get("model") or ""),
        turns=turns,
        summary=str(front.get("summary") or ""),
        summarized=min(parse_count(front.get("summarized")), len(turns)),
    )


def user_words(text: str) -> str:
    """What the person said in a conversation file, each turn dated: the part of a
    conversation that answering and research may read as evidence ("what did I say on …").
    The memory's own answers are left out (they restate other notes, and a wrong one would
    be cited as its own proof), and so are the turns' metadata. "" for a file that is no
    conversation."""
    try:
        record = parse(text)
    except ValueError:
        return ""
    return "\n\n".join(
        f"On {turn.time:%Y-%m-%d} at {turn.time:%H:%M} UTC the user said: {turn.question}"
        for turn in record.turns
    )


def parse_front(text: str) -> dict[str, Any]:
    """Only the front matter (listing 1,000 conversations reads no turns)."""
    return read_front(text).front


def read_front(text: str) -> ParsedMemory:
    """The front matter alone, with what is wrong with it in words when it cannot be read
    (`problem`: "line 3 has a ':' where a value was expected …")."""
    split = split_front(text)  # the body is not read: a 1,000-turn file lists fast
    return parse_memory(f"---{split[0]}\n---\n" if split is not None else text)


def _parse_turn(raw_meta: str, raw_text: str) -> Turn:
    try:
        meta = json.loads(raw_meta)
    except json.JSONDecodeError:
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    body = _SOURCES_LINE.sub("", raw_text.split("\n## Turn ", 1)[0]).strip("\n")
    quoted, rest = _split_question(body.splitlines())
    question = "\n".join(line[2:] if line.startswith("> ") else line[1:] for line in quoted)
    answer = "\n".join(rest).strip()
    sources = meta.get("sources")
    confidence = meta.get("confidence")
    turn_id = meta.get("id")
    key = meta.get("history")
    steps = meta.get("steps")
    report = meta.get("report")
    return Turn(
        time=parse_time(meta.get("time")) or utc_now(),
        question=_unescaped(question.strip()),
        answer=_unescaped(answer),
        sources=[str(s) for s in sources] if isinstance(sources, list) else [],
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
        id=turn_id if isinstance(turn_id, str) and turn_id else None,
        history_key=key if isinstance(key, str) and key else None,
        steps=[str(s) for s in steps] if isinstance(steps, list) else [],
        citations=_citations(meta.get("citations")),
        statement=meta.get("statement") is True,
        report=report if isinstance(report, dict) and report else None,
    )


def _citations(raw: object) -> list[Citation]:
    """The citations a turn's marker holds; one edited into nonsense is left out."""
    if not isinstance(raw, list):
        return []
    kept = []
    for item in raw:
        try:
            kept.append(Citation.model_validate(item))
        except ValueError:
            continue
    return kept


def _split_question(lines: list[str]) -> tuple[list[str], list[str]]:
    """The quoted question at the top of a turn, and the answer after it."""
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    end = start
    while end < len(lines) and lines[end].startswith(">"):
        end += 1
    return lines[start:end], lines[end:]


def _escaped(text: str) -> str:
    """Untrusted text made safe inside a turn: one kind of line break (a lone \\r reads as
    a new line too), no control characters, no line that looks like a turn's start."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join(c if c in "\n\t" or c.isprintable() else " " for c in text)
    return _FORGED.sub(lambda m: "\\" + m.group(1), text)


def _unescaped(text: str) -> str:
    return re.sub(r"^\\(<!-- turn |## Turn )", r"\1", text, flags=re.MULTILINE)


def _one_line(text: str) -> str:
    return " ".join(text.split())
