"""The English words the answering pipeline relies on, in one place: a reply that says the
passages do not hold the answer, and the words that carry no content in an answer. Nothing
here is about a subject; a language other than English needs only this module."""

from __future__ import annotations

import re

# The words a reader says "not stated" with: participles ("not stated") and verbs ("does
# not say"), each perhaps after an adverb ("not explicitly stated").
_STATED = r"(?:stated|mentioned|specified|provided|given|found|described|included|covered)"
_SAY = r"(?:say|state|mention|specify|contain|include|provide|give)"
_THE_PASSAGES = r"(?:the|these|any) (?:\w+ )?(?:passages?|documents?|memory|texts?)\b"

# A reader's way of saying "not stated": the answer is an abstention.
NOT_STATED = re.compile(
    rf"\b(?:not (?:\w+ly )?(?:{_STATED}|available|"
    r"in (?:the|these|any) (?:passages?|documents?|memory|text))|"
    rf"(?:does|do|did)(?: not|n't) (?:\w+ly )?{_SAY}|"
    r"no (?:information|mention|passage|data|details?)|"
    r"(?:cannot|can't|could not|couldn't|unable to) (?:find|determine|answer|tell)|unknown)\b",
    re.IGNORECASE,
)

# "…is not explicitly stated in the given passages": the reader says the passages do not
# hold it, whatever passages it names besides.
_SAYING = rf"(?:not|n't) (?:\w+ly )?(?:{_STATED}|{_SAY})\b"
NOT_IN_PASSAGES = re.compile(
    rf"\b{_SAYING}[^.]*?\b(?:in|by) {_THE_PASSAGES}"
    rf"|\b{_THE_PASSAGES} (?:does|do|did)(?: |(?=n't)){_SAYING}",
    re.IGNORECASE,
)

# Words that say nothing of their own in an answer ("The answer is 30 days" says "30 days").
FUNCTION_WORDS = frozenset(
    """a an the is are was were be been being am of in on at to for from by with as and or
    but if then than that this these those it its they them their there here which who whom
    whose what when where why how do does did done has have had having will would shall
    should can could may might must not no yes so such also only just about into over under
    per each every any all some more most less least very answer question passage passages i
    document documents according says said state states stated
    me my mine myself you your yours yourself we our ours us he him his she her hers
    i'm i've i'll i'd you're you've you'll you'd we're we've he's she's""".split()
)

NOT_IN_MEMORY = "The memory does not say."
NOT_CLEARLY = "The memory does not say this clearly. The closest it comes:"

# The words English numbers a thing's versions with: "Harbor Protocol version 3" and
# "version 3 of the Harbor Protocol" name the Harbor Protocol's 3, as "Harbor Protocol 3" does.
# ("release" is a verb as often: "What did Anna release 2 weeks ago?")
VERSION_WORDS = frozenset("version edition revision".split())

# A question asking for an amount, and the words an amount is written with besides digits
# (each matched as a run of letters: "twenty-five" is "twenty" and "five"), those saying
# there is none ("nothing", "free") and those saying how much of a whole ("all", "most").
# "When did I first mention…?" asks for a time; "When I first told you…, what was…?" opens
# a clause and asks something else
ASKS_WHEN = re.compile(r"^\W*when\s+(?:did|do|does|have|has|had)\b", re.IGNORECASE)
ASKS_AMOUNT = re.compile(r"\bhow (?:much|many)\b", re.IGNORECASE)
AMOUNT_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred hundreds thousand thousands million millions billion billions
    dozen dozens couple pair half third thirds quarter quarters double twice once single
    both several few many much some most all every no none nothing never free""".split()
)

# Month names, for dates written in words ("March 7, 2021") against digits (2021-03-07).
MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        1,
    )
    for name in names.split()
}

# Words of the calendar, which English writes with a capital but which name no thing: a
# question's "22 September" or "on Monday" is a time, which a memory may write in digits
# ("2026-09-22") or not at all (a turn is dated by its file, not by its words).
CALENDAR_WORDS = frozenset(
    [name for name in MONTHS if len(name) > 3 or name == "may"]
    + "monday tuesday wednesday thursday friday saturday sunday".split()
)

# A question asking who fills a role ("What is the name of the band's drummer?", "What's my
# aunt's name?", "Who is our landlord?"): each captures the role, in a word or two after any
# possessor ("the band's"); an answer names someone the sources call that.
_DETERMINER = r"(?:the|my|our|your|his|her|their)\s+"
_ROLE = r"([^\W\d_]+(?:\s+[^\W\d_]+)?)"
ASKS_WHO_IS = (
    re.compile(rf"\bname\s+of\s+(?:{_DETERMINER})?(?:[^\W\d_]+['’]s\s+)?{_ROLE}", re.I),
    re.compile(rf"\b{_DETERMINER}(?:[^\W\d_]+\s+)?([^\W\d_]+)['’]s\s+name\b", re.I),
    re.compile(rf"\bwho(?:['’]s|\s+is|\s+was)\s+{_DETERMINER}(?:[^\W\d_]+['’]s\s+)?{_ROLE}", re.I),
)

# A question about the person's own name ("What's my name?", "Who am I?"): only these are
# answered from the fact that names them.
ASKS_OWN_NAME = re.compile(
    r"\b(?:my\s+(?:full\s+|own\s+|first\s+|last\s+|sur)?name|who\s+am\s+i|"
    r"what\s+am\s+i\s+called|what\s+do\s+you\s+call\s+me)\b",
    re.IGNORECASE,
)
