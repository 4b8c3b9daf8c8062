"""The English words the notes' checks rely on, in one place: the nouns that say what
kind of document a title names, and the sentences that talk about a text instead of saying
what it says. Nothing here is about a subject; a language other than English needs only
this module (and the other packages' lexicons)."""

from __future__ import annotations

import re

# English nouns that say what kind of document it is, not whose: never the subject.
DOCUMENT_KINDS = frozenset(
    {"policy", "policies", "notes", "note", "release", "releases", "report", "reports",
     "guide", "manual", "procedure", "procedures", "handbook", "overview", "introduction",
     "chapter", "section", "document", "standard", "rules", "summary", "version", "readme",
     "changelog", "log"}
)  # fmt: skip
# A sentence about the text rather than of it ("The document describes the use of X.", "The
# Widget 2.0 release notes cover…", "X is a document that outlines Y.", "It also mentions Y."):
# with no "that" clause and no number, it states no fact of its own. The nouns name a piece
# of text, never a kind of document; "file" and "page" are left out, as passages tell of
# files and pages.
_TEXT_NOUN = (
    r"(?:document|text|passage|section|chapter|note|article|extract|paragraph|part"
    r"|summary|overview|introduction)s?"
)
_REPORTING = (
    r"(?:describ|discuss|cover|explain|outlin|provid|mention|list|detail|contain|includ|present"
    r"|highlight|focus|talk|summari[sz]|deal|address|introduc|refer|specif|emphasi[sz])\w*"
    r"|is\s+about|(?:is|are)\s+(?:divided|split|organi[sz]ed)\b"
)
_MODIFIERS = r"(?:[\w.'’-]+\s+){0,5}?"  # "the Widget 2.0", "Orla's yearly", "Widget 2.0 user"
ABOUT_THE_TEXT = re.compile(
    rf"^(?:(?:the|this|these)\s+)?{_MODIFIERS}{_TEXT_NOUN}\s+(?:also\s+)?(?:{_REPORTING})\b"
    rf"|^{_MODIFIERS}(?:is|are)\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,2}}?(?:{_TEXT_NOUN}|files?)\s+"
    rf"(?:(?:that|which)\s+)?(?:also\s+)?(?:{_REPORTING})\b",
    re.IGNORECASE,
)
# What follows such a verb before its object: "deals with", "focuses on", "explains that"
ABOUT_WHAT = re.compile(r"^\s*(?:(?:on|upon|with|to|about|that)\s+)?", re.IGNORECASE)
ABOUT_IT = re.compile(rf"^(?:it|they)\s+(?:also\s+)?(?:{_REPORTING})\b", re.IGNORECASE)
STATES_A_FACT = re.compile(r"\bthat\b|\d", re.IGNORECASE)
