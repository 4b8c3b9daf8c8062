"""When the person first mentioned something: the oldest of their dated words naming it.

"When did I first mention X?" asks for a time the dated records hold. Retrieval already
puts the oldest conversation and fact naming X first; shown them, a small model answered
from the one whose words say "first" ("the first batch was fine", about something
else), or from a later one. The oldest turn among the passages that writes every search
term of X is the answer, and no model call is needed to find it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gam_desktop.engine.answering.checks import Draft
from gam_desktop.engine.answering.lexicon import ASKS_WHEN
from gam_desktop.engine.answering.passages import searched_for, units_of
from gam_desktop.engine.answering.recall import asks_for_first, dated_turns
from gam_desktop.engine.answering.when import asks_what_was_said, spoken
from gam_desktop.engine.retrieval.search import query_terms, tokenize

if TYPE_CHECKING:  # the pipeline lists this answerer, and hands it its evidence
    from gam_desktop.engine.answering.pipeline import Evidence


def asks_when_first_said(question: str) -> bool:
    """ "When did I first tell you about X?"; not "When I first told you about X, what
    date was it?", which asks what was said then."""
    return bool(
        ASKS_WHEN.match(question) and asks_for_first(question) and asks_what_was_said(question)
    )


class FirstMention:
    """The oldest turn (or fact) of the passages that names what the question asks about,
    quoted with its date: its first sentence, which holds the date, and the first that
    names it. None when the question asks something else, or no passage names it: the
    reading answers then."""

    name = "first mention"

    def try_answer(self, evidence: Evidence) -> Draft | None:
        question = evidence.question
        if not asks_when_first_said(question):
            return None
        named = set(query_terms(searched_for(question)))
        if not named:
            return None
        passages = evidence.best_passages()
        mentions = [
            (turn, passage)
            for passage in passages
            if passage.said is not None
            for turn in dated_turns(passage.text)
            if named <= set(tokenize(turn.said))
        ]
        if not mentions:
            return None
        # the oldest day, and on it the person's own words before a fact learned from them
        turn, passage = min(mentions, key=lambda m: (m[0].when.date(), m[0].is_fact, m[0].when))
        evidence.show(passages)
        evidence.step(f"the oldest of them naming it: {spoken(turn.when)}")
        sentences = units_of(turn.text)
        naming = next((s for s in sentences if named <= set(tokenize(s))), sentences[0])
        quotes = [(passage.number, s) for s in dict.fromkeys([sentences[0], naming])]
        answer = f"You first mentioned it on {spoken(turn.when)}."
        return Draft(question, answer, quotes, passages, cited=(passage.number,))
