"""gam-serve's turns on disk until written: a `kill -9` loses none of the answered turns,
none is saved twice, and a file that is not a turn is set aside."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx2
import pytest

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from gam_desktop.engine.store.folder import SERVE_QUEUE_DIR, MemoryFolder
from gam_desktop.engine.store.lock import writer_lock
from gam_desktop.serve.learning import PendingTurn, TurnWriter
from gam_desktop.serve.turnqueue import TurnQueue
from tests.serve.test_endpoint import ONCALL, commits
from tests.serve.test_serve_cli import free_port, start, wait_up

pytestmark = pytest.mark.timeout(240)
TOKEN = "queue-test-token-123"


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


def saved_questions(root: Path) -> list[str]:
    return sorted(
        turn.question
        for info in list_conversations(root)
        for turn in parse((root / info.path).read_text(encoding="utf-8")).turns
    )


def queued(root: Path) -> list[Path]:
    return sorted((root / SERVE_QUEUE_DIR).glob("*.json"))


def test_turns_answered_before_a_kill_9_are_written_once_at_the_next_start(
    memory: Path, llm_server
) -> None:
    before = len(commits(memory))
    questions = [f"What does the Acme rotation do at step {n}?" for n in range(5)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    env = {"GAM_SERVE_TOKEN": TOKEN}
    with writer_lock(MemoryFolder(memory)):  # another writer: the turns can only wait
        process = start(memory, llm_server.base_url, port, env)
        try:
            wait_up(process, url)
            statuses: list[int] = []

            def ask(question: str) -> None:
                body = {"model": "gam", "messages": [{"role": "user", "content": question}]}
                reply = httpx2.post(f"{url}/v1/chat/completions", json=body, headers=headers,
                                    timeout=60)  # fmt: skip
                statuses.append(reply.status_code)

            threads = [threading.Thread(target=ask, args=(q,)) for q in questions]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert statuses == [200] * 5
            assert len(queued(memory)) == 5  # on disk before the clients had their replies
        finally:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=60)
        assert len(commits(memory)) == before  # nothing was written before the kill
    process = start(memory, llm_server.base_url, port, env)
    try:
        wait_up(process, url)
        deadline = time.monotonic() + 120
        while queued(memory) or httpx2.get(f"{url}/health").json()["pending_turns"]:
            assert time.monotonic() < deadline, "the queued turns were not written"
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert saved_questions(memory) == sorted(questions)  # each once
    chats = [s for s in commits(memory) if s.startswith("Chat: ")]
    assert chats == ["Chat: 5 turns in 5 conversations"]  # replayed together: one commit


def test_a_queue_file_that_is_not_a_turn_is_set_aside_and_the_others_saved(
    make_workflow, memory: Path
) -> None:
    disk = TurnQueue(memory)
    good = PendingTurn(history=[], question="Who is on call?", answer="Maria Lopez.")
    disk.put(good.id, good.data())
    garbage = memory / SERVE_QUEUE_DIR / "00000000000000000001-garbage.json"
    garbage.write_bytes(b"\x00\xffnot json{")
    not_a_turn = memory / SERVE_QUEUE_DIR / "00000000000000000002-list.json"
    not_a_turn.write_text("[1, 2]")
    writer = TurnWriter(make_workflow(), disk=disk)
    writer.start()
    try:
        assert writer.drain(120)
    finally:
        writer.stop(60)
    assert saved_questions(memory) == ["Who is on call?"]
    assert queued(memory) == []
    assert garbage.with_name(garbage.name + ".bad").exists()
    assert not_a_turn.with_name(not_a_turn.name + ".bad").exists()
    assert writer.stats.failed == []


def test_a_turn_saved_just_before_a_kill_is_not_saved_again(make_workflow, memory: Path) -> None:
    """The kill came after the turn's commit and before its file was removed."""
    disk = TurnQueue(memory)
    turn = PendingTurn(history=[], question="Who is on call?", answer="Maria Lopez.")
    make_workflow().save_turn(turn.question, turn.answer, at=turn.at, turn_id=turn.id)
    disk.put(turn.id, turn.data())
    chats = sum(s.startswith("Chat: ") for s in commits(memory))
    writer = TurnWriter(make_workflow(), disk=disk)
    writer.start()
    try:
        assert writer.drain(120)
    finally:
        writer.stop(60)
    assert saved_questions(memory) == ["Who is on call?"]
    assert sum(s.startswith("Chat: ") for s in commits(memory)) == chats == 1
    assert queued(memory) == []


def sent_after(turn: PendingTurn) -> list[dict[str, str]]:
    """The history an OpenAI client sends with its next request after `turn`."""
    said = [
        {"role": "user", "content": turn.question},
        {"role": "assistant", "content": turn.answer},
    ]
    return [*turn.history, *said]


def test_turns_queued_together_are_one_commit_and_a_follow_up_keeps_its_conversation(
    make_workflow, memory: Path
) -> None:
    """A follow-up queued behind the turn it continues (no conversation id existed yet
    when it was answered) lands in that turn's new conversation, in the same commit."""
    first = PendingTurn(history=[], question="Who is on call?", answer="Maria Lopez.")
    follow_up = PendingTurn(history=sent_after(first), question="And after her?", answer="Ken Ito.")
    other = PendingTurn(history=[], question="What is the paging window?", answer="15 minutes.")
    writer = TurnWriter(make_workflow())
    for turn in (first, follow_up, other):  # queued before the writer runs: one batch
        writer.submit(turn)
    writer.start()
    try:
        assert writer.drain(120)
        writer.submit(
            PendingTurn(history=sent_after(follow_up), question="And then?", answer="No.")
        )
        assert writer.drain(120)
    finally:
        writer.stop(60)
    assert writer.stats.failed == [] and writer.stats.saved == 4
    chats = [s for s in commits(memory) if s.startswith("Chat: ")]
    # newest first; a turn alone by its own question, as in the app (not its conversation's)
    assert chats == ["Chat: And then?", "Chat: 3 turns in 2 conversations"]
    records = {
        info.title: parse((memory / info.path).read_text(encoding="utf-8"))
        for info in list_conversations(memory)
    }
    assert [t.question for t in records["Who is on call?"].turns] == [
        "Who is on call?",
        "And after her?",
        "And then?",
    ]
    assert [t.question for t in records["What is the paging window?"].turns] == [
        "What is the paging window?"
    ]
