"""A saved conversation whose front matter a person broke (issue 36, section 2, finding 6).

Its file is there, so "no conversation '<id>'" was wrong; `--conversation last` passed over
it and started a new conversation without a word; gam-chat printed each turn's error, then
"Saved as conversation <id>." although nothing had been saved. Now the error names the file
and what is wrong with it, "last" refuses rather than continue another conversation, and
gam-chat says it saved only what it saved.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from pathlib import Path

import pytest

from gam_desktop.cli import chat_main
from gam_desktop.engine.chats.library import ConversationUnreadable, list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.workflow import Workflow
from tests.clirun import run_cli
from tests.engine.helpers import tree
from tests.repos import git

pytestmark = pytest.mark.timeout(600)

# How a hand edit breaks the front matter, and the words that say what is wrong.
BREAKS: dict[str, tuple[Callable[[str], str], str]] = {
    "a colon in the title": (
        lambda text: text.replace("title: ", "title: Launch: plan ", 1),
        "has a ':' where a value was expected",
    ),
    "not closed": (
        lambda text: text.replace("\n---\n", "\n\n", 1),  # its closing line deleted
        "it is not closed by a line of three dashes",
    ),
    "its id line removed": (
        lambda text: "\n".join(line for line in text.split("\n") if not line.startswith("id:")),
        "its front matter has no id",
    ),
}


@pytest.fixture
def memory(make_workflow, memory_dir: Path) -> Path:
    workflow = make_workflow()
    workflow.add(text="# Launch\n\nThe product launch is planned with the marketing team.\n")
    return memory_dir


def converse(memory: Path, settings, question: str, conversation: str | None = None) -> str:
    """A saved turn (a new conversation without an id); the conversation's id."""
    turn = Workflow(gam_dir=memory, settings=settings).chat(question, conversation)
    assert turn.conversation_id is not None
    return turn.conversation_id


def break_front(memory: Path, conversation_id: str, how: str) -> str:
    """Break the conversation's front matter as `how` says; its path."""
    (info,) = [c for c in list_conversations(memory) if c.id == conversation_id]
    file = memory / info.path
    file.write_text(BREAKS[how][0](file.read_text(encoding="utf-8")), encoding="utf-8")
    return info.path


def ask(memory: Path, base_url: str, *args: str):
    return run_cli(["--gam-dir", str(memory), "-q", *args], base_url, entry="request_main")


@pytest.mark.parametrize("how", list(BREAKS))
def test_a_conversation_that_cannot_be_read_is_named_with_what_is_wrong(
    how: str, memory: Path, settings, llm_server
) -> None:
    said = converse(memory, settings, "What is the launch planned with?")
    path = break_front(memory, said, how)
    before, head = tree(memory), git(memory, "rev-parse", "HEAD")
    out = ask(memory, llm_server.base_url, "--query", "And who plans it?", "--conversation", said)
    assert out.returncode == 1, out.stdout
    assert f"conversation '{said}' is {path}, which cannot be read" in out.stderr
    assert BREAKS[how][1] in out.stderr and "no conversation" not in out.stderr
    assert "Traceback" not in out.stderr
    assert tree(memory) == before and git(memory, "rev-parse", "HEAD") == head  # no save
    with pytest.raises(ConversationUnreadable, match=path):  # the window's path too
        Workflow(gam_dir=memory, settings=settings).chat("And who plans it?", said)


def test_last_refuses_when_the_latest_conversation_cannot_be_read(
    memory: Path, settings, llm_server
) -> None:
    older = converse(memory, settings, "What is the launch planned with?")
    latest = converse(memory, settings, "Who plans the launch?")
    path = break_front(memory, latest, "a colon in the title")  # edited last: the newest file
    before = tree(memory)
    out = ask(memory, llm_server.base_url, "--query", "And when?", "--conversation", "last")
    assert out.returncode == 1, out.stdout
    assert f"the latest conversation is {path}, which cannot be read" in out.stderr
    assert tree(memory) == before  # neither a new conversation nor a turn in the older one
    assert [c.id for c in list_conversations(memory)] == [older]


def test_last_refuses_rather_than_start_anew_when_the_only_one_is_unreadable(
    memory: Path, settings, llm_server
) -> None:
    only = converse(memory, settings, "What is the launch planned with?")
    path = break_front(memory, only, "its id line removed")
    before = tree(memory)
    out = ask(memory, llm_server.base_url, "--query", "And when?", "--conversation", "last")
    assert out.returncode == 1 and path in out.stderr, out.stderr
    assert tree(memory) == before


def test_an_older_unreadable_conversation_does_not_stop_the_latest(memory: Path, settings) -> None:
    """Only an unreadable conversation newer than every readable one stops "last"."""
    older = converse(memory, settings, "What is the launch planned with?")
    break_front(memory, older, "a colon in the title")
    latest = converse(memory, settings, "Who plans the launch?")  # written after the break
    workflow = Workflow(gam_dir=memory, settings=settings)
    last = workflow.last_conversation()
    assert last is not None and last.id == latest


def test_last_without_any_conversation_says_it_starts_one(memory: Path, llm_server) -> None:
    out = ask(memory, llm_server.base_url, "--query", "What is it?", "--conversation", "last")
    assert out.returncode == 0, out.stderr
    assert "No saved conversation yet: starting a new one." in out.stderr
    assert len(list_conversations(memory)) == 1


def test_gam_chat_refuses_an_unreadable_conversation_before_any_question(
    memory: Path, settings, llm_server
) -> None:
    said = converse(memory, settings, "What is the launch planned with?")
    path = break_front(memory, said, "not closed")
    before = tree(memory)
    args = ["--gam-dir", str(memory), "-q", "--conversation", said]
    out = run_cli(args, llm_server.base_url, entry="chat_main")
    assert out.returncode == 1
    assert f"conversation '{said}' is {path}, which cannot be read" in out.stderr
    assert "Saved as conversation" not in out.stderr
    assert tree(memory) == before


def chat_typing(
    memory: Path, conversation: str, questions: list[str], before_each: Callable[[int], None]
) -> int:
    """gam-chat in this process, `questions` typed one after the other (then end of input),
    `before_each(n)` run before the n-th is read."""
    typed = iter(questions)
    count = [0]

    def typing(_prompt: str = "") -> str:
        before_each(count[0])
        count[0] += 1
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "input", typing)
        return chat_main(["--gam-dir", str(memory), "-q", "--no-learn", "--conversation",
                          conversation])  # fmt: skip


@pytest.fixture
def scripted_env(monkeypatch: pytest.MonkeyPatch, llm_server) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "scripted")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def test_gam_chat_never_claims_a_save_that_did_not_happen(
    memory: Path, settings, scripted_env, capsys
) -> None:
    """The conversation's file is broken while the chat runs (in another editor): the turn
    fails, says why and that it was not saved, and the goodbye says nothing was saved."""
    said = converse(memory, settings, "What is the launch planned with?")
    broken: list[str] = []

    def edit(n: int) -> None:
        if n == 0:
            broken.append(break_front(memory, said, "a colon in the title"))

    assert chat_typing(memory, said, ["Who plans it?"], edit) == 0
    err = capsys.readouterr().err
    assert f"{broken[0]}, which cannot be read" in err and "this turn was not saved" in err
    assert "Saved as conversation" not in err and "Nothing was saved." in err
    assert "Who plans it?" not in (memory / broken[0]).read_text()


def test_gam_chat_says_which_turns_were_saved(memory: Path, settings, scripted_env, capsys):
    """The first turn is saved, the file is broken before the second: the goodbye names
    the conversation and says that one turn could not be saved."""
    said = converse(memory, settings, "What is the launch planned with?")

    def edit(n: int) -> None:
        if n == 1:
            break_front(memory, said, "a colon in the title")

    assert chat_typing(memory, said, ["Who plans it?", "And when?"], edit) == 0
    err = capsys.readouterr().err
    assert f"Saved as conversation {said}. (1 turn could not be saved)" in err
    assert Workflow(gam_dir=memory).conversations() == []  # still broken: not rewritten
    texts = [p.read_text() for p in (memory / "conversations").rglob("*.md")]
    assert len(texts) == 1 and "Who plans it?" in texts[0] and "And when?" not in texts[0]


def test_a_turn_from_another_app_still_finds_a_home(memory: Path, settings) -> None:
    """gam-serve's queue saves a turn whose conversation is gone in a new one: an unreadable
    one is treated the same (the turn is never lost), and the broken file is not touched."""
    said = converse(memory, settings, "What is the launch planned with?")
    path = break_front(memory, said, "a colon in the title")
    broken = (memory / path).read_text()
    saved = Workflow(gam_dir=memory, settings=settings).save_turn("Q?", "A.", said)
    assert saved.conversation_id and saved.conversation_id != said
    assert (memory / path).read_text() == broken
    assert [t.question for t in parse((memory / saved.path).read_text()).turns] == ["Q?"]
