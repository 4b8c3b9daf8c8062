"""The scripted research planner's sub-questions read as a person writes them: it wrote
"What is the released of BERT?" for "When were BERT and GPT released?", a word of the
question dropped into a template. The rule checked over every shape below:

- a sub-question is a question: it opens with a question word or an auxiliary, ends with
  one "?", and names exactly one of the question's names, whole ("Pebblecast 5.1", "Acme Corp");
- its words are the question's own, the frame "What do the notes say about", or the form
  of one of the question's verbs that agrees with one name ("were" → "was", "handle" →
  "handles"): nothing put in a template regardless of grammar;
- no "the <past-tense verb>" ("the released of"), no plural auxiliary next to the one name
  ("were BERT"), no joining word left hanging ("between BERT?", "which of BERT"), no stray
  punctuation ("Heron Labs . apply").
"""

from __future__ import annotations

import re

import pytest

from gam_desktop.selfcheck.scripted_research import plan, reflect
from gam_desktop.selfcheck.sub_questions import OPENERS, SINGULAR, names, third_person

FRAME = "What do the notes say about"
SHAPES = {  # a question → the sub-questions a person would write for it
    "When were BERT and GPT released?": ["When was BERT released?", "When was GPT released?"],
    "Who created Python and Java?": ["Who created Python?", "Who created Java?"],
    "Where are Acme Corp and Borealis Systems based?": [
        "Where is Acme Corp based?",
        "Where is Borealis Systems based?",
    ],
    "How do Acme Corp and Borealis Systems handle escalation?": [
        "How does Acme Corp handle escalation?",
        "How does Borealis Systems handle escalation?",
    ],
    "Compare the escalation rules of Acme Corp and Borealis Systems": [
        f"{FRAME} the escalation rules of Acme Corp?",
        f"{FRAME} the escalation rules of Borealis Systems?",
    ],
    "Compare the default refresh interval of Pebblecast 5.1 and Pebblecast 6.0, and say why.": [
        f"{FRAME} the default refresh interval of Pebblecast 5.1?",
        f"{FRAME} the default refresh interval of Pebblecast 6.0?",
    ],
    "Describe how Heron Labs and Wren Inc. apply the rota": [
        f"{FRAME} how Heron Labs applies the rota?",
        f"{FRAME} how Wren Inc applies the rota?",
    ],
    "List the release dates of BERT, GPT-2 and T5": [
        f"{FRAME} the release dates of BERT?",
        f"{FRAME} the release dates of GPT-2?",
        f"{FRAME} the release dates of T5?",
    ],
    "Compare CNNs and RNNs": [f"{FRAME} CNNs?", f"{FRAME} RNNs?"],
    # compared with one another: each name asked about alone
    "Which of BERT and GPT-2 was trained on more data?": [f"{FRAME} BERT?", f"{FRAME} GPT-2?"],
    "What are the differences between BERT and GPT?": [f"{FRAME} BERT?", f"{FRAME} GPT?"],
    "How long until escalation in Acme Corp 5.0, compared with Zephyr Inc?": [
        f"{FRAME} Acme Corp 5.0?",
        f"{FRAME} Zephyr Inc?",
    ],
}
# the reviewer's follow-up for a name of the question's later clause
FOLLOW_UPS = {
    "What are the escalation rules of Acme Corp; and at Cobalt Labs?": (
        "What are the escalation rules of Acme Corp?",
        "What are the escalation rules of Cobalt Labs?",
    ),
    "When was BERT released; and GPT-2?": ("When was BERT released?", "When was GPT-2 released?"),
    "Compare the on-call rota of Heron Labs; and at Wren Inc?": (
        f"{FRAME} the on-call rota of Heron Labs?",
        f"{FRAME} the on-call rota of Wren Inc?",
    ),
}
WORD = re.compile(r"[\w.-]+")


def words(text: str) -> set[str]:
    return {w.strip(".").lower() for w in WORD.findall(text)} - {""}


def grammar_faults(sub: str, question: str, names: list[str]) -> list[str]:
    """What breaks the rule of the module's docstring in `sub`, asked for `question`."""
    faults = []
    if sub.split()[0].lower() not in OPENERS or not sub.endswith("?") or sub.count("?") != 1:
        faults.append("not a question")
    named = [n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-]|\.\d)", sub)]
    if len(named) != 1:
        faults.append(f"names {named}, not one of {names}")
    own = words(question) | words(FRAME)
    agreeing = {third_person(w) for w in words(question)} | set(SINGULAR.values())
    if strange := sorted(words(sub) - own - {w.lower() for w in agreeing}):
        faults.append(f"words not the question's own: {strange}")
    if re.search(r"\b(?:the|a|an)\s+\w+ed\b(?:\s+of\b|\?)", sub):
        faults.append("a past-tense verb used as a noun")
    for name in named:
        if re.search(rf"\b(?:are|were|do|have)\s+{re.escape(name)}\b", sub, re.I):
            faults.append("a plural auxiliary before one name")
    if re.search(r"\b(?:and|or|between|among|of|vs)\s*\?|\bwhich of\b", sub, re.I):
        faults.append("a joining word left hanging")
    if re.search(r"\s[.,;:?]", sub):
        faults.append("a stray punctuation mark")
    return faults


def planned(question: str) -> list[str]:
    return [s["question"] for s in plan(f"QUESTION: {question}\n")["sub_questions"]]


@pytest.mark.parametrize("question", list(SHAPES))
def test_each_sub_question_is_grammatical_and_one_name_s_own(question: str) -> None:
    subs = planned(question)
    for sub in subs:
        assert grammar_faults(sub, question, names(question)) == [], sub
    assert subs == SHAPES[question]


@pytest.mark.parametrize("question", list(FOLLOW_UPS))
def test_the_reviewer_s_follow_up_is_the_first_clause_asked_of_the_name_it_misses(
    question: str,
) -> None:
    first, follow_up = FOLLOW_UPS[question]
    assert planned(question) == [first]
    reply = reflect(f"QUESTION: {question}\nSub-question: {first}\n")
    assert reply == {"enough": False, "new_requests": [follow_up]}
    assert grammar_faults(follow_up, question, names(question)) == []


def test_the_rule_catches_what_the_planner_used_to_write() -> None:
    """The checker itself: each of the old planner's sub-questions breaks it."""
    assert grammar_faults("What is the released of BERT?", "When were BERT released?", ["BERT"])
    assert grammar_faults(
        "What is the handle escalation of Acme?", "How do Acme and Wren handle escalation?",
        ["Acme", "Wren"],
    )  # fmt: skip
    assert grammar_faults("When were BERT released?", "When were BERT and GPT released?", ["BERT"])
    assert grammar_faults("Which of BERT was older?", "Which of BERT and GPT was older?", ["BERT"])
