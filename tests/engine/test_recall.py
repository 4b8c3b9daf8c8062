"""Recall by time (issue 12): questions name a time ("last week", "in October", "on 3
November"); conversations and facts of that time answer them, with their dates; the
current state prefers what was said last; a fact is cited with its conversation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gam_desktop.engine.answering.passages import retrieve
from gam_desktop.engine.answering.when import asks_for_current, recency, time_window
from gam_desktop.engine.chats.record import Turn, new_record, render
from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.facts.record import render as render_fact
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


def test_a_month_or_a_weekday_is_no_name_the_memory_lacks(personal: Path) -> None:
    """The answer to "what did I say on 14 September" was thrown away as "the memory never
    names september": what was said is dated by its file (2026-09-14), not by its words."""
    from gam_desktop.engine.answering.passages import unknown_names

    tools = MemoryTools(personal)
    assert unknown_names(tools, "What did I tell you on 14 September about a boat?") == set()
    assert unknown_names(tools, "Did I say on Monday, 14 September, what I'd buy?") == set()
    assert unknown_names(tools, "What did I tell Marguerite on 14 September?") == {"marguerite"}


def test_a_first_mention_is_answered_by_the_oldest(personal: Path) -> None:
    passages = retrieve(
        MemoryTools(personal), "When did I first mention the product launch?", now=NOW
    )
    said = [p for p in passages if p.memory.startswith("conversations/")]
    assert "5 October 2026" in said[0].text and "set for January" in said[0].text
    assert "10 November 2026" in said[1].text


def test_the_word_first_is_when_not_what_a_first_mention_is_about(personal: Path) -> None:
    """ "When did I first mention Oro Mills?": a later turn about "the first deliveries"
    of Oro Mills matches the question's word "first" too; searched for, it outranked the
    turn that first named them and was answered from."""
    chat(
        personal,
        day(2026, 9, 22),
        "I've been talking to another supplier, Oro Mills. Confidentially, I'm not happy with"
        " the current one: late twice this month, and the price went up again last week.",
        "The bank meeting is on Thursday and I still have to print the accounts for it.",
        "Elin needs a costume for the school play, a yellow raincoat and a captain's hat.",
    )
    chat(
        personal,
        day(2026, 10, 13),
        "Oro Mills' first deliveries have been great; the first batch was perfect.",
    )
    passages = retrieve(MemoryTools(personal), "When did I first mention Oro Mills?", now=NOW)
    said = [p for p in passages if p.memory.startswith("conversations/")]
    assert "22 September 2026" in said[0].text and "another supplier" in said[0].text


def test_a_first_mention_is_the_oldest_turn_that_names_it_however_long(personal: Path) -> None:
    """ "When did I first tell you about Ada?": the long conversation that named her once
    ranked under a later short one, and under one that said "tell" twice; the oldest that
    writes the name is read first."""
    chat(
        personal,
        day(2026, 9, 14),
        "The market is busy and the van needs new tyres before the winter comes.",
        "I've hired someone! Ada starts on Friday.",
        "The inspection is on 12 October, and the school play on 15 October at six.",
        "Can you keep a list of the dates I give you, and the prices of everything?",
    )
    chat(personal, day(2026, 10, 6), "Tell them I said hi. Also tell the bank I called.")
    chat(personal, day(2026, 10, 20), "Ada is brilliant.")
    passages = retrieve(MemoryTools(personal), "When did I first tell you about Ada?", now=NOW)
    assert "14 September 2026" in passages[0].text and "Ada starts" in passages[0].text


def test_the_persons_own_name_answers_only_a_question_about_it(personal: Path) -> None:
    """The fact naming the person matched "the name of my choir" and "my husband's name"
    by the word "name", and a small model answered with the person's own name."""
    me = Fact("f-me", "The user's name is Wren Oakes.", "the user", "identity", "c-1", 1,
              day(2026, 9, 1), day(2026, 9, 1), kind="identity")  # fmt: skip
    write(personal, me.home, render_fact(me))
    fact(personal, "I sing in a choir called the Harbour Voices.", day(2026, 9, 2), "c-2", 2)
    tools = MemoryTools(personal)

    def shown(question: str) -> bool:
        return any(p.memory == me.home for p in retrieve(tools, question, now=NOW))

    assert not shown("What is the name of my choir?")
    assert not shown("What's my husband's name?")
    assert shown("What's my name?") and shown("What is my full name?")
    assert shown("Is Oakes my surname?")  # it writes a word of the name


def test_a_time_asked_about_documents_keeps_the_documents(personal: Path) -> None:
    """ "What is the launch planned with today?" is not a question about what was said:
    the notes stay among the passages."""
    chat(personal, NOW - timedelta(hours=1), "I like tea.")
    passages = retrieve(MemoryTools(personal), "What is sailing about today?", now=NOW)
    assert any(p.memory == "notes/boats.md" for p in passages)


def test_what_the_user_said_last_is_read_first(personal: Path) -> None:
    """A small model answers from the first passage that fits: the launch's latest date
    comes before the one it replaced, though the question asks for no time."""
    passages = retrieve(MemoryTools(personal), "When is the product launch?", now=NOW)
    said = [p for p in passages if p.said is not None]
    assert [p.said for p in said] == sorted((p.said for p in said), reverse=True)
    assert "moved to March" in said[0].text and [p.number for p in passages] == list(
        range(1, len(passages) + 1)
    )


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
    person's words: a question about a loan finds no conversation by them, and grep, which
    reads the files, still finds the answer's words."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    record = new_record("The recording day moved.", now=NOW)
    record.turns.append(
        Turn(
            NOW,
            "The recording day moved to 2 April.",
            "Your bank loan meeting is on Friday.",
            ["facts/finance/the_bank_loan_meeting.md"],
            None,
        )
    )
    write(root, record.path, render(record))
    tools = MemoryTools(root)
    assert [h.path for h in tools.index.search("recording day")] == [record.path]
    assert tools.index.search("bank loan meeting") == []
    assert record.path in tools.grep("bank loan").matched


def test_a_conversations_window_is_the_turns_about_the_question(tmp_path: Path) -> None:
    """The turns beside the one about the question are about something else: only the
    turns about it are shown, in the order said."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(
        root,
        NOW - DAY,
        "Johan Berg from the bank moved the loan meeting to 26 November.",
        "Eli is brilliant on the plancha, the customers love him.",
        "I hired a second cook for the plancha on Saturdays.",
    )
    (passage,) = retrieve(MemoryTools(root), "Who works the plancha?", now=NOW)
    assert "Eli is brilliant" in passage.text and "second cook" in passage.text
    assert "Johan Berg" not in passage.text


def test_now_in_a_question_says_when_not_what(tmp_path: Path) -> None:
    """ "How much are the tacos now?": the turn that changed the price, not every short fact
    that says "now" about something else."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(
        root,
        NOW - 20 * DAY,
        "We opened a second stall at the harbour market.",
        "I'm putting the tacos up to 105 kronor for two from 1 October.",
        "The harbour market closes at four on Sundays.",
    )
    for n, statement in enumerate(("The bank meeting is now on Friday.", "Elin is now ten."), 1):
        fact(root, statement, NOW - DAY, "c-x", n)
    passages = retrieve(MemoryTools(root), "How much are the tacos now?", now=NOW)
    assert "105 kronor" in passages[0].text, [p.text for p in passages]


def test_a_fact_and_the_turn_it_came_from_take_one_place(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(root, NOW - DAY, "The inspection is on 21 October, no wait, 12 October.")
    fact(root, "The inspection is on 12 October.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "When is the inspection?", now=NOW)
    # the fact: the person's correction applied
    assert len(passages) == 1 and passages[0].memory.startswith("facts/")


def test_a_turn_that_says_much_more_than_its_fact_keeps_its_place(tmp_path: Path) -> None:
    """ "Why did I stop the Friday market?": the fact says that, only the turn says why;
    one place for both left the reason out and the answer said "because I stopped"."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(
        root,
        NOW - DAY,
        "The Friday market by the river: that's no longer true, I've stopped doing it. Too"
        " tiring, and the fee doubled.",
    )
    # (the fact holds more than half the turn's words: the reason is one sentence of its own)
    fact(root, "The Friday market by the river: I've stopped doing it.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "Why did I stop the Friday market?", now=NOW)
    assert len(passages) == 2 and any("fee doubled" in p.text for p in passages)


def test_what_no_longer_holds_is_left_out_of_a_question_about_what_holds(tmp_path: Path) -> None:
    """The turn that booked a lunch for 80 people, whose fact the change to 100 replaced,
    and the person's own question about 80 people: read beside the change, a small model
    answered 80. Both are still there for a question about what was said, and when."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    booked = chat(
        root,
        NOW - 20 * DAY,
        "We got booked to cater a lunch for Acme on 6 November, for 80 people.",
        "How many tacos should I plan for a lunch of 80 people?",
        "My daughter starts at the new school on Monday.",
    )
    changed = chat(root, NOW - 10 * DAY, "Acme changed their order: 100 people, same date.")
    old = Fact("f-x-000001", "We got booked to cater a lunch for Acme on 6 November, for 80"
               " people.", "the user", "home", booked.id, 1, NOW - 20 * DAY, NOW - 10 * DAY,
               replaced_by="f-x-000002", deleted=NOW - 10 * DAY, ended="replaced")  # fmt: skip
    write(root, old.tombstone, render_fact(old))
    fact(root, "Acme changed their order: 100 people, same date.", NOW - 10 * DAY, changed.id, 2)
    tools = MemoryTools(root)
    passages = retrieve(tools, "How many people is the Acme lunch for?", now=NOW)
    assert passages and not any("80" in p.text for p in passages)
    # (nor the rest of that conversation, which says nothing the question asks)
    assert all(p.memory != booked.path for p in passages)
    passages = retrieve(tools, "What did I say about the Acme lunch?", now=NOW)
    assert any("for 80 people" in p.text for p in passages)


def test_a_broken_tombstone_takes_no_turn_away(tmp_path: Path) -> None:
    """Tombstones are files a person or another program may break: one whose front matter
    cannot be read, one without its turn, one that is not text. None names a turn, so the
    turns stay and the question is answered."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(root, NOW - DAY, "The Acme lunch is for 60 people.")
    write(root, "facts/.deleted/work/broken.md", "---\nid: [unclosed\nturn: 1\n---\nx\n")
    write(
        root,
        "facts/.deleted/work/no_turn.md",
        f"---\nid: f-1\nsource_conversation: {said.id}\n---\nx\n",
    )
    (root / "facts/.deleted/work/binary.md").write_bytes(b"\xff\xfe\x00garbage")
    passages = retrieve(MemoryTools(root), "How many people is the Acme lunch for?", now=NOW)
    assert any("60 people" in p.text for p in passages)


def test_a_fact_restating_one_turn_of_a_window_takes_the_turns_place(tmp_path: Path) -> None:
    """A window of two turns (the second matched "people") and the fact learned from its
    first: one place, not the same words twice among five."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    said = chat(
        root,
        NOW - DAY,
        "The Acme lunch is on Friday; we're prepping 300 tortillas.",
        "I've started Spanish lessons on Mondays, so I can chat with the Oro people.",
    )
    fact(root, "The Acme lunch is on Friday; we're prepping 300 tortillas.", NOW - DAY, said.id, 1)
    passages = retrieve(MemoryTools(root), "How many people is the Acme lunch for?", now=NOW)
    assert sum("300 tortillas" in p.text for p in passages) == 1


def test_a_recent_passage_about_something_else_is_not_read_first(tmp_path: Path) -> None:
    """Newest first among what is about the question; a stray recent hit stays behind."""
    root = tmp_path / "memory"
    write(root, "README.md", "# Memory\n")
    chat(root, NOW - 30 * DAY, "I go bouldering on Tuesdays at a gym called Crux.")
    chat(root, NOW - 20 * DAY, "I've given up bouldering for good after the wrist.")
    chat(root, NOW - 25 * DAY, "We go to the cinema a lot.", "Ana and I go swimming.")
    chat(root, NOW - DAY, "I go to the market on Tuesdays.")  # "go", not bouldering
    passages = retrieve(MemoryTools(root), "Do I go bouldering?", now=NOW)
    assert "given up bouldering" in passages[0].text
    assert "market" not in passages[0].text and "market" not in passages[1].text


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
