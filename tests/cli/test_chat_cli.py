"""gam-request --conversation, gam-chat and gam-facts (issue 12), each in its own process
against the scripted server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.facts.record import read_facts
from tests.clirun import cli_command, run_cli

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def memory(tmp_path: Path, llm_server) -> Path:
    root = tmp_path / "memory"
    text = "# Launch\n\nThe product launch is planned with the marketing team.\n"
    out = run_cli(["--gam-dir", str(root), "--text", text, "-q"], llm_server.base_url)
    assert out.returncode == 0, out.stderr
    return root


def ask(memory: Path, base_url: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(["--gam-dir", str(memory), "-q", *args], base_url, entry="request_main")


def facts(memory: Path, base_url: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(["--gam-dir", str(memory), *args], base_url, entry="facts_main")


def test_request_in_a_conversation_saves_it_learns_and_continues(memory: Path, llm_server) -> None:
    url = llm_server.base_url
    first = ask(memory, url, "--query", "I live in Porto. What is the launch planned with?",
                "--conversation", "new", "--json")  # fmt: skip
    assert first.returncode == 0, first.stderr
    said = json.loads(first.stdout)
    assert said["conversation_id"] and said["turn"] == 1 and said["learned"] == "Learned 1 fact"
    again = ask(memory, url, "--query", "And who plans it?", "--conversation", "last")
    assert again.returncode == 0, again.stderr
    assert f"Conversation: {said['conversation_id']}" in again.stdout
    (info,) = list_conversations(memory)
    assert info.id == said["conversation_id"] and info.turns == 2
    assert [f.statement for f in read_facts(memory)] == ["The user lives in Porto."]
    plain = ask(memory, url, "--query", "What is the launch planned with?", "--json")
    assert "conversation_id" not in json.loads(plain.stdout)  # no --conversation: not saved
    assert len(list_conversations(memory)) == 1


def test_an_unknown_conversation_is_a_clear_error(memory: Path, llm_server) -> None:
    out = ask(memory, llm_server.base_url, "--query", "Hi?", "--conversation", "nope")
    assert out.returncode == 1 and "no conversation 'nope'" in out.stderr
    assert "Traceback" not in out.stderr


def test_gam_chat_is_a_loop_that_saves_every_turn(memory: Path, llm_server) -> None:
    command = cli_command("chat_main", "--gam-dir", str(memory), "-q")
    env = {"OPENAI_BASE_URL": llm_server.base_url, "OPENAI_MODEL": "scripted",
           "OPENAI_API_KEY": "test-key", "PATH": "/usr/bin:/bin"}  # fmt: skip
    typed = "My sister is Anne.\nWhat is the launch planned with?\n/quit\n"
    out = subprocess.run(command, input=typed, env=env, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Learned 1 fact:\n  + The user's sister is Anne." in out.stdout
    (info,) = list_conversations(memory)
    record = parse((memory / info.path).read_text())
    assert [t.question for t in record.turns] == [
        "My sister is Anne.",
        "What is the launch planned with?",
    ]
    assert f"Saved as conversation {info.id}." in out.stderr


def test_gam_facts_lists_shows_and_forgets(memory: Path, llm_server) -> None:
    url = llm_server.base_url
    assert "No facts yet" in facts(memory, url, "list").stdout
    ask(memory, url, "--query", "I work at Acme. Hi?", "--conversation", "new")
    (listed,) = json.loads(facts(memory, url, "list", "--json").stdout)
    assert listed["statement"] == "The user works at Acme." and listed["source_conversation"]
    shown = facts(memory, url, "show", listed["id"][:12])
    assert "statement: The user works at Acme." in shown.stdout
    gone = facts(memory, url, "forget", listed["id"])
    assert gone.returncode == 0 and "Forgot: The user works at Acme." in gone.stdout
    assert json.loads(facts(memory, url, "list", "--json").stdout) == []
    (tomb,) = json.loads(facts(memory, url, "list", "--deleted", "--json").stdout)
    assert tomb["id"] == listed["id"] and tomb["deleted"] and tomb["ended"] == "forgotten"
    back = facts(memory, url, "restore", listed["id"][:12])
    assert back.returncode == 0 and "Restored: The user works at Acme." in back.stdout
    shown = facts(memory, url, "show", listed["id"]).stdout
    assert "history: " in shown and " stated: The user works at Acme." in shown
    assert " forgotten: " in shown and " restored: " in shown
    missing = facts(memory, url, "forget", "f-nope")
    assert missing.returncode == 1 and "no fact with the id 'f-nope'" in missing.stderr


def test_gam_facts_on_a_folder_that_is_not_a_memory(tmp_path: Path, llm_server) -> None:
    out = facts(tmp_path, llm_server.base_url, "list")
    assert out.returncode == 1 and "is not a GAM memory" in out.stderr


def test_a_failure_while_learning_still_shows_the_saved_answer(
    memory: Path, llm_server, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (memory / "facts").symlink_to(elsewhere)
    out = ask(memory, llm_server.base_url, "--query", "I live in Porto. What is the launch?",
              "--conversation", "new", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert said["conversation_id"] and said["learned"] is None
    assert list(elsewhere.iterdir()) == []


def test_odd_arguments_are_refused_clearly(memory: Path, llm_server) -> None:
    url = llm_server.base_url
    ask(memory, url, "--query", "I work at Acme.", "--conversation", "new")
    blank = facts(memory, url, "forget", "")
    assert blank.returncode == 1 and "no fact with the id ''" in blank.stderr
    assert len(json.loads(facts(memory, url, "list", "--json").stdout)) == 1
    empty = ask(memory, url, "--query", "   ", "--conversation", "new")
    assert empty.returncode == 1 and "no question" in empty.stderr
