"""The Markdown formats of the memory folder: memory files and READMEs.

A memory file is YAML front matter (title, index, tldr, source, source_hash,
span, pages, tokens, hash) followed by the memory text. A README has a title,
an LLM-written description and a `## Contents` list. Parsing is forgiving: a file
a person broke by hand still yields its body, with the problem reported.

This module is the one place that knows where front matter starts and ends
(`split_front`) and how it is read: `parse_memory` (front, body and what is wrong),
`front_of` and `body_of` (one of the two), and `front_value`, the cheap reading of one
key's line that the corpus does for every file (the YAML of 10,000 files costs seconds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import yaml

from gam_desktop.engine.textutil import plural

README = "README.md"
CONTENTS_HEADING = "## Contents"


@dataclass
class ParsedMemory:
    front: dict[str, Any]
    body: str
    problem: str | None = None


@dataclass
class ReadmeEntry:
    name: str
    is_dir: bool
    summary: str
    count: int | None = None  # memories below a directory


@dataclass
class ParsedReadme:
    title: str
    description: str
    entries: list[str] = field(default_factory=list)


def render_memory(front: dict[str, Any], body: str) -> str:
    """Front matter one key per line, short lists inline (`span: [0, 120]`)."""
    header = yaml.safe_dump(
        front, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )
    if header.startswith("{"):  # PyYAML writes a mapping of scalars only as one flow line
        header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{header}---\n\n{body.strip()}\n"


FENCE = "---"  # the line that opens and closes front matter
_CLOSING = "\n" + FENCE


def split_front(text: str) -> tuple[str, str] | None:
    """The front matter's text (the YAML between the two "---" lines, not parsed) and the
    body after its closing line (as written, not stripped); None when the text has none:
    it does not start with "---", or no later line starts with "---" to close it (then
    the whole text is the body). The closing line is the first after the opening one that
    starts with "---", so a "---" rule in the body is the body's."""
    end = _front_end(text)
    return (text[len(FENCE) : end], text[end + len(_CLOSING) :]) if end >= 0 else None


def _front_end(text: str) -> int:
    """Where the front matter ends (the newline before its closing line), or -1."""
    return text.find(_CLOSING, len(FENCE)) if text.startswith(FENCE) else -1


def body_of(text: str) -> str:
    """A memory file's body, stripped: what follows its front matter, or the whole text
    when it has none (parse_memory's body, without reading the YAML)."""
    split = split_front(text)
    return split[1].strip() if split is not None else text


def front_of(text: str) -> dict[str, Any]:
    """A memory file's front matter as parse_memory reads it ({} when it has none or it
    cannot be read, an alias bomb included), its body not looked at."""
    split = split_front(text)
    return _load_front(split[0])[0] if split is not None else {}


def parse_memory(text: str) -> ParsedMemory:
    """The front matter and body of a memory file. A broken front matter gives its body and,
    as `problem`, what is wrong in words ("line 3 has a ':' where a value was expected"),
    to follow "The front matter of x.md cannot be read: "."""
    split = split_front(text)
    if split is None:
        if text.startswith(FENCE):
            return ParsedMemory({}, text, "it is not closed by a line of three dashes (---)")
        return ParsedMemory({}, text, "the file does not start with a line of three dashes (---)")
    front, problem = _load_front(split[0])
    return ParsedMemory(front, split[1].strip(), problem)


def _load_front(front_text: str) -> tuple[dict[str, Any], str | None]:
    """The front matter's YAML read with the bounded loader, or {} and what is wrong."""
    try:
        front = yaml.load(front_text, Loader=_BoundedLoader) or {}  # a SafeLoader, bounded
    except yaml.YAMLError as exc:
        return {}, yaml_problem(exc)
    except (_TooLarge, RecursionError):
        return {}, _TOO_LARGE
    if not isinstance(front, dict):
        return {}, "it is not a list of 'name: value' lines"
    return front, None


def front_value(text: str, name: str) -> str | None:
    """The value of the front matter's top-level `name:` line as text, read without
    parsing the YAML (what the corpus reads of every file: a title, a source, a span): its
    quotes taken off as YAML does, anything else as written (`[0, 120]` for a span, no
    comment removed, `123` not made a number). None when the file has no front matter (as
    `split_front` says), no such line, or no value. A value YAML reads differently from
    its line (one continued on the next lines, as a title past 100 characters is written;
    a block scalar, an anchor, an alias, a tag, a double-quoted escape) is read with the
    bounded loader, as parse_memory reads it: None when that gives no text (a list, a
    mapping, a front matter that cannot be read, an alias bomb)."""
    end = _front_end(text)  # (searched in place: no copy of the front matter or the body)
    found = _key_line(name).search(text, len(FENCE), end) if end >= 0 else None
    if found is None:
        return None
    value = found.group(1).rstrip(" \t\r")
    continued = _CONTINUED.match(text, found.end(), end) is not None
    if continued or value[:1] in _YAML_READS or (value[:1] == '"' and "\\" in value):
        read = _load_front(text[len(FENCE) : end])[0].get(name)
        return None if read is None or read == "" or isinstance(read, list | dict) else str(read)
    return _unquoted(value) or None


# The first character of a value that YAML reads as something other than the line's text:
# an empty value (a nested block may follow), a block scalar, an anchor, an alias, a tag.
_YAML_READS = ("", "|", ">", "&", "*", "!")
_CONTINUED = re.compile(r"\n(?:[ \t]*\r?\n)*[ \t]+\S")  # the next line with text is indented
_KEY_LINES: dict[str, re.Pattern[str]] = {}


def _key_line(name: str) -> re.Pattern[str]:
    pattern = _KEY_LINES.get(name)
    if pattern is None:  # (a handful of names: title, source, span, times)
        pattern = re.compile(rf"^{re.escape(name)}:[ \t]*(.*)", re.MULTILINE)  # (no lazy .*?: slow)
        _KEY_LINES[name] = pattern
    return pattern


def _unquoted(value: str) -> str:
    """A one-line scalar's text: a single-quoted one's '' is a quote, a double-quoted one
    holds no escape (one that does is read by YAML); a plain one as written."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


# Front matter is untrusted (a memory may arrive as a zip): 1 KB of nested anchors and
# aliases ("billion laughs") stands for gigabytes once anything walks or prints it, and a
# merge key (`<<: *a`) expands while it is built. Its size as written out, every alias
# counted again, is reckoned on the parsed nodes before any value is made (each node once).
MAX_FRONT_NODES = 100_000
_TOO_LARGE = (
    "it is too large or nested too deeply once its aliases (*name) are expanded; "
    "write its values out instead"
)


class _TooLarge(ValueError):
    """Front matter that would expand past MAX_FRONT_NODES."""


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes `root` stands for with every alias written out, each distinct node
    sized once (iteratively: a deep nesting is no RecursionError); raises _TooLarge past
    MAX_FRONT_NODES, and for a node holding an alias of itself (no end to write out)."""
    sizes: dict[int, int] = {}
    opened: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > MAX_FRONT_NODES:
                raise _TooLarge(size)
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue
        if id(node) in opened:  # reached again below itself
            raise _TooLarge("recursive")
        opened.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _BoundedLoader(yaml.SafeLoader):
    """yaml.safe_load's loader, refusing a document whose aliases expand too far."""

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return self.construct_document(node)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML parser error in words, naming the file's line (the front matter starts after
    the opening "---" line, which is line 1). PyYAML's own text ("mapping values are not
    allowed here\n  in "<unicode string>", line 3, column 9") is for programmers."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return "it is not valid YAML"
    line = exc.problem_mark.line + 1  # 0-based within the front matter, after line 1
    opened = exc.context_mark.line + 1 if exc.context_mark is not None else line
    said = f"{exc.context or ''} | {exc.problem or ''}"
    character = "*" if "alias" in said else (exc.problem or "").partition("'")[2][:1] or "?"
    for clue, words in _YAML_WORDS:
        if re.search(clue, said):
            return words.format(line=line, opened=opened, character=character)
    return f"line {line} cannot be read ({exc.problem or 'not valid YAML'})"


# What PyYAML says (its context, then its problem), and the same in words; the first match.
_YAML_WORDS = (
    (
        "mapping values are not allowed",
        "line {line} has a ':' where a value was expected (a value holding ': ' needs "
        "quotes around it)",
    ),
    ("could not find expected ':'", "line {line} has no ':' between a name and its value"),
    ("quoted scalar", "the quote opened on line {opened} is never closed"),
    ("flow sequence", "the list opened with '[' on line {opened} is never closed with ']'"),
    ("flow mapping", "the '{{' opened on line {opened} is never closed with '}}'"),
    (r"'\\t'", "line {line} is indented with a tab; indent with spaces"),  # PyYAML writes \t
    (
        "cannot start any token|undefined alias",
        "line {line} has a name or value starting with '{character}', which needs quotes around it",
    ),
    (
        r"expected (<block|'<document start>').*found '(<scalar>|\]|\})'$",
        "line {line} has more after the end of a value (check its quotes)",
    ),
    (
        r"expected (<block|'<document start>')",
        "line {line} does not line up with the lines above it (check its indentation)",
    ),
)


def render_entries(entries: list[ReadmeEntry]) -> str:
    """The `## Contents` list: what a README shows and the describe prompt is given."""
    lines = []
    for entry in entries:
        if entry.is_dir:
            count = "" if entry.count is None else f" ({plural(entry.count, 'note')})"
            lines.append(f"- **{entry.name}/**{count}: {entry.summary.strip()}")
        else:
            lines.append(f"- **{entry.name}**: {entry.summary.strip()}")
    return "\n".join(lines or ["- (empty)"]) + "\n"


def render_readme(title: str, description: str, entries: list[ReadmeEntry]) -> str:
    return f"# {title.strip()}\n\n{description.strip()}\n\n{CONTENTS_HEADING}\n\n" + (
        render_entries(entries)
    )


def parse_readme(text: str) -> ParsedReadme:
    title, description = readme_heading(text)
    contents = "\n".join(text.strip().splitlines()[1:]).partition(CONTENTS_HEADING)[2]
    entries = [ln[2:].strip() for ln in contents.splitlines() if ln.startswith("- ")]
    return ParsedReadme(title, description, entries)


def readme_heading(text: str) -> tuple[str, str]:
    """A README's title and description, its contents list not read (the tree reads
    those of every folder it shows)."""
    lines = text.strip().splitlines()
    title = lines[0].lstrip("#").strip() if lines else ""
    return title, "\n".join(lines[1:]).partition(CONTENTS_HEADING)[0].strip()


def merge_readme(ours: str, theirs: str) -> str:
    """Our README (its contents list up to date) under the title and description a person
    wrote meanwhile in `theirs`: their words are kept, the listing is ours."""
    mine, edited = parse_readme(ours), parse_readme(theirs)
    contents = ours.partition(CONTENTS_HEADING)[2]
    title = edited.title or mine.title
    description = edited.description or mine.description
    return f"# {title}\n\n{description}\n\n{CONTENTS_HEADING}{contents}"


def humanize(name: str) -> str:
    return name.replace("_", " ").strip().capitalize() if name else "Memory"


def parse_time(value: object) -> datetime | None:
    """A front matter time, or None. YAML may already have made it a datetime or a date; a
    person may write one without a zone (read as UTC), so every time compares with every
    other."""
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value).strip())
        except ValueError:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def parse_count(value: object) -> int:
    """A front matter count; 0 for anything that is not one."""
    try:
        return max(0, int(str(value)))
    except ValueError:
        return 0
