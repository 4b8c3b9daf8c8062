"""Words for people: what the engine says in its own terms, said as a person would.

The engine's trajectory lists tool calls (`cat("README.md") -> # Mem (+8 lines)`), its live
steps name them ("reading README.md") and its progress counts "chunks"; the command line
shows them as they are, the window in words: "Read the memory's overview", "Searched the
text for “bert”", "passages" of a document, "notes" (the engine's "memories" counted in its
summaries). Anything not recognised is shown as it came, its first letter capitalised: a
new kind of step is never hidden.
"""

from __future__ import annotations

import html
import json
import re

from gam_desktop.engine.api import (
    README,
    Estimate,
    duration,
    money,
    parse_memory,
    plural,
    split_front,
)

_CALL = re.compile(r"^\s*(?:\d+\.\s+)?(\w+)\((.*)\)\s*->\s*(.*)$", re.DOTALL)
_NUMBERED = re.compile(r"^\s*\d+\.\s+")
_CONFIDENCE = re.compile(r"^answer \(confidence ([0-9.]+)\)$")
_LIVE = re.compile(r"^(reading|listing|searching for|searching)\s+(.*)$", re.DOTALL)
_CHUNK = re.compile(r"\b([Cc])hunk(s?)\b")
_MEMORIES = re.compile(r"\b(\d[\d,]*) memor(y|ies)\b")  # a count of notes, not the memory


def place(path: str) -> str:
    """A file the agent read: an overview by its folder, anything else by its path."""
    path = path.strip().strip("/")
    if path in ("", README):
        return "the memory's overview"
    if path.endswith(f"/{README}"):
        return f"the overview of {path.removesuffix(README)}"
    return f"“{path}”"


def folder(path: str) -> str:
    path = path.strip().strip("/")
    return "the memory's top folder" if path in ("", ".") else f"{path}/"


def _arguments(text: str) -> list[object]:
    """A call's arguments as the trajectory writes them (JSON values, comma-separated)."""
    try:
        values = json.loads(f"[{text}]")
    except ValueError:
        return [text]
    return values if isinstance(values, list) else [text]


def _call(name: str, arguments: list[object]) -> str:
    first = str(arguments[0]) if arguments else ""
    if name == "cat":
        original = len(arguments) > 1 and arguments[1] is True
        return f"Read the original text of {place(first)}" if original else f"Read {place(first)}"
    if name == "ls":
        return f"Looked at what {folder(first)} holds"
    if name == "grep":
        where = folder(str(arguments[1])) if len(arguments) > 1 else "the memory"
        return f"Searched {where} for “{first}”"
    if name == "bm25_search":
        return f"Searched the text for “{first}”"
    return f"Used {name}({', '.join(map(str, arguments))})"


def sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:]


def step(line: str) -> str:
    """One line of an answer's trajectory, in words ("1. cat("a/README.md") -> …" is "Read
    the overview of a/"; a call that failed says so)."""
    call = _CALL.match(line)
    if call is not None:
        name, arguments, result = call.groups()
        said = _call(name, _arguments(arguments))
        return said + (" (it failed)" if result.strip().startswith("error") else "")
    confidence = _CONFIDENCE.match(line.strip())
    if confidence is not None:
        return f"Answered, confidence {round(float(confidence.group(1)) * 100)}%"
    return sentence(_NUMBERED.sub("", line))


def steps(trajectory: str) -> list[str]:
    return [step(line) for line in trajectory.splitlines() if line.strip()]


def live_step(text: str) -> str:
    """A step as it happens ("reading README.md" is "Reading the memory's overview")."""
    found = _LIVE.match(text.strip())
    if found is None:
        return sentence(text)
    verb, what = found.groups()
    if verb == "reading":
        return f"Reading {place(what)}"
    if verb == "listing":
        return f"Looking at what {folder(what)} holds"
    if verb == "searching for":
        return f"Searching for “{what}”"
    return f"Searching the text for “{what}”"


def passages(text: str) -> str:
    """The engine's "chunks" are passages of a document to a person (each one becomes a
    note); the window never says "chunks" or "parts"."""
    return _CHUNK.sub(lambda m: ("P" if m.group(1) == "C" else "p") + "assage" + m.group(2), text)


def counted_notes(text: str) -> str:
    """Summaries and READMEs written before the engine counted notes too count "memories"
    ("Added 9 documents (34 memories)"): the window calls the Markdown files notes, and
    the folder the memory."""
    return _MEMORIES.sub(lambda m: f"{m.group(1)} note{'s' if m.group(2) == 'ies' else ''}", text)


# -- a change as a person reads it -------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_HEADERS = (
    "diff ",
    "index ",
    "--- ",
    "+++ ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "similarity ",
    "rename ",
    "Binary files",
    "\\ No newline",
)
ADDED, REMOVED, KEPT, GAP, NOTE = "added", "removed", "kept", "gap", "note"
_KEY = re.compile(r"^([A-Za-z_][\w-]*):")


class _FrontMatter:
    """Which side of a patch is inside a Markdown file's front matter (between the "---"
    that opens the file and the next one)."""

    def __init__(self) -> None:
        self.old = self.new = False
        self.old_seen = self.new_seen = 0  # "---" lines met on each side
        self.changed: list[str] = []  # the fields a hidden + or - line set

    def start_hunk(self, old_line: int, new_line: int) -> None:
        self.old, self.new = old_line == 1, new_line == 1  # may open with its front matter
        self.old_seen = self.new_seen = 0

    def hides(self, sign: str, text: str) -> bool:
        """Whether the line (" ", "-" or "+") is front matter; follows the "---" lines."""
        hidden = False
        if sign in " -":
            hidden |= self._side("old", text)
        if sign in " +":
            hidden |= self._side("new", text)
        key = _KEY.match(text)
        if hidden and sign != " " and key is not None and key.group(1) not in self.changed:
            self.changed.append(key.group(1))
        return hidden

    def _side(self, side: str, text: str) -> bool:
        inside, seen = getattr(self, side), getattr(self, f"{side}_seen")
        if not inside:
            return False
        fence = text.rstrip() == "---"
        if seen == 0 and not fence:  # the file does not open with front matter
            setattr(self, side, False)
            return False
        if fence:
            setattr(self, f"{side}_seen", seen + 1)
            if seen + 1 == 2:
                setattr(self, side, False)  # its end: hidden too
        return True


def readable_diff(
    patch: str, markdown: bool = True, before: str | None = None, after: str | None = None
) -> list[tuple[str, str]]:
    """A git patch as the lines a person reads: (ADDED, REMOVED, KEPT, GAP or NOTE, text),
    without git's headers and, in a Markdown file, without its front matter (a note's title,
    dates and hashes are not its text). Given the file's text `before` and `after` the
    operation, the front matter is known line by line (a hunk may start inside it) and what
    changed in it is said in words first ("Title changed from “A” to “B”")."""
    known = markdown and (before is not None or after is not None)
    front: _FrontLines | _FrontMatter | None = (
        _FrontLines(before, after) if known else _FrontMatter() if markdown else None
    )
    lines = _patch_lines(patch, front)
    if known:
        said = front_changes(_front(before), _front(after)) if before and after else []
        lines[:0] = [(NOTE, line) for line in said]
    elif isinstance(front, _FrontMatter) and front.changed:
        what = "text and " if any(kind in (ADDED, REMOVED) for kind, _ in lines) else ""
        lines.insert(0, (NOTE, f"Changed its {what}details: {', '.join(front.changed)}"))
    head = patch.splitlines()[:8]  # git's headers
    moved = [line.removeprefix("rename from ") for line in head if line.startswith("rename from ")]
    if moved:  # a move says where from (git's "rename from" header, which is not shown)
        lines.insert(0, (NOTE, f"Moved from {moved[0]}"))
    return lines


def _patch_lines(patch: str, front: _FrontLines | _FrontMatter | None) -> list[tuple[str, str]]:
    """The patch's lines added, removed and kept, a GAP between hunks; the lines `front`
    says are front matter left out."""
    lines: list[tuple[str, str]] = []
    for raw in patch.splitlines():
        hunk = _HUNK.match(raw)
        if hunk is not None:
            if front is not None:
                front.start_hunk(int(hunk.group(1)), int(hunk.group(2)))
            if lines and lines[-1][0] != GAP:
                lines.append((GAP, "…"))
            continue
        if raw.startswith(_HEADERS) or not raw or raw[0] not in " +-":
            continue
        sign, text = raw[0], raw[1:]
        if front is None or not front.hides(sign, text):
            lines.append(({"+": ADDED, "-": REMOVED, " ": KEPT}[sign], text))
    while lines and (lines[0][0] == GAP or not lines[0][1].strip()):
        lines.pop(0)  # (the blank line after the front matter)
    while lines and lines[-1][0] == GAP:
        lines.pop()
    return lines


class _FrontLines:
    """Which lines of a patch are front matter, by their numbers: the file's text before and
    after says how many lines its front matter has on each side."""

    def __init__(self, before: str | None, after: str | None) -> None:
        self.old_end, self.new_end = _front_length(before), _front_length(after)
        self.old = self.new = 0  # the line numbers the next lines have

    def start_hunk(self, old_line: int, new_line: int) -> None:
        self.old, self.new = old_line, new_line

    def hides(self, sign: str, _text: str = "") -> bool:
        hidden = False
        if sign in " -":
            hidden |= self.old <= self.old_end
            self.old += 1
        if sign in " +":
            hidden |= self.new <= self.new_end
            self.new += 1
        return hidden


def _front_length(text: str | None) -> int:
    """How many lines the front matter of `text` has, its two "---" lines included (0:
    none, or one not closed)."""
    split = split_front(text or "")
    return split[0].count("\n") + 2 if split is not None else 0


def _front(text: str | None) -> dict[str, object]:
    return parse_memory(text).front if text else {}


# A note's front matter in words: what a person knows each field as. The rest of what the
# app keeps there (hashes, ids, positions, dates it sets itself) is its bookkeeping, not said.
_FIELD_WORDS = {
    "title": "Title",
    "tldr": "Summary",
    "source": "Source",
    "pages": "Pages",
    "tokens": "Length of the original",
    "statement": "Fact",  # a fact's
    "subject": "About",
    "question": "Question",  # a saved research report's
    "description": "Description",
}
_BOOKKEEPING = {
    "index", "hash", "source_hash", "span", "created", "updated", "id", "model", "turns",
    "summarized", "summary", "files", "kind", "partial", "said", "valid_from", "replaces",
}  # fmt: skip
FALLBACK_KEY = "fallback"  # a note written without the LLM (engine.ingest.summarize_again)
FALLBACK_REASON_KEY = "fallback_reason"  # ...and why: its call's error (engine.ingest.memorize)
NOT_BY_THE_MODEL = "summary not written by the model (Memory ▸ Summarize again)"
UNKNOWN_REASON = "its LLM calls kept failing when it was added"
_QUOTED = 80  # characters of a value quoted in a change's words


def without_llm_html(reason: str | None) -> str:
    """A note written without the LLM, said in plain words (it showed "fallback: true"):
    that the LLM did not write it, why (`reason`: the error, redacted when it was kept; none
    kept in notes of older versions), and how to fix it, as a link ("summarize:")."""
    why = html.escape(reason.rstrip(". ")) if reason else UNKNOWN_REASON
    return (  # short: a window 800 × 600 has little room above the note
        "<b>Written without the LLM</b>: the passage's own sentences, not a summary. "
        f"<b>Why:</b> {why}. <b>Fix:</b> once the LLM works, "
        '<a href="summarize:">Summarize again</a>.'
    )


def front_changes(old: dict[str, object], new: dict[str, object]) -> list[str]:
    """What changed in a note's front matter, in words: "Title changed from “A” to “B”",
    "Summary now written by the model"; the app's bookkeeping (hashes, dates) unsaid."""
    said = []
    if bool(old.get(FALLBACK_KEY)) != bool(new.get(FALLBACK_KEY)):
        said.append(
            "Summary now written by the model"
            if old.get(FALLBACK_KEY)
            else sentence(NOT_BY_THE_MODEL)
        )
    for key in dict.fromkeys([*old, *new]):
        if key in (FALLBACK_KEY, FALLBACK_REASON_KEY) or key in _BOOKKEEPING:
            continue
        if old.get(key) == new.get(key):
            continue
        name = _FIELD_WORDS.get(key, key.replace("_", " ").capitalize())
        was, now = _value(key, old.get(key)), _value(key, new.get(key))
        if not was:
            said.append(f"{name} set to {now}")
        elif not now:
            said.append(f"{name} removed (it was {was})")
        else:
            said.append(f"{name} changed from {was} to {now}")
    return said


def _value(key: str, value: object) -> str:
    """A field's value as a change quotes it ("" when it has none)."""
    if value is None or value == "" or value == []:
        return ""
    if key == "tokens" and isinstance(value, int):
        return approximate_words(value)
    if isinstance(value, list):
        return "–".join(str(v) for v in value) if key == "pages" else ", ".join(map(str, value))
    text = " ".join(str(value).split())
    text = text if len(text) <= _QUOTED else text[: _QUOTED - 1].rsplit(" ", 1)[0] + "…"
    return f"“{text}”"


def approximate_words(tokens: int, short: bool = False) -> str:
    """A size in tokens as a person reads it: "about 1,200 words" (a token is about three
    quarters of an English word), rounded to what such a guess is worth; `short`: "≈ 1,200
    words" (a column)."""
    words = tokens * 3 / 4
    if words < 1:
        return "less than a word"
    step = 1 if words < 20 else 10 if words < 1000 else 100 if words < 10_000 else 1000
    rounded = max(step, round(words / step) * step)
    return f"{'≈' if short else 'about'} {rounded:,} word{'s' if rounded != 1 else ''}"


def estimate(found: Estimate) -> str:
    """An add's estimate as the window says it: "3 documents, about 12 notes: about 14 LLM
    calls reading about 9,000 words and writing about 2,400, about 2 minutes and …" (the
    engine's summary counts "memories" and "prompt and completion tokens")."""
    size = f"reading {approximate_words(found.prompt_tokens)}"
    if found.completion_tokens:
        size += f" and writing {approximate_words(found.completion_tokens).removesuffix(' words')}"
    parts = [f"about {plural(found.llm_calls, 'LLM call')} {size}"]
    if found.seconds:
        parts.append(duration(found.seconds))
    if found.cost is not None:
        parts.append(f"{money(found.cost, found.currency)} at {found.model}'s price")
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    text = f"{plural(found.documents, 'document')}, about {plural(found.chunks, 'note')}: {listed}"
    if found.steps > 1:
        text += (
            f"; added in {plural(found.steps, 'step')} of {found.step_documents} documents, "
            "each usable as soon as it is done"
        )
    return text
