"""Recall by time (issue 12): questions name a time ("last week", "in October", "on 3
November"); conversations and facts of that time answer them, with their dates; the
current state prefers what was said last; a fact is cited with its conversation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gam_desktop.engine.answering.checks import CHECKS, Draft
from gam_desktop.engine.answering.mentioned import asks_when_first_said
from gam_desktop.engine.answering.passages import retrieve
from gam_desktop.engine.answering.pipeline import Evidence, answer, check_draft, own_name
from gam_desktop.engine.answering.when import asks_for_current, recency, time_window
from gam_desktop.engine.chats.record import Turn, new_record, render
from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.facts.record import render as render_fact
from gam_desktop.engine.progress import CancelToken
from gam_desktop.engine.retrieval.tools import MemoryTools

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)  # a Sunday
DAY = timedelta(days=1)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "window"),
    [
        ("What did I say yesterday?", (day(2026, 11, 21), day(2026, 11, 22))),
        ("What did I say about the launch last week?", (day(2026, 11, 9), day(2026, 11, 16))),
        ("Anything this week?", (day(2026, 11, 16), day(2026, 11, 23))),
        ("What did we discuss last month?", (day(2026, 10, 1), day(2026, 11, 1))),
        ("What did I say in October?", (day(2026, 10, 1), day(2026, 11, 1))),
        ("What did I say in December?", (day(2025, 12, 1), day(2026, 1, 1))),  # the last one
        ("What did I say on 3 November?", (day(2026, 11, 3), day(2026, 11, 4))),
        ("What did I say on November 3rd, 2025?", (day(2025, 11, 3), day(2025, 11, 4))),
        ("What happened on 2026-02-30?", None),  # no such day
        ("When did I first mention the boat?", None),
        ("What did I say on 9999-12-31?", None),  # beyond the calendar: no crash
        ("What did I say 3000000 days ago?", None),
        ("What did I say on 25 December?", (day(2025, 12, 25), day(2025, 12, 26))),  # past one
        ("What did I say on 29 February?", (day(2024, 2, 29), day(2024, 3, 1))),  # a leap year
    ],
)
def test_the_time_a_question_names(question: str, window) -> None:
    assert time_window(question, NOW) == window


def test_current_state_questions_and_the_recency_weight() -> None:
    assert asks_for_current("Where do I live now?") and asks_for_current("my current job?")
    assert not asks_for_current("Where did I live in 2020?")
    assert recency(NOW, NOW) == pytest.approx(1.0)
    assert recency(NOW - 30 * DAY, NOW) < recency(NOW - DAY, NOW) < 1.0
    assert recency(None, NOW) == pytest.approx(0.8)


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def chat(root: Path, when: datetime, *questions: str):
    record = new_record(questions[0], now=when)
    for i, question in enumerate(questions):
        record.turns.append(Turn(when + i * timedelta(minutes=5), question, "Noted.", [], None))
    write(root, record.path, render(record))
    return record


def fact(root: Path, statement: str, when: datetime, conversation: str, n: int) -> Fact:
    made = Fact(f"f-x-00000{n}", statement, "the user", "home", conversation, 1, when, when)
    write(root, made.home, render_fact(made))
    return made


@pytest.fixture
def personal(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    write(root, "notes/boats.md", "---\ntitle: boats\n---\n\nA note about sailing boats.\n")
    chat(
        root, day(2026, 9, 14) + 9 * 3600 * timedelta(seconds=1), "I am thinking of buying a boat."
    )
    chat(root, day(2026, 11, 10), "The product launch moved to March, I told the team.")
    chat(root, day(2026, 10, 5), "The product launch is set for January.")
    return root


def test_a_question_about_last_week_is_answered_from_last_weeks_conversations(
    personal: Path,
) -> None:
    passages = retrieve(
        MemoryTools(personal), "What did I say about the launch last week?", now=NOW
    )
    assert passages and all(p.memory.startswith("conversations/2026-11/") for p in passages)
    said = "On Tuesday 10 November 2026 at 00:00 UTC the user said: The product launch moved"
    assert said in passages[0].text
    # labelled by its date, not by its title (its first turn, which the window may not hold)
    assert passages[0].document == "a conversation with the user, last on Tuesday 10 November 2026"


def test_when_did_i_first_mention_shows_the_dates(personal: Path) -> None:
    passages = retrieve(MemoryTools(personal), "When did I first mention buying a boat?", now=NOW)
    dated = [p for p in passages if p.memory.startswith("conversations/")]
    said = "On Monday 14 September 2026 at 09:00 UTC the user said: I am thinking of buying a boat."
    assert dated and said in dated[0].text


def test_the_current_state_prefers_the_latest_fact(personal: Path) -> None:
    """Two facts as relevant as each other: the newer one ranks first for "now"."""
    fact(personal, "The user's favourite city is Porto.", NOW - 200 * DAY, "c-old", 1)
    fact(personal, "The user's favourite city is Lisbon.", NOW - 2 * DAY, "c-new", 2)
    tools = MemoryTools(personal)
    now_first = retrieve(tools, "What is my favourite city now?", now=NOW)
    assert "Lisbon" in now_first[0].text and now_first[0].document.startswith("a fact the user")
    assert "Stated on Friday 20 November 2026:" in now_first[0].text  # a date as written


def test_an_answer_from_a_fact_cites_its_conversation(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    workflow = make_workflow()
    workflow.add(text="# Boats\n\nA note about sailing boats and their keels.\n")
    # The conversation shares no word with the question: only the fact leads to it.
    said = chat(memory_dir, NOW - DAY, "Remember: I named her Sea Otter.")
    stated = fact(memory_dir, "The user's boat is called Sea Otter.", NOW - DAY, said.id, 1)
    result = workflow.request("What is my boat called?")
    assert stated.home in result.sources and said.path in result.sources, result.trajectory
    assert "Sea Otter" in result.answer
    cited = next(c for c in result.citations if c.path == stated.home)
    assert cited.source == said.path


def test_what_was_said_on_a_day_needs_no_shared_word(personal: Path) -> None:
    """ "What did I say on 14 September?" shares no word with what was said then, and
    "September" is when, not a name the memory must mention."""
    tools = MemoryTools(personal)
    passages = retrieve(tools, "What did I say on 14 September?", now=NOW)
    assert passages and "I am thinking of buying a boat." in passages[0].text
    assert all(p.memory.startswith("conversations/2026-09/") for p in passages)


def test_what_was_given_the_assistant_on_a_day_is_what_was_said_then(personal: Path) -> None:
    """ "What date did I give you on 5 October?" asks what was said that day, as "tell"
    does (giving, sharing or letting the assistant know is telling it): that day's words,
    not the later ones that changed the date."""
    tools = MemoryTools(personal)
    for question in (
        "On 5 October, what launch date did I give you?",
        "Which launch date did I share with you on 5 October?",
    ):
        passages = retrieve(tools, question, now=NOW)
        assert passages and "set for January" in passages[0].text, question
        assert all(p.memory.startswith("conversations/2026-10/") for p in passages), question


def test_a_month_or_a_weekday_is_no_name_the_memory_lacks(personal: Path) -> None:
    """The answer to "what did I say on 14 September" was thrown away as "the memory never
    names september": what was said is dated by its file (2026-09-14), not by its words."""
    from gam_desktop.engine.answering.passages import unknown_names

    tools = MemoryTools(personal)
    assert unknown_names(tools, "What did I tell you on 14 September about a boat?") == set()
    assert unknown_names(tools, "Did I say on Monday, 14 September, what I'd buy?") == set()
    assert unknown_names(tools, "What did I tell Philippa on 14 September?") == {"philippa"}


def test_a_first_mention_is_answered_by_the_oldest(personal: Path) -> None:
    passages = retrieve(
        MemoryTools(personal), "When did I first mention the product launch?", now=NOW
    )
    said = [p for p in passages if p.memory.startswith("conversations/")]
    assert "5 October 2026" in said[0].text and "set for January" in said[0].text
    assert "10 November 2026" in said[1].text


def test_the_word_first_is_when_not_what_a_first_mention_is_about(personal: Path) -> None:
    """ "When did I first mention Kessel Farm?": a later turn about "the first loads"
    of Kessel Farm matches the question's word "first" too; searched for, it outranked the
    turn that first named them and was answered from."""
    chat(
        personal,
        day(2026, 9, 24),
        "I've been chatting with another hay merchant, Kessel Farm. Confidentially, I'm not happy"
        " with the current one: late twice this month, and the price went up again last week.",
        "The vet visit is on Thursday and I still have to print the records for it.",
        "Noor needs a kit for the school trip, a blue rain jacket and a flask.",
    )
    chat(
        personal,
        day(2026, 10, 15),
        "Kessel Farm's first loads have been great; the first bale was perfect.",
    )
    passages = retrieve(MemoryTools(personal), "When did I first mention Kessel Farm?", now=NOW)
    said = [p for p in passages if p.memory.startswith("conversations/")]
    assert "24 September 2026" in said[0].text and "another hay merchant" in said[0].text


def test_a_first_mention_is_the_oldest_turn_that_names_it_however_long(personal: Path) -> None:
    """ "When did I first tell you about Ada?": the long conversation that named her once
    ranked under a later short one, and under one that said "tell" twice; the oldest that
    writes the name is read first."""
    chat(
        personal,
        day(2026, 9, 17),
        "The stable is busy and the trailer needs new tyres before the winter comes.",
        "We took on a groom! Ada starts on Monday.",
        "The farrier comes on 8 October, and the riding show is on 24 October at ten.",
        "Can you note down the dates I mention, and what each of them costs?",
    )
    chat(personal, day(2026, 10, 9), "Tell them I said hi. Also tell the vet I called.")
    chat(personal, day(2026, 10, 23), "Ada is great with the ponies.")
    passages = retrieve(MemoryTools(personal), "When did I first tell you about Ada?", now=NOW)
    assert "17 September 2026" in passages[0].text and "Ada starts" in passages[0].text


def test_the_persons_own_name_answers_only_a_question_about_it(personal: Path) -> None:
    """The fact naming the person matched "the name of my book club" and "my husband's name"
    by the word "name", and a small model answered with the person's own name."""
    me = Fact("f-me", "The user's name is Wren Oakes.", "the user", "identity", "c-1", 1,
              day(2026, 9, 1), day(2026, 9, 1), kind="identity")  # fmt: skip
    write(personal, me.home, render_fact(me))
    fact(personal, "I read in a book club called the Margin Readers.", day(2026, 9, 2), "c-2", 2)
    tools = MemoryTools(personal)

    def shown(question: str) -> bool:
        return any(p.memory == me.home for p in retrieve(tools, question, now=NOW))

    assert not shown("What is the name of my book club?")
    assert not shown("What's my husband's name?")
    assert shown("What's my name?") and shown("What is my full name?")
    assert shown("Is Oakes my surname?")  # it writes a word of the name


def test_a_time_asked_about_documents_keeps_the_documents(personal: Path) -> None:
    """ "What is the launch planned with today?" is not a question about what was said:
    the notes stay among the passages."""
    chat(personal, NOW - timedelta(hours=1), "I like tea.")
    passages = retrieve(MemoryTools(personal), "What is sailing about today?", now=NOW)
    assert any(p.memory == "notes/boats.md" for p in passages)


def test_what_the_user_said_is_read_in_the_order_of_the_search_with_its_dates(
    tmp_path: Path,
) -> None:
    """The passage that says most about the question comes first, however old; each says
    when it was said, and the reading is told that the last word counts. Put newest first,
    a recent passage about something near the question was read, and answered from, before
    the one that answered it ("How many seats?" answered with the day it is on)."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    told = chat(root, NOW - 20 * DAY, "The Acme workshop has 12 seats.")
    fact(root, "The Acme workshop has 12 seats.", NOW - 20 * DAY, told.id, 1)
    later = chat(root, NOW - DAY, "The Acme workshop is on Friday.")
    fact(root, "The Acme workshop is on Friday.", NOW - DAY, later.id, 2)
    passages = retrieve(MemoryTools(root), "How many seats does the Acme workshop have?", now=NOW)
    assert "12 seats" in passages[0].text
    assert any("on Friday" in p.text for p in passages[1:])
    assert all(p.text.startswith(("Stated on ", "On ")) for p in passages)  # dated
    assert [p.number for p in passages] == list(range(1, len(passages) + 1))


def test_the_reading_is_told_the_day_and_that_the_last_word_counts(personal: Path) -> None:
    from gam_desktop.engine.answering.reading import Reading, read
    from gam_desktop.engine.progress import CancelToken
    from tests.fakes import FakeLLM

    llm = FakeLLM({Reading: {"answer": "March", "passages": [1], "found": True}})
    tools = MemoryTools(personal)
    read(llm, "When is the launch?", retrieve(tools, "product launch", now=NOW), CancelToken())
    read(llm, "What is a keel?", retrieve(tools, "sailing boats", now=NOW)[:1], CancelToken())
    personal_prompt, documents_prompt = (call.messages[0]["content"] for call in llm.asked(Reading))
    assert "what they said last counts" in personal_prompt and "Today is" in personal_prompt
    assert "said last" not in documents_prompt


def test_retrieval_keeps_the_engines_clock(personal: Path, monkeypatch) -> None:
    """Without `now`, "last week" is the engine's clock's (an evaluation sets it)."""
    from gam_desktop.engine.answering import passages as module

    monkeypatch.setattr(module, "utc_now", lambda: NOW)
    passages = retrieve(MemoryTools(personal), "What did I say about the launch last week?")
    assert passages and all(p.memory.startswith("conversations/2026-11/") for p in passages)


def test_a_conversation_is_searched_by_what_its_person_said(tmp_path: Path) -> None:
    """The memory's answers and the turns' metadata (the files each turn read) are not the
    person's words: a question about insurance finds no conversation by them, and grep,
    which reads the files, still finds the answer's words."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    record = new_record("The kiln firing moved.", now=NOW)
    record.turns.append(
        Turn(
            NOW,
            "The kiln firing moved to 3 June.",
            "Your car insurance renewal is on Friday.",
            ["facts/finance/the_car_insurance_renewal.md"],
            None,
        )
    )
    write(root, record.path, render(record))
    tools = MemoryTools(root)
    assert [h.path for h in tools.index.search("kiln firing")] == [record.path]
    assert tools.index.search("car insurance renewal") == []
    assert record.path in tools.grep("car insurance").matched


def test_a_conversations_window_is_the_turns_about_the_question(tmp_path: Path) -> None:
    """The turns beside the one about the question are about something else: only the
    turns about it are shown, in the order said."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(
        root,
        NOW - DAY,
        "Pavel Novak from the garage moved the car's service to 11 March.",
        "Ada is brilliant on the espresso machine, the regulars love her.",
        "I hired a second barista for the espresso machine on Saturdays.",
    )
    (passage,) = retrieve(MemoryTools(root), "Who works the espresso machine?", now=NOW)
    assert "Ada is brilliant" in passage.text and "second barista" in passage.text
    assert "Pavel Novak" not in passage.text


def test_now_in_a_question_says_when_not_what(tmp_path: Path) -> None:
    """ "How much are the cinnamon buns now?": the turn that changed the price, not every
    short fact that says "now" about something else."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(
        root,
        NOW - 20 * DAY,
        "We opened a second kiosk at the station.",
        "I'm putting the cinnamon buns up to 7 euros for two from 1 May.",
        "The station kiosk closes at four on Sundays.",
    )
    for n, statement in enumerate(("The garage visit is now on Friday.", "Noor is now eight."), 1):
        fact(root, statement, NOW - DAY, "c-x", n)
    passages = retrieve(MemoryTools(root), "How much are the cinnamon buns now?", now=NOW)
    assert "7 euros" in passages[0].text, [p.text for p in passages]


def test_a_fact_and_the_turn_it_came_from_take_one_place(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(root, NOW - DAY, "The boiler check is on 26 March, no wait, 16 March.")
    fact(root, "The boiler check is on 16 March.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "When is the boiler check?", now=NOW)
    # the fact: the person's correction applied
    assert len(passages) == 1 and passages[0].memory.startswith("facts/")


def test_a_turn_that_says_much_more_than_its_fact_keeps_its_place(tmp_path: Path) -> None:
    """ "Why did I stop the Thursday quiz?": the fact says that, only the turn says why;
    one place for both left the reason out and the answer said "because I stopped"."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(
        root,
        NOW - DAY,
        "The Thursday quiz at the Anchor: that's no longer true, I've stopped doing it. Too"
        " late, and the fee doubled.",
    )
    # (the fact holds more than half the turn's words: the reason is one sentence of its own)
    fact(root, "The Thursday quiz at the Anchor: I've stopped doing it.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "Why did I stop the Thursday quiz?", now=NOW)
    assert len(passages) == 2 and any("fee doubled" in p.text for p in passages)


def test_what_no_longer_holds_is_left_out_of_a_question_about_what_holds(tmp_path: Path) -> None:
    """The turn that booked a trip for 45 guests, whose fact the change to 60 replaced,
    and the person's own question about 45 guests: read beside the change, a small model
    answered 45. Both are still there for a question about what was said, and when."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    booked = chat(
        root,
        NOW - 20 * DAY,
        "We got booked to run a sailing trip for Acme on 9 September, for 45 guests.",
        "How many life jackets should I bring for a trip of 45 guests?",
        "My son starts at the new school on Monday.",
    )
    changed = chat(root, NOW - 10 * DAY, "Acme changed their booking: 60 guests, same date.")
    old = Fact("f-x-000001", "We got booked to run a sailing trip for Acme on 9 September, for"
               " 45 guests.", "the user", "home", booked.id, 1, NOW - 20 * DAY, NOW - 10 * DAY,
               replaced_by="f-x-000002", deleted=NOW - 10 * DAY, ended="replaced")  # fmt: skip
    write(root, old.tombstone, render_fact(old))
    fact(root, "Acme changed their booking: 60 guests, same date.", NOW - 10 * DAY, changed.id, 2)
    tools = MemoryTools(root)
    passages = retrieve(tools, "How many guests is the Acme trip for?", now=NOW)
    assert passages and not any("45" in p.text for p in passages)
    # (nor the rest of that conversation, which says nothing the question asks)
    assert all(p.memory != booked.path for p in passages)
    passages = retrieve(tools, "What did I say about the Acme trip?", now=NOW)
    assert any("for 45 guests" in p.text for p in passages)


def test_a_broken_tombstone_takes_no_turn_away(tmp_path: Path) -> None:
    """Tombstones are files a person or another program may break: one whose front matter
    cannot be read, one without its turn, one that is not text. None names a turn, so the
    turns stay and the question is answered."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(root, NOW - DAY, "The Acme trip is for 60 guests.")
    write(root, "facts/.deleted/work/broken.md", "---\nid: [unclosed\nturn: 1\n---\nx\n")
    write(
        root,
        "facts/.deleted/work/no_turn.md",
        f"---\nid: f-1\nsource_conversation: {said.id}\n---\nx\n",
    )
    (root / "facts/.deleted/work/binary.md").write_bytes(b"\xff\xfe\x00garbage")
    passages = retrieve(MemoryTools(root), "How many guests is the Acme trip for?", now=NOW)
    assert any("60 guests" in p.text for p in passages)


def test_a_fact_restating_one_turn_of_a_window_takes_the_turns_place(tmp_path: Path) -> None:
    """A window of two turns (the second matched "guests") and the fact learned from its
    first: one place, not the same words twice among five."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(
        root,
        NOW - DAY,
        "The Acme trip is on Friday; we're packing 120 sandwiches.",
        "I've started sailing lessons on Mondays, so I can talk knots with the guests.",
    )
    fact(root, "The Acme trip is on Friday; we're packing 120 sandwiches.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "How many guests is the Acme trip for?", now=NOW)
    assert sum("120 sandwiches" in p.text for p in passages) == 1


def test_a_fact_restating_one_turn_leaves_the_windows_other_turns(tmp_path: Path) -> None:
    """A day's conversation: the turn that moved an appointment, then one a fact of that day
    restates. "What did I say on that day": the fact took the whole window's place, and the
    turn asked about was shown nowhere (answered "the memory does not say")."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    day = NOW - 10 * DAY
    said = chat(
        root,
        day,
        "Bad news: the garage moved the car's service from 14 May to 21 May, same time.",
        "That's a pity, because Ines will be visiting then and wanted the car.",
    )
    fact(root, "That's a pity, because Ines will be visiting then and wanted the car.", day,
         said.id, 2)  # fmt: skip
    question = f"On {day:%d %B}, what date did I say the car's service had been moved to?"
    passages = retrieve(MemoryTools(root), question, now=NOW)
    assert any("to 21 May" in p.text for p in passages), [p.text for p in passages]
    assert sum("Ines will be visiting" in p.text for p in passages) == 1


def test_what_the_person_asked_is_no_passage_of_what_they_told(tmp_path: Path) -> None:
    """ "Which two bakeries have I told you about?": a question the person asked weeks ago
    ("Which bakery delivers my bread again?") matched every word and took a place among
    five, which the turn naming the second bakery needed. "When did I first mention…"
    still counts a question that mentioned it."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(root, NOW - 40 * DAY, "My bread comes from a bakery called Kornhus, on Mondays.")
    chat(root, NOW - 30 * DAY, "Which bakery delivers my bread again?")
    chat(root, NOW - 20 * DAY, "I've switched bakeries: Solbröd bakes my bread now.")
    for n in range(4):  # other things said about bread and bakeries, to fill five places
        chat(root, NOW - (10 - n) * DAY, f"The bread order for the bakery stall is {n + 2} loaves.")
    question = "Which two bakeries have I told you about?"
    passages = retrieve(MemoryTools(root), question, now=NOW)
    assert not any("delivers my bread again" in p.text for p in passages)
    assert any("Kornhus" in p.text for p in passages) and any("Solbröd" in p.text for p in passages)
    asked_first = "When did I first ask about which bakery delivers?"
    first = retrieve(MemoryTools(root), asked_first, now=NOW)
    assert any("delivers my bread again" in p.text for p in first)


def test_a_recent_passage_about_something_else_is_not_read_first(tmp_path: Path) -> None:
    """A stray recent hit that shares a word of the question stays behind what is about it."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(root, NOW - 30 * DAY, "I go fencing on Tuesdays at a club called Riposte.")
    chat(root, NOW - 20 * DAY, "I've given up fencing for good after the shoulder.")
    chat(root, NOW - 25 * DAY, "We go to the cinema a lot.", "Ana and I go swimming.")
    chat(root, NOW - DAY, "I go to the library on Tuesdays.")  # "go", not fencing
    passages = retrieve(MemoryTools(root), "Do I go fencing?", now=NOW)
    assert {"given up fencing", "go fencing on Tuesdays"} <= {
        phrase
        for p in passages[:2]
        for phrase in ("given up fencing", "go fencing on Tuesdays")
        if phrase in p.text
    }
    assert "library" not in passages[0].text and "library" not in passages[1].text


def test_a_tombstone_rewritten_or_removed_is_read_again(tmp_path: Path) -> None:
    """Tombstones' turns are kept between questions, by each file's version: one rewritten
    by another program names its new turn, and one removed names none."""
    from gam_desktop.engine.answering.recall import superseded

    root = tmp_path / "memory"
    tomb = root / "facts/.deleted/work/old.md"
    write(
        root,
        "facts/.deleted/work/old.md",
        "---\nid: f-1\nsource_conversation: c-1\nturn: 1\n---\nx\n",
    )
    assert superseded(root, []) == {("c-1", 1)}
    assert superseded(root, []) == {("c-1", 1)}  # (the second time from what was kept)
    tomb.write_text("---\nid: f-1\nsource_conversation: c-1\nturn: 12\n---\nx\n", encoding="utf-8")
    assert superseded(root, []) == {("c-1", 12)}
    tomb.unlink()
    assert superseded(root, []) == set()


def test_a_tombstone_removed_between_listing_and_reading_names_no_turn(tmp_path: Path) -> None:
    """Another program may delete a tombstone after the folder was listed: it names no
    turn, and the question is still answered."""
    from gam_desktop.engine.answering.recall import _turn_of_file

    gone = tmp_path / "facts/.deleted/work/gone.md"
    assert _turn_of_file(str(gone), 1, 10) is None


def test_what_was_said_is_kept_beside_a_document_holding_more_of_the_question(
    tmp_path: Path,
) -> None:
    """A document may share most words of a question and what the person said only one:
    a window sharing little is left out for documents, never for what was said."""
    root = tmp_path / "memory"
    write(root, "photos/harbour.md", "---\ntitle: harbour\n---\n\nThe harbour photo shows a "
          "sailing dinghy at the pier, taken at dawn from the harbour wall.\n")  # fmt: skip
    said = fact(root, "My dinghy is red.", day(2026, 11, 2), "conversations/x.md", 1)
    asked = "What colour is the sailing dinghy in the harbour photo at the pier?"
    passages = retrieve(MemoryTools(root), asked, now=NOW)
    assert said.home in [p.memory for p in passages]


class NoModel:
    """An LLM no answer may call."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the model was called ({name})")


def test_when_a_thing_was_first_mentioned_is_the_oldest_turn_naming_it(personal: Path) -> None:
    """ "When did I first tell you about Ada?" is answered from the dates, with no call:
    the oldest turn that names her, quoted with its date; not a later turn whose words say
    "first", nor one that asks about her."""
    chat(personal, day(2026, 9, 17), "The trailer needs tyres.", "We took on a groom! Ada starts.")
    chat(personal, day(2026, 10, 9), "The first bale was perfect.", "When does Ada work?")
    evidence = Evidence(
        "When did I first tell you about Ada?", MemoryTools(personal), NoModel(), CancelToken()
    )
    result = answer(evidence)
    assert result.answer.startswith("You first mentioned it on Thursday 17 September 2026.")
    assert "> Ada starts." in result.answer, result.answer
    assert result.sources == [p for p in result.files_read if p.startswith("conversations/2026-09")]
    assert "the oldest of them naming it: Thursday 17 September 2026" in result.trajectory


def test_a_first_mention_no_turn_names_is_read_from_the_same_passages(
    personal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When no turn names what is asked about, the reading answers, from the passages
    already found: the memory is searched once per question, not once per answerer."""
    from gam_desktop.engine.answering import passages
    from gam_desktop.engine.answering.reading import Reading
    from tests.fakes import FakeLLM

    chat(personal, day(2026, 9, 17), "The trailer needs tyres.")
    searches: list[str] = []
    ranked = passages._ranked

    def counted(tools: MemoryTools, searched: str):
        searches.append(searched)
        return ranked(tools, searched)

    monkeypatch.setattr(passages, "_ranked", counted)
    llm = FakeLLM({Reading: {"answer": "", "passages": [], "found": False}})
    question = "When did I first tell you about the trailer brakes?"
    result = answer(Evidence(question, MemoryTools(personal), llm, CancelToken()))
    assert len(llm.asked(Reading)) == 1
    assert len(searches) == 1, searches
    assert result.files_read


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("When did I first tell you about Ada?", True),
        ("When have I first mentioned the trailer?", True),
        ("When I first told you about the show, what date was it set for?", False),
        ("When does Ada start?", False),  # not about what was said
        ("What did I first tell you about Ada?", False),  # what, not when
    ],
)
def test_what_asks_when_something_was_first_said(question: str, asks: bool) -> None:
    assert asks_when_first_said(question) is asks


def test_the_persons_own_name_never_answers_for_another_person(personal: Path) -> None:
    """Shown the first turn ("Hi, I'm Ada Quill."), a small model named the person as the
    choir's accompanist it was never told of: an answer giving a word of the person's own
    name, to a question that neither asks it nor writes it, is rejected."""
    chat(personal, day(2026, 9, 1), "Hi, I'm Ada Quill. I sing in a choir on Thursdays.")
    identity = Fact("f-x-000009", "The user's name is Ada Quill.", "the user", "identity")
    identity.kind = "identity"
    write(personal, identity.home, render_fact(identity))
    own = own_name(MemoryTools(personal))
    assert own == {"Ada", "Quill"}
    passages = retrieve(MemoryTools(personal), "Who is the choir's accompanist?", now=NOW)

    def checked(question: str, answer: str):
        draft = Draft(question, answer, [], passages, cited=(1,), own_name=own)
        return check_draft(draft, CHECKS)

    assert checked("Who is the choir's accompanist?", "The accompanist is Ada Quill.") is None
    assert checked("What's my name?", "Your name is Ada Quill.") is not None
    assert checked("When does Ada's choir sing?", "Ada's choir sings on Thursdays.") is not None
    assert checked("When does the choir sing?", "The choir sings on Thursdays.") is not None


def test_whether_something_still_holds_rests_on_what_was_said_of_it_last(personal: Path) -> None:
    """ "Are Noor and I still going to Ostrava?" "No.": the model cited the turn that
    planned the trip; the answer rests on the later one that names Noor and Ostrava and
    calls it off, not on a still later one about Noor alone."""
    chat(personal, day(2026, 2, 16), "Noor and I are planning a train trip to Ostrava in May.")
    chat(personal, day(2026, 3, 9), "Noor and I changed our plans: no Ostrava after all.")
    chat(personal, day(2026, 3, 20), "Noor got a new bike for the trip to the coast.")
    question = "Are Noor and I still going to Ostrava in May?"
    passages = retrieve(MemoryTools(personal), question, now=NOW)
    planned = next(p.number for p in passages if "planning a train trip" in p.text)
    draft = Draft(question, "No.", [], passages, cited=(planned,))
    held = check_draft(draft, CHECKS)
    assert held is not None
    assert [s.sentence for s in held.support] == [
        "On Monday 9 March 2026 at 00:00 UTC the user said: Noor and I changed our plans: no"
        " Ostrava after all."
    ]
    asked_then = Draft("Were Noor and I going to Ostrava?", "Yes.", [], passages, cited=(planned,))
    (then,) = check_draft(asked_then, CHECKS).support  # not about now: the cited one
    assert "planning a train trip" in then.sentence
