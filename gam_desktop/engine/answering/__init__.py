"""Answering a question from the memory with one general pipeline: retrieve passages, read
them in one grounded call that quotes its support, check the quote against the source and
the answer against the quote, abstain when nothing supports it. It knows the language
(lexicon.py), never a subject.

The names below are what other subpackages build on (research checks its claims with these
checks and retrieves with this retrieval; an import contract in pyproject.toml keeps it to
them): the modules behind them may change."""

from gam_desktop.engine.answering.checks import (
    ANSWER_OVERLAP,
    AboutWhatIsAsked,
    Abstained,
    AnswerFromQuotes,
    Check,
    Draft,
    Finding,
    QuotesInSources,
    Support,
)
from gam_desktop.engine.answering.lexicon import FUNCTION_WORDS, MONTHS
from gam_desktop.engine.answering.passages import Passage, holds, identifiers, retrieve, units_of

__all__ = [
    "ANSWER_OVERLAP",
    "FUNCTION_WORDS",
    "MONTHS",
    "AboutWhatIsAsked",
    "Abstained",
    "AnswerFromQuotes",
    "Check",
    "Draft",
    "Finding",
    "Passage",
    "QuotesInSources",
    "Support",
    "holds",
    "identifiers",
    "retrieve",
    "units_of",
]
