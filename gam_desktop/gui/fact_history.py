"""A fact's history said for people, as the Facts view shows it under the list: each step
(stated, updated, retracted, forgotten, restored) with its local date, the conversation
turn that did it as a link (`turn:<conversation id>/<turn>`), and what held after it.
Presentation only: the history itself is the engine's (engine/facts/history.py)."""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl

from gam_desktop.engine.api import Event
from gam_desktop.gui import local_time, theme
from gam_desktop.gui.personal_memory import FactRow

TURN_SCHEME = "turn"
WORDS = {
    "stated": "Stated",
    "updated": "Updated",
    "retracted": "Taken back",
    "forgotten": "Forgotten",
    "restored": "Restored",
}


def turn_link(conversation: str, turn: int) -> str:
    return f"{TURN_SCHEME}:{conversation}/{turn}"


def parse_turn_link(url: QUrl) -> tuple[str, int] | None:
    """(conversation id, turn) of a history link, None for any other link."""
    if url.scheme() != TURN_SCHEME:
        return None
    conversation, _, turn = url.path().rpartition("/")
    return (conversation, int(turn)) if conversation and turn.isdigit() else None


def history_html(row: FactRow) -> str:
    """The history of the fact `row` lists, oldest first, as rich text."""
    muted = theme.current()["muted"]
    items = [_event_html(row, event, muted) for event in row.events]
    heading = "History of this fact" if row.current else "History of this fact (no longer true)"
    return (
        f"<p style='margin:0 0 4px 0'><b>{heading}</b></p>"
        "<table cellspacing='0' cellpadding='3'>" + "".join(items) + "</table>"
    )


def _event_html(row: FactRow, event: Event, muted: str) -> str:
    word = WORDS.get(event.kind, event.kind.capitalize())
    when = html.escape(local_time.when(event.at))
    said = html.escape(event.statement)
    # what the step replaced is the row above it; a fact taken back with nothing after it
    # is struck through
    ended = event.kind in ("retracted", "forgotten") and not event.before
    what = f"<s>{said}</s>" if ended else said
    return (
        f"<tr><td style='white-space:nowrap'><b>{word}</b></td>"
        f"<td style='white-space:nowrap; color:{muted}'>{when}</td>"
        f"<td>{what}<br><span style='color:{muted}'>{_where(row, event)}</span></td></tr>"
    )


def _where(row: FactRow, event: Event) -> str:
    """ "in “Hi there, I'm…”, turn 5" as a link to the turn; where no turn did it, how."""
    if not event.conversation:
        return "in the Facts view" if event.kind in ("forgotten", "restored") else "by hand"
    title = row.titles.get(event.conversation)
    if title is None:
        return f"in a conversation since deleted (turn {event.turn})"
    link = html.escape(turn_link(event.conversation, event.turn), quote=True)
    return f"in <a href='{link}'>“{html.escape(title)}”, turn {event.turn}</a>"
