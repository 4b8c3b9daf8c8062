"""A document's paragraphs with the heading each sits under: what a sentence of it is
about when the sentence does not say ("## Rotation" over "Each engineer is on call for 10
days")."""

from __future__ import annotations

import re

UNDERLINE = re.compile(r"^[-=]{3,}$")


def blocks(text: str) -> list[tuple[str, str, int]]:
    """The paragraphs of a document with the heading they sit under, and where each starts.
    A heading is a line opened by #, or a line underlined with - or = ("4. COOLING")."""
    found: list[tuple[str, str, int]] = []
    heading, start, offset = "", 0, 0
    lines: list[str] = []
    rows = text.splitlines(keepends=True)

    def close() -> None:
        if lines and "".join(lines).strip():
            found.append((heading, "".join(lines).strip(), start))
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
    return found


TABLE_ROW = re.compile(r"\n(?=\s*\|)")  # a table: each row a statement of its own
TABLE_RULE = re.compile(r"^\|?[\s:|-]+$")  # "|---|---|"
LIST_ITEM = re.compile(r"\n(?=\s*(?:[-*•+]|\d+[.)])\s)")
# The same breaks in a passage flattened to one line ("## Limits - Maximum size: 50 GB. -
# Devices: 5. ## Defaults - Backup interval: every 30 minutes."): before a heading's #, and
# before a list's dash where a sentence or a heading ended ("Backup interval - 30 minutes"
# is one item).
FLAT_BREAK = re.compile(r"(?<!\s)\s+(?=#{1,6}\s)|(?<=[.!?:;)*`])\s+(?=[-*•+]\s)")
FLAT_HEADING = re.compile(r"^#{1,6}\s+")
HEADING_END = re.compile(r"\s+[-*•+]\s+")


def statements(text: str) -> list[tuple[str, str]]:
    """The paragraphs of `text`, each list item on its own, with the heading each sits
    under: "Limits" over "- Maximum size of a single file: 50 GB". A passage flattened to
    one line is split the same way at its headings and dashes."""
    if "\n" not in text.strip():
        return _flat_statements(text.strip())
    return [
        (heading, item.strip())
        for heading, block, _at in blocks(text)
        for item in (TABLE_ROW.split(block) if block.startswith("|") else LIST_ITEM.split(block))
        if item.strip() and not TABLE_RULE.match(item.strip())
    ]


def _flat_statements(line: str) -> list[tuple[str, str]]:
    found = []
    heading = ""
    for piece in map(str.strip, FLAT_BREAK.split(line)):
        if FLAT_HEADING.match(piece):
            text = FLAT_HEADING.sub("", piece)
            parts = HEADING_END.split(text, maxsplit=1)
            if len(parts) == 2:  # "## Limits - Maximum size …": the heading, its first item
                heading, piece = parts
            elif len(text.split()) <= 4:  # "## Defaults" before the next heading
                heading, piece = text, ""
            else:  # "## Escalation The primary …": run into its text, where it ends is unknown
                heading, piece = "", text
        if piece:
            found.append((heading, piece))
    return found
