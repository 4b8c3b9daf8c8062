"""The general answering pipeline (engine/answering): retrieval windows, each check, the
answerers in order, and the bookkeeping of what was read. The model is FakeLLM, answering
the `Reading` it is asked for; the memory is real files searched by the real index."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gam_desktop.engine.answering import checks, passages
from gam_desktop.engine.answering.checks import Draft
from gam_desktop.engine.answering.lexicon import NOT_CLEARLY, NOT_IN_MEMORY
from gam_desktop.engine.answering.passages import Passage, best_window
from gam_desktop.engine.answering.pipeline import (
    FROM_QUOTE,
    Evidence,
    Grounded,
    answer,
    check_draft,
)
from gam_desktop.engine.answering.reading import Reading
from gam_desktop.engine.chats.record import Turn, new_record, render
from gam_desktop.engine.llm import LLMCallFailed, LLMSettings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.models import META_FILE, ChatResult, GamMeta
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.engine.workflow import Workflow
from tests.fakes import FakeLLM
from tests.memories import write_memory


@pytest.fixture
def tools(tmp_path: Path) -> MemoryTools:
    return MemoryTools(write_memory(tmp_path / "memory"))


def evidence(tools: MemoryTools, question: str, *replies: Reading) -> Evidence:
    return Evidence(question, tools, FakeLLM({Reading: list(replies)}), CancelToken())


def passage(number: int, text: str, memory: str = "a.md") -> Passage:
    return Passage(number, memory, memory.removesuffix(".md"), memory, text)


BERT = "It is pre-trained by masking 15 percent of the input tokens."


def not_stated(result: ChatResult) -> bool:
    """The memory says it does not know: plainly, or showing the sentences closest to the
    question under "does not say this clearly", each one a passage's own and cited; either
    way at a confidence that counts as not knowing."""
    if result.confidence >= 0.3:
        return False
    if result.answer == NOT_IN_MEMORY:
        return result.sources == []
    head, *shown = result.answer.split("\n\n")
    return head == NOT_CLEARLY and bool(shown) and all(s.startswith("> ") for s in shown)


# -- retrieval ------------------------------------------------------------------------------


def test_the_window_is_cut_around_the_sentence_with_the_question_words() -> None:
    filler = " ".join(f"Sentence {n} says nothing much about it." for n in range(60))
    text = f"# Intro\n\n{filler}\n\n## Masking\n\n{BERT} More follows here.\n\n{filler}"
    weights = {"mask": 2.0, "percent": 2.0}
    window = best_window(text, weights, words=40)
    assert BERT in window
    assert window.startswith("## Masking")  # the heading it sits under comes along
    assert len(window.split()) < 60


def test_a_window_that_stops_inside_a_list_takes_the_rest_of_it() -> None:
    """ "What are all the levels?": the window around the sentence that introduces the list
    ran out of words four items in, and the answer named half of them."""
    filler = " ".join(f"Sentence {n} says nothing much about it." for n in range(30))
    items = [f"- level{n}: grade {n} of urgency;" for n in range(1, 9)]
    text = f"{filler}\n\nEach message has a severity level. Here they are, in order:\n"
    text += "\n".join(items) + f"\n\n{filler}"
    window = best_window(text, {"sever": 3.0}, words=40)
    assert all(f"level{n}:" in window for n in range(1, 9))
    assert "Sentence 29" not in window.split("level8")[1]  # the list's end, not beyond
    # a list the window only runs into, after the sentence it is cut around, is about
    # something else: it is not taken whole
    other = text.replace("Each message has a severity level.", "Each message is sent.")
    other = other.replace("Sentence 29", "Sentence 29 is about its severity.")
    assert "level2" not in best_window(other, {"sever": 3.0}, words=40)
    # a list longer than a second window's words is cut at that
    long = text.replace("\n".join(items), "\n".join(items * 6))
    assert len(best_window(long, {"sever": 3.0}, words=40).split()) <= 80 + 20


def test_inside_a_document_its_window_is_found_by_the_words_that_do_not_name_it(
    tmp_path: Path,
) -> None:
    """ "Under version 2.0 of the Widget Licence, how many words may a caption hold?": the words
    naming the document chose it; inside it they all sit in its title line, which was shown
    instead of the sentence about captions."""
    root = write_memory(tmp_path / "memory")
    filler = " ".join(f"Clause {n} grants the usual rights to copy the work." for n in range(40))
    body = (
        "Widget Licence Version 2.0, the licence of the Widget project.\n\n"
        f"{filler}\n\nA caption may be at most 12 words long.\n\n{filler}"
    )
    (root / "nlp" / "widget_licence.md").write_text(
        f"---\ntitle: Widget Licence 2.0\n---\n{body}", encoding="utf-8"
    )
    asked = "Under version 2.0 of the Widget Licence, how many words may a caption hold?"
    found = passages.retrieve(MemoryTools(root), asked)
    shown = next(p for p in found if p.memory == "nlp/widget_licence.md")
    assert "at most 12 words" in shown.text


def test_retrieval_finds_the_memory_and_caps_each_document(tools: MemoryTools) -> None:
    found = passages.retrieve(tools, "How many input tokens does BERT mask?")
    assert found[0].memory == "nlp/bert_encoder.md"
    assert [p.number for p in found] == list(range(1, len(found) + 1))


# -- the checks -------------------------------------------------------------------------


def test_an_empty_answer_is_an_abstention() -> None:
    draft = Draft("q?", "", [], [passage(1, BERT)])
    finding = checks.Abstained().check(draft)
    assert finding is not None and finding.repaired is None


def test_an_answer_saying_the_passages_do_not_state_it_is_an_abstention_though_it_cites(
    tools: MemoryTools,
) -> None:
    """ "The default is not explicitly stated in the given passages", with a passage named
    and "found": it was shown with sources at 0.8, and counted as an answer."""
    for said in (
        "The default value of the cache setting is not explicitly stated in the given passages.",
        "The passages don't say which version added it.",
    ):
        draft = Draft("q?", said, [], [passage(1, BERT)], cited=(1,))
        finding = checks.Abstained().check(draft)
        assert finding is not None and finding.repaired is None
    reply = Reading(
        answer="The masking rate is not directly mentioned in the passages.", passages=[1]
    )
    result = answer(evidence(tools, "How many input tokens does BERT mask?", reply))
    assert not_stated(result) and "not directly mentioned" not in result.answer
    # an answer that only says "not" beside a value stands
    kept = Draft("q?", "It masks 15 percent, not counting padding.", [], [passage(1, BERT)])
    assert checks.Abstained().check(replace(kept, cited=(1,))) is None


def test_a_quote_with_the_wrong_number_is_found_in_its_passage() -> None:
    shown = [passage(1, "Nothing here."), passage(2, BERT, "b.md")]
    draft = Draft("How much is masked?", "15 percent", [(1, BERT)], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert [s.passage.memory for s in finding.repaired.support] == ["b.md"]


def test_the_sentence_stating_the_answer_is_looked_for_first_in_the_passages_cited() -> None:
    other = "An older encoder masks 15 percent of the input tokens too."
    shown = [passage(1, other), passage(2, BERT, "b.md")]
    draft = Draft("How much is masked?", "15 percent of the input tokens", [], shown, cited=(2,))
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert [s.passage.memory for s in finding.repaired.support] == ["b.md"]


def test_a_quote_the_passages_never_say_rejects_the_answer() -> None:
    draft = Draft("How much is masked?", "40 percent", [(1, "It masks 40 percent.")], [])
    draft = Draft(draft.question, draft.answer, draft.quotes, [passage(1, BERT)])
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is None


def test_without_quotes_the_sentence_stating_the_answer_supports_it() -> None:
    shown = [passage(1, f"BERT is an encoder. {BERT}")]
    draft = Draft("How much does BERT mask?", "15 percent of input tokens", [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert finding.repaired.support[0].sentence == BERT


def test_an_answer_joining_two_sentences_is_supported_by_both() -> None:
    first = "Heaters left on after a window opens could waste significant energy in small rooms."
    second = "Limit that waste by switching off after sensing 3 minutes of cold air."
    shown = [passage(1, f"Other news came first. {first} {second} Unrelated closing words.")]
    answer = (
        "Heaters left on after a window opens wasted significant energy in small rooms; "
        "they now switch off after 3 minutes of cold air."
    )
    draft = Draft("When does the heater stop?", answer, [], shown, cited=(1,))
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert {s.sentence for s in finding.repaired.support} == {first, second}
    single = replace(draft, answer="They now switch off after sensing 3 minutes of cold air.")
    finding = checks.QuotesInSources().check(single)
    assert finding is not None and finding.repaired is not None
    assert finding.repaired.support[0].sentence == second  # one sentence, when one holds it


def test_sentences_saying_only_the_common_words_of_an_answer_do_not_support_it() -> None:
    """A made-up claim, "The policy was last reviewed in spring.": one sentence said
    "policy", another "last", half its words, while "reviewed" and "spring" were said
    nowhere. Gathered by us, not quoted by the model, sentences must say the rarer words."""
    text = (
        "This policy describes how engineers are paged. Rotations last one week. "
        "The policy names a primary engineer. The policy names a secondary engineer. "
        "Pages go to the primary first."
    )
    shown = [passage(1, text)]
    draft = Draft("Who is paged?", "The policy was last reviewed in spring.", [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is None
    # the answer's rare words said, by two sentences, it is supported
    said = replace(draft, answer="Rotations last one week; pages go to the primary first.")
    finding = checks.QuotesInSources().check(said)
    assert finding is not None and finding.repaired is not None


def test_a_yes_or_no_rests_on_the_cited_sentence_about_what_was_asked() -> None:
    """ "Do I still…?" "No, you are not still…": a yes or no has no words of its own. It
    was rejected as saying nothing the passages say, though the passage it cited said it."""
    shown = [
        passage(1, "I signed up for the pottery course at the Elm Street studio."),
        passage(2, "Forget the pottery course at Elm Street: the studio closed for good."),
    ]
    draft = Draft(
        "Am I still doing the pottery course at Elm Street?",
        "No, you are not still doing the pottery course at Elm Street.",
        [],
        shown,
        cited=(2,),
    )
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert [s.passage.number for s in finding.repaired.support] == [2]
    # cited where no sentence holds a word of the question: nothing supports it
    elsewhere = replace(draft, passages=[*shown, passage(3, "The weather was fine.")], cited=(3,))
    finding = checks.QuotesInSources().check(elsewhere)
    assert finding is not None and finding.repaired is None
    # not a question an auxiliary opens: a "No" answers nothing asked
    which = replace(
        draft,
        question="Which course am I still doing at Elm Street?",
        answer="No, you are not still doing the course at Elm Street.",
    )
    finding = checks.QuotesInSources().check(which)
    assert finding is not None and finding.repaired is None


def test_pronouns_are_no_words_of_an_answers_own() -> None:
    """ "You told me on 3 May…": "you" and "me" are said by no passage of what the person
    said (they wrote "I"); counted as the answer's own words, they rejected it."""
    said = "Stated on Tuesday 3 May 2022: The boiler check is now on 16 June."
    draft = Draft(
        "On which day did I tell you the boiler check had moved to 16 June?",
        "On Tuesday 3 May 2022 you told me the boiler check had moved to 16 June.",
        [],
        [passage(1, said)],
        cited=(1,),
    )
    assert checks.own_words(draft.answer, draft.question) == {"told", "tuesday"}
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None


def test_a_number_the_quotes_do_not_state_makes_the_quote_the_answer() -> None:
    support = [checks.Support(passage(1, BERT), BERT)]
    draft = Draft("How much is masked?", "20 percent", [], [], support)
    finding = checks.AnswerFromQuotes().check(draft)
    assert finding is not None and finding.repaired is not None and finding.repaired.from_quote
    assert "20" in finding.why


def test_an_answer_restating_the_question_is_no_answer_of_its_own() -> None:
    support = [checks.Support(passage(1, BERT), BERT)]
    draft = Draft("How much does BERT mask?", "BERT does mask", [], [], support)
    finding = checks.AnswerFromQuotes().check(draft)
    assert finding is not None and finding.repaired is not None and finding.repaired.from_quote


def test_an_answer_its_quote_states_passes() -> None:
    support = [checks.Support(passage(1, BERT), BERT)]
    draft = Draft("How much does BERT mask?", "15 percent of the input tokens", [], [], support)
    assert checks.AnswerFromQuotes().check(draft) is None


def test_a_heading_s_section_number_is_no_value_an_answer_can_rest_on() -> None:
    """ "# 6.6." numbers a part of its document: an answer "since Gizmo 6.6" read from it
    states a value no sentence gives, while one giving the sentence's "Gizmo 10" holds."""
    text = "# 6.6. Checking signatures\nSince Gizmo 10, the signed index is the one file."
    shown = [passage(1, text)]
    question = "Since which Gizmo release has the signed index been the one file?"
    numbered = Draft(question, "Since Gizmo 6.6, the signed index is the one file.", [], shown)
    finding = checks.QuotesInSources().check(replace(numbered, cited=(1,)))
    assert finding is not None and finding.repaired is None, finding
    stated = Draft(question, "Since Gizmo 10, the signed index is the one file.", [], shown)
    held = checks.QuotesInSources().check(replace(stated, cited=(1,)))
    assert held is not None and held.repaired is not None and not held.repaired.from_quote
    assert all("Gizmo 10" in s.sentence for s in held.repaired.support)


@pytest.mark.parametrize(
    ("answer", "holds"),
    [
        ("The club meets on Thursday at 7:30 PM.", True),
        ("The club meets on Thursday at 19:30.", True),
        ("The club meets on Thursday at 7.30 p.m.", True),
        ("The club meets on Thursday at 7:30 AM.", False),
        ("The club meets on Thursday at 8:30 PM.", False),
    ],
)
def test_a_time_of_day_is_one_value_however_it_is_written(answer: str, holds: bool) -> None:
    """ "7.30pm" in what was pasted, "7:30 PM" in the model's answer: the same time, and
    the sentence giving it supports the answer; another time does not."""
    shown = [passage(1, "From next week, meetings move to the hall on Thursdays at 7.30pm.")]
    draft = Draft("When does the club meet now?", answer, [], shown, cited=(1,))
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None
    assert (finding.repaired is not None) is holds, finding


@pytest.mark.parametrize(
    ("question", "said", "answer", "holds"),
    [
        # the name given is someone the sources call something else
        (
            "What is the name of the club's treasurer?",
            "Mara Oduya, our club secretary, books the hall.",
            "Mara Oduya",
            False,
        ),
        ("What's my sister's name?", "Tove is my neighbour and waters the plants.", "Tove", False),
        ("Who is our landlord?", "Mr Reyes fixed the boiler for us on Monday.", "Mr Reyes", False),
        # the role is said, in the sentence or in the one before it
        (
            "What is the name of the club's treasurer?",
            "Mara Oduya, our treasurer, books the hall.",
            "Mara Oduya",
            True,
        ),
        ("What's my sister's name?", "My sister moved to Bergen. Tove loves it.", "Tove", True),
        ("Who is our landlord?", "Our landlord, Mr Reyes, fixed the boiler.", "Mr Reyes", True),
        # not a question about a role: the check stays out of it
        ("Who fixed the boiler?", "Mr Reyes fixed the boiler for us on Monday.", "Mr Reyes", True),
    ],
)
def test_a_name_asked_for_a_role_comes_from_passages_that_say_the_role(
    question: str, said: str, answer: str, holds: bool
) -> None:
    """Asked for the club's treasurer and shown only "Mara Oduya, our club secretary", a
    small model answered "Mara Oduya": the memory never said who the treasurer is."""
    draft = Draft(question, answer, [], [passage(1, said)], cited=(1,))
    held = check_draft(draft, checks.CHECKS)
    assert (held is not None) is holds, held


# -- the pipeline -----------------------------------------------------------------------


def test_an_answer_cites_what_it_quotes_and_lists_every_passage_read(
    tools: MemoryTools,
) -> None:
    reply = Reading(answer="15 percent of the input tokens.", passages=[1])
    result = answer(evidence(tools, "How many input tokens does BERT mask?", reply))
    assert result.sources == ["nlp/bert_encoder.md"]
    assert set(result.sources) <= set(result.files_read)
    assert "read " in result.trajectory and "nlp/bert_encoder.md" in result.trajectory
    assert BERT in result.answer and result.confidence >= 0.8
    assert result.citations[0].path == "nlp/bert_encoder.md"


def test_the_reader_is_asked_the_question_before_the_passages_and_after_them(
    tools: MemoryTools,
) -> None:
    llm = FakeLLM({Reading: [Reading(answer="15 percent of the input tokens.", passages=[1])]})
    question = "How many input tokens does BERT mask?"
    answer(Evidence(question, tools, llm, CancelToken()))
    prompt = llm.calls[0].prompt
    asked = f"Question: {question}"
    assert prompt.startswith(asked) and prompt.endswith(asked)
    assert prompt.index("Passages:") < prompt.rindex(asked)


def test_an_answer_no_passage_states_is_read_again_from_the_sentences_about_the_question(
    tmp_path: Path,
) -> None:
    """The first reading answers what no passage says; the checks reject it, and the same
    passages are read again, each by only its sentences most about the question."""
    root = write_memory(tmp_path / "memory")
    history = " ".join(f"In year {n} the lab moved to building {n + 3}." for n in range(12))
    notes = f"{history} BERT training masks 15 percent of the input tokens. {history}"
    (root / "nlp" / "lab_history.md").write_text(render_memory({"title": "Lab"}, notes))
    invented = Reading(answer="BERT masks 40 percent of the words.", passages=[1])
    right = Reading(answer="15 percent of the input tokens.", passages=[1])
    llm = FakeLLM({Reading: [invented, right]})
    question = "How many of the input tokens does BERT training mask?"
    result = answer(Evidence(question, MemoryTools(root), llm, CancelToken()))
    assert [c.stage for c in llm.calls] == ["read", "read"]
    first, second = llm.calls[0].prompt, llm.calls[1].prompt
    assert "masks 15 percent" in second and len(second) < len(first)
    # the sentences around it, about something else, are shown the first time only
    assert "the lab moved" in first and "the lab moved" not in second
    assert result.answer.startswith("15 percent"), result.trajectory
    assert result.sources == ["nlp/bert_encoder.md"]  # the passage the reading cites
    assert "read again" in result.trajectory


def test_a_second_reading_that_only_swaps_the_value_of_the_first_is_not_taken(
    tools: MemoryTools,
) -> None:
    """ "… is 40 percent" (no passage says it), then "… is 15 percent" from the excerpts:
    the claim was made up and a value found put into it."""
    made_up = Reading(answer="In training BERT hides 40 percent of its vocabulary.", passages=[1])
    swapped = Reading(answer="In training BERT hides 15 percent of its vocabulary.", passages=[1])
    llm = FakeLLM({Reading: [made_up, swapped]})
    result = answer(
        Evidence("How much of its vocabulary does BERT hide?", tools, llm, CancelToken())
    )
    assert len(llm.calls) == 2
    assert not_stated(result) and "hides" not in result.answer, result.trajectory
    assert "the same answer with another value" in result.trajectory
    # nor the same words up to another value, counting something else
    counted = Reading(answer="In training BERT hides 15 percent of the input tokens.", passages=[1])
    llm = FakeLLM({Reading: [made_up, counted]})
    result = answer(
        Evidence("How much of its vocabulary does BERT hide?", tools, llm, CancelToken())
    )
    assert not_stated(result) and "hides" not in result.answer, result.trajectory
    # the same second answer after a first that said something else is read, and holds
    llm = FakeLLM({Reading: [Reading(answer="BERT forgets words.", passages=[1]), swapped]})
    result = answer(
        Evidence("How much of its vocabulary does BERT hide?", tools, llm, CancelToken())
    )
    assert result.answer.startswith("In training BERT hides 15 percent"), result.trajectory


def test_a_failed_second_reading_leaves_the_memory_not_saying(tools: MemoryTools) -> None:
    invented = Reading(answer="BERT masks 40 percent of the words.", passages=[1])
    llm = FakeLLM({Reading: [invented, LLMCallFailed("the server went away")]})
    question = "How many of the input tokens does BERT mask when it is pre-trained?"
    result = answer(Evidence(question, tools, llm, CancelToken()))
    assert len(llm.calls) == 2
    assert not_stated(result) and "40 percent" not in result.answer
    assert "the model gave no usable reply" in result.trajectory
    assert result.files_read  # what was read is still listed


def test_with_no_answer_holding_the_sentences_closest_to_the_question_are_shown(
    tools: MemoryTools,
) -> None:
    """Shown "Reading it, with no copy made, is not copying", a small model answered "yes, it
    counts as copying" twice, and the memory said it did not know: the sentence
    it read is worth showing, under "does not say this clearly", not as an answer. Not when
    the question names something no file writes: then nothing shown is about it."""
    invented = Reading(answer="BERT masks 40 percent of the words.", passages=[1])
    question = "How many of the input tokens does BERT mask when it is pre-trained?"
    result = answer(evidence(tools, question, invented, invented))
    head, first, *_rest = result.answer.split("\n\n")
    assert head == NOT_CLEARLY and first == f"> {BERT} (nlp/bert_encoder.md)", result.answer
    assert result.confidence == FROM_QUOTE and "40 percent" not in result.answer
    assert "nlp/bert_encoder.md" in result.sources and set(result.sources) <= set(result.files_read)
    assert "showed the closest 2 sentences" in result.trajectory
    unknown = "How many of the input tokens does Zorblax mask when it is pre-trained?"
    result = answer(evidence(tools, unknown, invented, invented))
    assert result.answer == NOT_IN_MEMORY and result.sources == []


def test_there_is_no_second_reading_when_the_first_holds_or_finds_nothing(
    tools: MemoryTools,
) -> None:
    question = "How many of the input tokens does BERT mask when it is pre-trained?"
    held = Reading(answer="15 percent of the input tokens.", passages=[1])
    nothing = Reading(answer="", passages=[], found=False)
    for first in (held, nothing):
        llm = FakeLLM({Reading: [first, held]})
        answer(Evidence(question, tools, llm, CancelToken()))
        assert len(llm.calls) == 1, first


def test_an_excerpt_keeps_the_sentences_about_the_question_under_their_passage_s_number() -> None:
    about = "The cache keeps 300 pages by default."
    shown = [
        passage(1, "# Cache\nPages are read from disk. The disk is slow.", "a.md"),
        passage(2, f"Logs rotate weekly.\n{about} Nothing else here.", "b.md"),
        passage(3, "The cache size of the pages can be raised.", "c.md"),
    ]
    cut = passages.excerpts("How many pages does the cache keep by default?", shown, most=2)
    assert [(p.number, p.memory) for p in cut] == [(2, "b.md"), (3, "c.md")]
    assert cut[0].text == about  # its passage's other sentences left out
    assert "# Cache" not in " ".join(p.text for p in cut)  # a heading is never one of them


def test_nothing_stated_is_not_in_the_memory(tools: MemoryTools) -> None:
    nothing = Reading(answer="", passages=[], found=False)
    result = answer(evidence(tools, "When was BERT's encoder retired?", nothing, nothing))
    assert not_stated(result)
    assert result.files_read  # what was read is still listed


def test_the_next_answerer_is_tried_when_one_gives_nothing_that_holds(tools: MemoryTools) -> None:
    question = "What do neural networks and transformer attention models return?"
    third = passages.retrieve(tools, question)[2]
    sentence = passages.units_of(third.text)[0]
    nothing = Reading(answer="", passages=[], found=False)
    found = Reading(answer=sentence, passages=[1])
    result = answer(evidence(tools, question, nothing, found), [Grounded(2), Grounded(4)])
    assert result.sources == [third.memory], result.trajectory
    assert len(result.files_read) > 2  # both reads are listed
    assert "read 2 passages" in result.trajectory


def test_a_conversation_shows_what_the_user_said_dated_never_the_memory_s_answers(
    tmp_path: Path,
) -> None:
    root = write_memory(tmp_path / "memory")
    record = new_record("I moved to Porto last week.", now=datetime(2026, 10, 3, 9, 30, tzinfo=UTC))
    wrong = "You live in Lisbon, according to nlp/bert_encoder.md."  # an answer, mistaken
    record.turns.append(Turn(record.started, "I moved to Porto last week.", wrong))
    path = root / record.path
    path.parent.mkdir(parents=True)
    path.write_text(render(record))
    (shown,) = [
        p
        for p in passages.retrieve(MemoryTools(root), "Where did I move?")
        if p.memory == record.path
    ]
    assert (
        "On Saturday 3 October 2026 at 09:30 UTC the user said: I moved to Porto last week."
        in shown.text
    )
    assert "Lisbon" not in shown.text and "<!--" not in shown.text


def test_identifiers_are_read_as_written() -> None:
    asked = passages.identifiers("Did 7.2 fix CVE-9 or utf8_decode in 2019 on x86_64?")
    assert asked == {"7.2", "cve-9", "utf8_decode", "x86_64"}


def test_a_file_holding_the_identifier_asked_comes_first(tmp_path: Path) -> None:
    root = write_memory(tmp_path / "memory")
    for version, days in (("6.1", 21), ("6.10", 35), ("16.1", 50)):
        note = root / "nlp" / f"release_{version.replace('.', '_')}.md"
        note.write_text(
            f"---\ntitle: Release {version}\n---\nRelease {version} of the BERT encoder keeps "
            f"checkpoints for {days} days. BERT encoder checkpoints are kept, BERT encoder."
        )
    found = passages.retrieve(MemoryTools(root), "How long are checkpoints kept in 6.1?")
    assert found[0].memory == "nlp/release_6_1.md"


def test_a_file_named_for_the_identifier_asked_comes_before_one_mentioning_it(
    tmp_path: Path,
) -> None:
    root = write_memory(tmp_path / "memory")
    notes = {  # the later release mentions the earlier one more often than its own notes do
        "6.1": "Checkpoints are kept for 21 days.",
        "6.2": "Unlike 6.1, checkpoints are kept for 35 days; upgrading from 6.1 keeps 6.1's.",
    }
    for version, said in notes.items():
        note = root / "nlp" / f"release_{version.replace('.', '_')}.md"
        note.write_text(f"---\ntitle: Release {version}\n---\n{said} BERT encoder checkpoints.")
    found = passages.retrieve(MemoryTools(root), "How long are checkpoints kept in 6.1?")
    assert found[0].memory == "nlp/release_6_1.md"


@pytest.mark.parametrize(
    "asked",
    [
        "When did version 2 of the Tarn Charter come out?",
        "When did Tarn Charter version 2 come out?",
        "When did the Tarn Charter 2 come out?",
    ],
)
def test_the_file_named_for_the_version_of_the_name_asked_comes_first(
    tmp_path: Path, asked: str
) -> None:
    """A name's whole number, in any of the ways English writes it, picks the file whose
    name writes that name and number ("2" as "2.0"): the number alone is in every
    look-alike's text, and the later charters say the name more often."""
    root = tmp_path / "memory"
    notes = {
        "tarn_charter_3_0.md": (
            "Tarn Charter 3.0",
            "The Tarn Charter 3.0 came out in 2007. "
            "It replaces the Tarn Charter of 1991; the Tarn Charter "
            "version 2 still binds old members of the charter.",
        ),
        "tarn_lesser_charter_2_1.md": (
            "Tarn Lesser Charter 2.1",
            "The Tarn Lesser Charter 2.1 came out in 1999, after the Tarn Charter.",
        ),
        "tarn_charter_2_0.md": ("Tarn Charter 2.0", "Version 2, June 1991. Members may copy it."),
    }
    for name, (title, body) in notes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"---\ntitle: {title}\n---\n{body}", encoding="utf-8")
    tools = MemoryTools(root)
    searched = list(passages._ranked(tools, passages.searched_for(asked)))
    assert searched[0] != "tarn_charter_2_0.md"  # the search alone ranks a look-alike first
    found = passages.retrieve(tools, asked)
    assert found[0].memory == "tarn_charter_2_0.md"


def test_a_window_sharing_little_of_the_question_is_left_out(tmp_path: Path) -> None:
    """Five places are not filled with notes that share one common word with the question;
    a second note holding most of its words stays (a question about two documents)."""
    root = tmp_path / "memory"
    notes = {
        "quill.md": "Quill keeps unsent exports in a queue. The quill-pending command lists "
        "the unsent exports still waiting in the queue.",
        "quill_sync.md": "Quill sync uploads the unsent exports of the queue every hour.",
        "shell.md": "The shell runs one command for each line of a script.",
        "editor.md": "The editor shows every command in a palette.",
    }
    for name, body in notes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"---\ntitle: {name[:-3]}\n---\n{body}", encoding="utf-8")
    asked = "Which command lists the unsent exports waiting in Quill's queue?"
    found = passages.retrieve(MemoryTools(root), asked)
    assert [p.memory for p in found] == ["quill.md", "quill_sync.md"]
    assert [p.number for p in found] == [1, 2]


def test_readmes_only_fill_places_no_memory_took(tools: MemoryTools) -> None:
    found = passages.retrieve(tools, "transformer attention BERT encoder networks", limit=3)
    assert not any(p.memory.endswith("README.md") for p in found)


def test_a_readme_naming_the_identifier_asked_still_comes_after_the_memories(
    tmp_path: Path,
) -> None:
    root = write_memory(tmp_path / "memory")
    (root / "nlp" / "README.md").write_text("# nlp\nNotes on release 6.1 of the BERT encoder.")
    found = passages.retrieve(MemoryTools(root), "How are BERT encoder checkpoints kept in 6.1?")
    readmes = [i for i, p in enumerate(found) if p.memory.endswith("README.md")]
    assert readmes and len(found) > 1
    assert all(not p.memory.endswith("README.md") for p in found[: readmes[0]])
    assert readmes == list(range(readmes[0], len(found)))  # memories first, READMEs after


def test_an_answer_quoting_the_wrong_sentence_is_supported_by_the_right_one() -> None:
    other = "BERT is a bidirectional transformer encoder."
    shown = passage(1, f"{other} {BERT}")
    draft = Draft(
        "How much is masked?",
        "15 percent of the tokens",
        [],
        [shown],
        [checks.Support(shown, other)],
    )
    finding = checks.AnswerFromQuotes().check(draft)
    assert finding is not None and finding.repaired is not None
    assert not finding.repaired.from_quote
    assert [s.sentence for s in finding.repaired.support] == [BERT]


def test_a_version_the_passage_label_gives_is_not_invented() -> None:
    labelled = Passage(1, "r.md", "Release 7.6 notes", "Release 7.6 notes — Fixes", BERT)
    support = [checks.Support(labelled, BERT)]
    draft = Draft(
        "Which release masks 15 percent?", "Release 7.6 masks 15 percent", [], [], support
    )
    assert checks.AnswerFromQuotes().check(draft) is None


def test_a_date_in_words_is_the_date_in_digits() -> None:
    dated = "Release date: 2021-03-17"
    support = [checks.Support(passage(1, dated), dated)]
    draft = Draft("When was it released?", "On March 17, 2021.", [], [], support)
    assert checks.AnswerFromQuotes().check(draft) is None
    wrong = Draft("When was it released?", "On April 17, 2021.", [], [], support)
    assert checks.AnswerFromQuotes().check(wrong) is not None


def test_a_sentence_of_a_look_alike_does_not_answer_for_the_version_asked() -> None:
    other = Passage(1, "r.md", "Release 7.3 notes", "Release 7.3 notes — Fixes", BERT)
    draft = Draft("How much does 7.2 mask?", "15 percent", [], [], [checks.Support(other, BERT)])
    finding = checks.AboutWhatIsAsked().check(draft)
    assert finding is not None and finding.repaired is None and "7.2" in finding.why
    right = Passage(1, "r.md", "Release 7.2 notes", "Release 7.2 notes — Fixes", BERT)
    draft = Draft(draft.question, draft.answer, [], [], [checks.Support(right, BERT)])
    assert checks.AboutWhatIsAsked().check(draft) is None


def test_an_answer_of_two_documents_is_supported_by_a_sentence_of_each() -> None:
    first = passage(1, "The 7.2 release came out on 2021-03-17.", "a.md")
    second = passage(2, "The 7.3 release came out on 2021-06-02.", "b.md")
    quoted = checks.Support(first, first.text)
    answer_text = "7.2 came out on 2021-03-17 and 7.3 on 2021-06-02."
    draft = Draft("When did both come out?", answer_text, [], [first, second], [quoted])
    finding = checks.AnswerFromQuotes().check(draft)
    assert finding is not None and finding.repaired is not None
    assert not finding.repaired.from_quote
    assert [s.passage.memory for s in finding.repaired.support] == ["a.md", "b.md"]


def test_an_answer_that_is_only_a_value_is_stated_by_the_sentence_giving_it() -> None:
    shown = [
        passage(1, "A parcel is collected within 2 days at the other depot.", "a.md"),
        passage(2, "The main depot collects a parcel within 3 days.", "b.md"),
    ]
    draft = Draft("Within how many days is a parcel collected?", "3 days", [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert [s.passage.memory for s in finding.repaired.support] == ["b.md"]


def test_a_value_the_sentence_gives_is_the_answer_s_content_beside_a_word_of_its_own() -> None:
    """ "up to 40" gives the sentence's value with a word of the model's own: the number
    weighs as much as a word, so the answer holds half its content there."""
    said = "Each locker holds the parcels of one flat (the default limit is 40)."
    shown = [passage(1, said), passage(2, "Lockers are emptied every evening.", "b.md")]
    question = "When no limit is set, how many parcels will a locker hold?"
    draft = Draft(question, "A locker will hold up to 40 parcels when no limit is set.", [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None
    assert [s.sentence for s in finding.repaired.support] == [said]


def test_two_values_of_two_sentences_outweigh_the_answer_s_one_unsaid_word() -> None:
    shown = [
        passage(1, "- Largest parcel accepted: **20 kg**.", "old.md"),
        passage(2, "- Largest parcel accepted: **35 kg**.", "new.md"),
    ]
    question = "What was the largest parcel in the old depot, and what is it in the new one?"
    answer_text = "In the old depot it was 20 kg. In the new one it was raised to 35 kg."
    finding = checks.QuotesInSources().check(Draft(question, answer_text, [], shown))
    assert finding is not None and finding.repaired is not None
    assert [s.passage.memory for s in finding.repaired.support] == ["old.md", "new.md"]


def test_a_value_counting_something_its_sentence_does_not_count_is_not_stated() -> None:
    """ "22 years" where the sentence's 22 is a date's day: the word after the number, what
    it counts, is not said, so the number is no content the sentence gives."""
    shown = [passage(1, "Stated on Tuesday 22 September 2026: Noor bakes bread on Fridays.")]
    finding = checks.QuotesInSources().check(
        Draft("How old is Noor?", "Noor is 22 years old.", [], shown)
    )
    assert finding is not None and finding.repaired is None


def test_a_bare_heading_is_not_the_sentence_an_answer_rests_on() -> None:
    """Under a label giving the version, a section's number heading and its first sentence
    state the answer's value alike: the sentence is the one shown as the source."""
    shown = [
        Passage(n, f"{v}.md", f"Gizmo {v} notes", f"Gizmo {v} notes — Changes", text)
        for n, v, text in [
            (1, "7.4", "## E.2.\n\n- Fix a stale cache entry after a restart."),
            (2, "7.5", "## E.3.\n\n- Fix a second stale cache entry."),
        ]
    ]
    question = "Which releases fixed a stale cache entry?"
    finding = checks.QuotesInSources().check(Draft(question, "Gizmo 7.4 and 7.5", [], shown))
    assert finding is not None and finding.repaired is not None
    said = [s.sentence for s in finding.repaired.support]
    assert said and not any(s.startswith("#") for s in said)


def test_the_question_s_words_in_another_form_are_not_the_answer_s_own() -> None:
    shown = [passage(1, "Volunteers receive $15 for each evening shift at the shelter.")]
    question = "How much does the shelter pay for each evening shift?"
    draft = Draft(question, "The shelter pays $15 for each evening shift.", [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None  # "pays" is the question's


def test_a_name_written_with_its_version_joined_is_named_by_its_parts() -> None:
    shown = Passage(
        1, "t.md", "RTA 2.0", "RTA 2.0 — deposits", "A deposit is returned within six weeks."
    )
    support = [checks.Support(shown, shown.text)]
    draft = Draft("Under RTAv2, when is a deposit returned?", "six weeks", [], [shown], support)
    assert checks.AboutWhatIsAsked().check(draft) is None
    older = Passage(
        1, "t.md", "RTA 1.0", "RTA 1.0 — deposits", "A deposit is returned within six weeks."
    )
    draft = replace(draft, passages=[older], support=[checks.Support(older, older.text)])
    assert checks.AboutWhatIsAsked().check(draft) is not None  # "rta" alone is not "RTAv2"


def test_one_identifier_asked_is_enough_and_names_are_not_asked() -> None:
    notes = Passage(1, "r.md", "Release 7.6 notes", "Release 7.6 notes — Fixes", BERT)
    support = [checks.Support(notes, BERT)]
    contrast = "Unlike 7.2, how much does 7.6 mask for a US team at Pelliton?"
    draft = Draft(contrast, "15 percent", [], [notes], support)
    assert checks.AboutWhatIsAsked().check(draft) is None  # 7.2 is only the contrast
    other = replace(draft, question="How much does 7.2 mask for a US team at Pelliton?")
    assert checks.AboutWhatIsAsked().check(other) is not None


def test_a_version_after_a_name_is_that_names_not_another_documents() -> None:
    """Two documents of a memory give a "2.0" of their own: the answer to a question about
    the Harbor Charter 2.0 does not rest on the Dock Charter 2.0's sentence, though that one
    writes the number asked for. A version after no name asks only for itself."""
    said = "Disputes are settled under the laws of Norway."
    dock = Passage(1, "dock.md", "Dock Charter 2.0", "Dock Charter 2.0 — disputes", said)
    question = "Which country's law governs the Harbor Charter 2.0?"
    draft = Draft(question, "Norway", [], [dock], [checks.Support(dock, said)])
    finding = checks.AboutWhatIsAsked().check(draft)
    assert finding is not None and "harbor charter 2.0" in finding.why
    harbor = replace(
        dock, memory="harbor.md", document="Harbor Charter 2.0", label="Harbor Charter 2.0"
    )
    draft = replace(draft, passages=[harbor], support=[checks.Support(harbor, said)])
    assert checks.AboutWhatIsAsked().check(draft) is None
    unnamed = "Which country's law governs version 2.0?"
    draft = Draft(unnamed, "Norway", [], [dock], [checks.Support(dock, said)])
    assert checks.AboutWhatIsAsked().check(draft) is None


def test_the_names_a_version_qualifies_are_the_capitalized_words_right_before_it() -> None:
    asked = "Under the Harbor Charter 2.0 and in version 3.1, what does DMC 1.2 say?"
    assert passages.qualified(asked) == {
        "2.0": ["charter", "harbor"],
        "3.1": [],
        "1.2": ["dmc"],
    }
    assert passages.qualified("In Zephyrus 4.2, what changed?") == {"4.2": ["zephyrus"]}
    assert passages.qualified("Release 7.2: how much does it mask?") == {"7.2": []}


def test_a_number_right_after_a_name_says_which_of_its_kind_is_asked() -> None:
    """ "Tarn Charter 3" is the Tarn Charter 3.0's (or 3.x's): an answer from its document
    holds, though the question's other version only contrasts; one from the 2.1 document
    does not answer for 3. A day after its month, or a number after a possessive, is no
    such number."""
    said = "Notices may be sent by e-mail."
    older = Passage(1, "t21.md", "Tarn Charter 2.1", "Tarn Charter 2.1 — notices", said)
    newer = Passage(2, "t30.md", "Tarn Charter 3.0", "Tarn Charter 3.0 — notices", said)
    question = "Compared with Tarn Charter 2.1, how may notices be sent under Tarn Charter 3?"
    draft = Draft(question, "by e-mail", [], [older, newer], [checks.Support(newer, said)])
    assert checks.AboutWhatIsAsked().check(draft) is None
    only_three = "How may notices be sent under Tarn Charter 3?"
    wrong = replace(draft, question=only_three, support=[checks.Support(older, said)])
    assert checks.AboutWhatIsAsked().check(wrong) is not None
    assert passages.named_numbers(only_three) == {"3": ["charter", "tarn"]}
    assert passages.named_numbers("What happened on March 7, 2021?") == {}
    assert passages.named_numbers("How did Ann Lee's 2023 survey go?") == {}
    for written in ("under version 3 of the Tarn Charter?", "under Tarn Charter version 3?"):
        assert passages.named_numbers(f"How may notices be sent {written}") == {
            "3": ["charter", "tarn"]
        }
    assert passages.named_numbers("What does version 3 of the manual add?") == {}
    assert passages.named_numbers("What did Anna release 2 weeks ago?") == {}  # a verb
    assert passages.named_numbers("How did Ann's version 2 of the plan go?") == {}
    assert passages.qualified("Is version 3.1 of the Tarn Charter, or 2.0, in force?") == {
        "3.1": ["charter", "tarn"],
        "2.0": [],
    }


def test_a_possessive_is_the_word_it_is_made_of() -> None:
    said = "To let guests in after dark, use the keypad on the side gate (code 4812)."
    shown = [passage(1, said)]
    question = "Which code do the late guests of the hostel type at the side gate?"
    answer = "The late guests of the hostel's side gate type code 4812."
    draft = Draft(question, answer, [], shown)
    finding = checks.QuotesInSources().check(draft)
    assert finding is not None and finding.repaired is not None  # "hostel's" is the question's


def test_a_name_no_file_writes_is_not_in_the_memory(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "rta.md").write_text("---\ntitle: RTA 2.0\n---\nThe RTA version 2 deposit lasts.")
    tools = MemoryTools(root)
    asked = "Under RTAv2, how long does the deposit of Dunmore Lettings last for a US tenant?"
    assert passages.unknown_names(tools, asked) == {"dunmore", "lettings"}  # RTAv2: RTA 2
    shown = passage(1, "The RTA version 2 deposit lasts six weeks.", "rta.md")
    draft = Draft(asked, "six weeks", [], [shown], [checks.Support(shown, shown.text)])
    assert checks.AboutWhatIsAsked().check(draft) is None
    unknown = replace(draft, unknown=frozenset({"dunmore"}))
    finding = checks.AboutWhatIsAsked().check(unknown)
    assert finding is not None and finding.repaired is None and "dunmore" in finding.why


# -- the LLM handed in ----------------------------------------------------------------------


def test_a_workflow_answers_with_the_llm_it_is_handed(tmp_path: Path) -> None:
    root = write_memory(tmp_path / "memory")
    (root / META_FILE).write_text(GamMeta().model_dump_json())  # a memory, built by hand
    fake = FakeLLM({Reading: Reading(answer="15 percent of the input tokens.", passages=[1])})
    asked_for: list[LLMSettings] = []

    def make_llm(settings: LLMSettings) -> FakeLLM:
        asked_for.append(settings)
        return fake

    chat = LLMSettings(base_url="http://chat.invalid/v1", model="chat-model")
    workflow = Workflow(
        gam_dir=root,
        settings=LLMSettings(base_url="http://builder.invalid/v1"),
        chat_settings=chat,
        embeddings=EmbeddingSettings(enabled="off"),
        make_llm=make_llm,
    )
    try:
        result = workflow.request("How many input tokens does BERT mask?")
    finally:
        workflow.close()
    assert BERT in result.answer and result.sources == ["nlp/bert_encoder.md"]
    assert fake.stages() == ["read"] and asked_for == [chat]  # the chat role's LLM, no HTTP


def test_an_answer_copying_its_sentence_does_not_quote_it_again(tools: MemoryTools) -> None:
    """The walkthrough saw every answer followed by itself as a quote: a sentence the
    answer copies is its source, named in the sources, not shown twice."""
    question = "When was BERT released?"
    first = passages.retrieve(tools, question)[0]
    sentence = next(u for u in passages.units_of(first.text) if "2018" in u)
    copied = answer(evidence(tools, question, Reading(answer=sentence, passages=[1])))
    assert copied.answer == sentence and copied.sources == [first.memory]
    shorter = answer(evidence(tools, question, Reading(answer="In 2018.", passages=[1])))
    assert shorter.answer.startswith("In 2018.\n\n> ") and sentence in shorter.answer


def test_the_window_chosen_is_the_same_in_every_process() -> None:
    """Two sentences holding the same weight (0.1 + 0.7 + 0.2 against 1.0) tie in every
    process: a plain sum over a set of words rounds in the set's order, which changes with
    each process's string hashing, so that the passages shown to the model differed from
    one run of the same question to the next."""
    program = (
        "from gam_desktop.engine.answering.passages import best_window\n"
        "text = 'Alder birch cedar. Dogwood grows. ' + 'Filler words here. ' * 40\n"
        "weights = {'alder': 0.1, 'birch': 0.7, 'cedar': 0.2, 'dogwood': 1.0}\n"
        "print(best_window(text, weights, words=3))\n"
    )
    chosen = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for seed in range(8)
    }
    assert len(chosen) == 1 and "Alder birch cedar." in chosen.pop()


def test_how_many_answered_with_no_amount_is_not_taken(tools: MemoryTools) -> None:
    """The memory never gives BERT's layers; a sentence about BERT stated as the answer
    holds against its passage, but gives no amount: the memory does not say."""
    question = "How many layers does the BERT encoder have?"
    beside = Reading(answer="BERT is a bidirectional transformer encoder.", passages=[1])
    result = answer(evidence(tools, question, beside, beside))
    assert not_stated(result)
    assert "gives no amount" in result.trajectory
    counted = Reading(answer="It masks 15 percent of the input tokens.", passages=[1])
    asked = "How much of the input does BERT mask when pre-trained?"
    assert answer(evidence(tools, asked, counted)).answer.startswith("It masks 15 percent")


@pytest.mark.parametrize(
    ("given", "holds"),
    [
        ("The train tickets are for 8 June.", False),
        ("They were booked on June 8th, 2026.", False),
        ("We booked them on 2026-06-08.", False),
        ("They were booked by Anna.", False),
        ("They cost 40 euros.", True),
        ("Three tickets.", True),
        ("A dozen of them.", True),
        ("Twice the usual fare.", True),
        ("Twenty-five of them.", True),
        ("It is free.", True),
        ("All of them.", True),
        ("Up to 2 may be carried on.", True),  # "may" is no month
    ],
)
def test_an_amount_is_a_number_or_a_word_for_one_but_not_a_date(given: str, holds: bool) -> None:
    shown = [passage(1, given)]
    draft = Draft("How much were the train tickets?", given, [], shown)
    assert (checks.AnAmountForHowMuch().check(draft) is None) is holds
    for other in ("When were the train tickets booked?", "Did I say how much they were?"):
        draft = Draft(other, given, [], shown)
        assert checks.AnAmountForHowMuch().check(draft) is None  # no amount is asked
