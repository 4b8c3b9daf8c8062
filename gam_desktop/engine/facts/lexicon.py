"""The language learning reads, in one place: how people quote and paste, name themselves,
correct themselves, take something back or say that it changed. English only, and never a
subject: nothing here knows about homes, jobs or pets, only how a sentence is built.

Each pattern is compiled once; `said.py` applies them to the user's own words.
"""

from __future__ import annotations

import re

from gam_desktop.engine.answering import MONTHS as MONTH_NUMBERS

# -- quoting and pasting -------------------------------------------------------------------

QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)  # an e-mail's "> " quote
FENCED = re.compile(r"```.*?(```|$)", re.DOTALL)  # a code block
# A forwarding marker, or two header lines in a row (From: then To:, …): a pasted e-mail.
FORWARDED = re.compile(
    r"(^-{2,}\s*(original message|forwarded message)\s*-{2,}"
    r"|^(from|sent|to|date|subject|cc):[^\n]*\n(from|sent|to|date|subject|cc):).*",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
# A line that only delimits ("---", "***", '"""', "==="): what lies between two of them (or
# after an unclosed one) was pasted, not written.
DELIMITER = re.compile(r"^[ \t]*(-{3,}|\*{3,}|_{3,}|={3,}|~{3,}|\"{3}|'{3})[ \t]*$", re.MULTILINE)
# "I've pasted it below:", "copying it:", "she forwarded this:": everything after the colon
# and its line break is the pasted text.
PASTE_INTRO = re.compile(
    r"\b(past(e|es|ed|ing)|forward(ed|ing)|copied|copying|copy[- ]and[- ]paste\w*)\b"
    r"[^\n]*:[ \t]*\n",
    re.IGNORECASE,
)
QUOTE_MARK = re.compile(r"[\"“”«»]")
LONG_QUOTE = 80  # characters: a quotation this long is pasted text, not the user's words

# -- the user naming themselves ------------------------------------------------------------

_NAME = r"([A-Z][\w'-]+(?:\s+(?:van|von|de|da|del|der|di|le|la|[A-Z][\w'-]+)){0,3})"
# Sure: "my name is Iris", "call me Iris", "Hi there, I'm Iris", "This is Iris speaking".
NAMED_SURELY = re.compile(
    r"(?i:\bmy\s+name\s+is|\bmy\s+name's|\bcall\s+me|"
    r"\b(?:hi|hello|hey|good\s+(?:morning|afternoon|evening))\b(?:\s+there)?[,!.]?\s*"
    r"(?:i'm|i\s+am|this\s+is|it's))\s+" + _NAME
)
# Likely, when the model agrees: "I'm Iris Moreau." at the start of the message.
NAMED_LIKELY = re.compile(r"^\s*(?i:i'm|i\s+am)\s+" + _NAME + r"\s*[.,!;]")
# A statement that gives the user a name ("The user's name is X", "The user is called X").
NAME_CLAIM = re.compile(
    r"^\s*(?:the\s+user(?:'s)?\s+(?:full\s+)?name\s+is|the\s+user\s+is\s+(?:called|named)|"
    r"the\s+user\s+goes\s+by)\s+(.+?)\s*\.?\s*$",
    re.IGNORECASE,
)
# "The user is Marta Holm.": the user made into someone by a bare name.
IS_A_NAME = re.compile(r"^\s*(?i:the\s+user\s+is)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)\s*\.?\s*$")
# Someone else by their relation to the user: "my colleague Marta", "our tutor Marta Holm".
SOMEONE_ELSE = re.compile(r"\b(?:my|our|his|her|their)\s+(?:[a-z][\w-]*\s+){1,3}$", re.IGNORECASE)

# -- correcting oneself in the same breath -------------------------------------------------

# ", no, sorry, 41", ", no wait, 19 June", ", actually four", " — I mean Petra".
CORRECTION = re.compile(
    r"(?:,|\s[-–—])\s*(?:no[,!]?\s+(?:sorry|wait)[,!]?|no,|sorry,?(?:\s+i\s+meant?,?)?|"
    r"wait,|i\s+meant?,?|or\s+rather,?|actually,?|correction:?|make\s+that|scratch\s+that,?)"
    r"\s+(?=\S)",
    re.IGNORECASE,
)
CORRECTION_END = re.compile(r"[,.;:!?()]|\s[-–—]\s|$")  # where the corrected value ends
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand half dozen first second third fourth fifth sixth seventh eighth "
    "ninth tenth".split()
)
# What a number counts or measures: the word after it, and a rate's "a cup", "per hour"
UNIT_AFTER_NUMBER = r"(?:\s+[^\W\d_]+(?:\s+(?:a|an|per)\s+[^\W\d_]+)?)?"
FUNCTION_WORDS = frozenset(
    "a an the on at in of to for by from with and or my our his her their its this that".split()
)

# -- taking something back -------------------------------------------------------------------

_UPTO = r"(.+?)(?=\s*(?:[.;:!?]|,\s|\s[-–—]\s|\bis\s+no\s+longer\b|\bisn't\b|$))"
# What the retraction is about, in the user's words.
RETRACTION_ABOUT = [
    # "Forget what I said about the bake sale", "forget what I told you about Orla …"
    re.compile(
        r"\b(?:forget|ignore|disregard|scratch|strike)\s+(?:what|everything|all)\s+i\s+"
        r"(?:said|told\s+you|mentioned|wrote)\s+(?:about|regarding|on)\s+" + _UPTO,
        re.IGNORECASE,
    ),
    # "what I said about my pottery class is no longer true"
    re.compile(
        r"\bwhat\s+i\s+(?:said|told\s+you|mentioned)\s+(?:about|regarding)\s+(.+?)\s+"
        r"(?:is|was)\s+(?:no\s+longer|not)\s+(?:true|right|the\s+case|happening)",
        re.IGNORECASE,
    ),
    # "You know how I said I run on Sundays? That's no longer true"
    re.compile(
        r"\bi\s+(?:said|told\s+you|mentioned)\s+(?:that\s+)?(.+?)\?\s*(?:well,?\s+)?"
        r"(?:that's|that\s+is|it's|it\s+is)\s+(?:no\s+longer|not)\s+(?:true|right|the\s+case)",
        re.IGNORECASE,
    ),
    # "About the laptop: that's no longer true", "The Friday quiz: that's no longer true"
    re.compile(
        r"(?:^|[.!?]\s+)(?:about\s+)?([^.!?:]+?)[:,]\s*(?:that's|that\s+is|it's|it\s+is)\s+"
        r"(?:no\s+longer|not)\s+(?:true|right|the\s+case|happening)",
        re.IGNORECASE,
    ),
    # "I've quit the darts league", "I have given up chess", "I stopped the gym"
    re.compile(
        r"\bi(?:'ve|\s+have)?\s+(?:now\s+)?(?:stopped|quit|given\s+up|gave\s+up|dropped|"
        r"cancelled|canceled)\s+" + _UPTO,
        re.IGNORECASE,
    ),
    # "I no longer cycle to work", "I don't play squash any more"
    re.compile(r"\bi\s+no\s+longer\s+" + _UPTO, re.IGNORECASE),
    re.compile(
        r"\bi\s+(?:don't|do\s+not)\s+([^.;:!?,]+?)\s+(?:any\s?more|anymore)\b", re.IGNORECASE
    ),
    # "the bake sale fell through", "the trip is off", "the meeting was cancelled"
    re.compile(
        r"(?:^|[.;!?]\s+|,\s+)((?:the|my|our)\s+[^.;,!?]+?)\s+(?:fell\s+through|is\s+off|"
        r"was\s+(?:cancelled|canceled|called\s+off)|has\s+been\s+(?:cancelled|canceled))\b",
        re.IGNORECASE,
    ),
    # "no Vienna after all"
    re.compile(r"\bno\s+([^.;:!?,]+?)\s+after\s+all\b", re.IGNORECASE),
]
# "…, so" or "… and" left at the end of a statement once its retraction is taken out.
TRAILING_LINK = re.compile(r"[\s,;]*\b(so|and|but|then|which)\s*$", re.IGNORECASE)
# A retraction said with no object: "That's no longer true." (of the turn before).
RETRACTED = re.compile(
    r"\b(no\s+longer\s+true|not\s+true\s+any\s?more|forget\s+(?:what|that|it)|"
    r"fell\s+through|after\s+all|(?:stopped|quit|given\s+up|gave\s+up))\b",
    re.IGNORECASE,
)
# What a retraction's object must hold more than: "I've stopped going", "doing it"; words
# that say when or how sure ("instead", "now") and the tails of contractions ("I'm", "he'll")
# say nothing of what a fact is about.
LIGHT_WORDS = frozenset(
    "it that this them those there one go goes going went do does doing did be being get "
    "getting got make making he him his she her hers they their theirs its we us our ours "
    "still now instead again also just really actually currently finally anymore "
    "m ll ve re s d t".split()
)
NEGATION = re.compile(
    r"\b(no\s+longer|not|never|any\s?more|no\s+more|stopped|quit)\b|n't\b", re.IGNORECASE
)

# -- saying that something changed -----------------------------------------------------------

# "moved", "changed", "instead", "is now", "again", "switch to", "after all", "actually".
CHANGE = re.compile(
    r"\b(moved|moves|moving|changed|changes|changing|change\s+of|switch(?:ed|ing)?|"
    r"instead|now|again|no\s+longer|any\s?more|after\s+all|actually|rescheduled|postponed|"
    r"brought\s+forward|put(?:ting)?\s+(?:\w+\s+){0,3}(?:up|down)|"
    r"raised|lowered|replaced|updated|new\s+date|from\s+now\s+on|anymore|decided)\b",
    re.IGNORECASE,
)
# The value a change leaves behind, named: "from 3 May to 10 May", "instead of
# 9", "not Lark Hall", "rather than the old one", "up from 35".
OLD_VALUE = [
    re.compile(
        r"\b(?:mov|chang|switch|push|brought|bring|reschedul|postpon|put|putting|rais|lower)"
        r"\w*\b[^.;!?]*?\bfrom\s+(.+?)\s+to\s+",
        re.IGNORECASE,
    ),
    re.compile(r"\binstead\s+of\s+(.+?)(?=[,.;:!?]|\s[-–—]\s|$)", re.IGNORECASE),
    re.compile(r"\brather\s+than\s+(.+?)(?=[,.;:!?]|\s[-–—]\s|$)", re.IGNORECASE),
    re.compile(r"(?:,|\bbut)\s+not\s+(?!to\b)(.+?)(?=[,.;:!?]|\s[-–—]\s|$)", re.IGNORECASE),
    re.compile(r"\bup\s+from\s+(.+?)(?=[,.;:!?]|\s[-–—]\s|$)", re.IGNORECASE),
    re.compile(r"\bdown\s+from\s+(.+?)(?=[,.;:!?]|\s[-–—]\s|$)", re.IGNORECASE),
]
# A determiner before a value the user names ("instead of the Lowry"): the fact may have
# said "a Lowry print".
DETERMINER = re.compile(r"^(?:the|a|an|my|our|your|his|her|their|its|this|that)\s+", re.I)
# Where a sentence's clause ends: a clause mark, or a word that starts a reason, a
# consequence or a contrast ("…is now on Friday, because the hall is booked").
CLAUSE_BREAK = re.compile(
    r"[,;:]\s+|\s+(?:because|since|so|but|while|although|though|as|which|who|when)\s+",
    re.IGNORECASE,
)
MONTHS = frozenset(MONTH_NUMBERS)  # the month names, as the answers read them
WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays "
    "thursdays fridays saturdays sundays".split()
)
# The parts of a day, which say when as a date does ("at 6:40 in the evening").
TIMES_OF_DAY = frozenset(
    "morning mornings afternoon afternoons evening evenings night nights noon midnight".split()
)
# Markers that surely correct, so that one plain word may replace another ("tea, no, coffee").
LOOSE_CORRECTION = re.compile(r"^\W*(no\b|i\s+meant?\b|or\s+rather\b|make\s+that\b)", re.I)
