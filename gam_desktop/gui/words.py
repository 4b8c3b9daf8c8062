"""Words for people: what the engine says in its own terms, said as a person would.

The engine's trajectory lists tool calls (`cat("README.md") -> # Mem (+8 lines)`), its live
steps name them ("reading README.md") and its progress counts "chunks"; the command line
shows them as they are, the window in words: "Read the memory's overview", "Searched the
text for “bert”", "parts" of a document. Anything not recognised is shown as it came,
its first letter capitalised: a new kind of step is never hidden.
"""

from __future__ import annotations

import json
import re

from gam_desktop.engine.store.markdown import README

_CALL = re.compile(r"^\s*(?:\d+\.\s+)?(\w+)\((.*)\)\s*->\s*(.*)$", re.DOTALL)
_NUMBERED = re.compile(r"^\s*\d+\.\s+")
_CONFIDENCE = re.compile(r"^answer \(confidence ([0-9.]+)\)$")
_LIVE = re.compile(r"^(reading|listing|searching for|searching)\s+(.*)$", re.DOTALL)
_CHUNK = re.compile(r"\b([Cc])hunk(s?)\b")


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


def parts(text: str) -> str:
    """The engine's "chunks" are parts of a document to a person."""
    return _CHUNK.sub(lambda m: ("P" if m.group(1) == "C" else "p") + "art" + m.group(2), text)


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


def readable_diff(patch: str, markdown: bool = True) -> list[tuple[str, str]]:
    """A git patch as the lines a person reads: (ADDED, REMOVED, KEPT or GAP, text), without
    git's headers and, in a Markdown file, without its front matter (a note's title, dates
    and hashes are the app's bookkeeping; its text is what changed)."""
    lines: list[tuple[str, str]] = []
    front = _FrontMatter()
    head = patch.splitlines()[:8]  # git's headers
    moved = [line.removeprefix("rename from ") for line in head if line.startswith("rename from ")]
    for raw in patch.splitlines():
        hunk = _HUNK.match(raw)
        if hunk is not None:
            front.start_hunk(int(hunk.group(1)), int(hunk.group(2)))
            if lines and lines[-1][0] != GAP:
                lines.append((GAP, "…"))
            continue
        if raw.startswith(_HEADERS) or not raw:
            continue
        sign, text = raw[0], raw[1:]
        if sign not in " +-" or (markdown and front.hides(sign, text)):
            continue
        lines.append(({"+": ADDED, "-": REMOVED, " ": KEPT}[sign], text))
    while lines and (lines[0][0] == GAP or not lines[0][1].strip()):
        lines.pop(0)  # (the blank line after the front matter)
    while lines and lines[-1][0] == GAP:
        lines.pop()
    if front.changed:
        what = "text and " if any(kind in (ADDED, REMOVED) for kind, _ in lines) else ""
        lines.insert(0, (NOTE, f"Changed its {what}details: {', '.join(front.changed)}"))
    if moved:  # a move says where from (git's "rename from" header, which is not shown)
        lines.insert(0, (NOTE, f"Moved from {moved[0]}"))
    return lines
