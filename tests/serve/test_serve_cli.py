"""gam-serve as a person runs it: its own process, the token from the environment or shown
when it made one, a request answered, the turn written before it exits on Ctrl+C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import openai
import pytest

from gam_desktop.engine.chats.library import list_conversations
from gam_desktop.engine.chats.record import parse
from tests.serve.test_endpoint import ONCALL, QUESTION, commits

pytestmark = pytest.mark.timeout(180)
CODE = "import sys; from gam_desktop.serve.cli import serve_main; sys.exit(serve_main())"


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(memory: Path, base_url: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    environment = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "scripted",
                   "OPENAI_API_KEY": "sk-upstream-never-shown", **env}  # fmt: skip
    command = [sys.executable, "-c", CODE, "--gam-dir", str(memory), "--port", str(port)]
    return subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True)


def wait_up(process: subprocess.Popen, url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx2.get(f"{url}/health").status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.05)  # not listening yet
    raise AssertionError(
        f"gam-serve did not start: {process.stderr.read() if process.stderr else ''}"
    )


def test_gam_serve_answers_and_writes_the_turn_before_exiting(memory: Path, llm_server) -> None:
    port = free_port()
    process = start(memory, llm_server.base_url, port, {"GAM_SERVE_TOKEN": "from-the-env-123"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(process, url)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="from-the-env-123", max_retries=0)
        reply = client.chat.completions.create(
            model="gam", messages=[{"role": "user", "content": QUESTION}]
        )
        assert reply.choices[0].message.content.startswith("From ")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert f"at http://127.0.0.1:{port}/v1" in err
    assert "from-the-env-123" not in err and "sk-upstream-never-shown" not in err
    (info,) = list_conversations(memory)  # written before the process ended
    assert info.turns == 1


def test_a_chat_continued_after_a_restart_stays_in_its_conversation(
    memory: Path, llm_server
) -> None:
    """The client resends the whole history; a restarted gam-serve still knows whose it is
    (the key is read back from the saved turns)."""
    port, token = free_port(), "restart-token-123"
    url = f"http://127.0.0.1:{port}"
    chats = sum(s.startswith("Chat: ") for s in commits(memory))
    messages: list[dict[str, str]] = [{"role": "system", "content": "Be brief."}]
    questions = ["I live in Porto.", QUESTION, "And after how many minutes?"]

    def ask(question: str) -> None:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0)
        messages.append({"role": "user", "content": question})
        reply = client.chat.completions.create(model="gam", messages=messages)  # type: ignore[arg-type]
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})

    for asked in (questions[:2], questions[2:]):  # a restart between the second and third
        process = start(memory, llm_server.base_url, port, {"GAM_SERVE_TOKEN": token})
        try:
            wait_up(process, url)
            for question in asked:
                ask(question)
        finally:
            process.send_signal(signal.SIGINT)  # the turns are written before it exits
            _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    (info,) = list_conversations(memory)
    turns = parse((memory / info.path).read_text(encoding="utf-8")).turns
    assert [turn.question for turn in turns] == questions
    assert sum(s.startswith("Chat: ") for s in commits(memory)) == chats + 3


def test_a_made_token_is_shown_once_and_required(memory: Path, llm_server) -> None:
    port = free_port()
    process = start(memory, llm_server.base_url, port, {"GAM_SERVE_TOKEN": ""})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(process, url)
        assert httpx2.get(f"{url}/v1/models").status_code == 401
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    (line,) = [ln for ln in err.splitlines() if ln.startswith("gam-serve: token (")]
    assert line.split(": ")[-1].startswith("gam-")


def test_a_folder_that_is_not_a_memory_is_refused(tmp_path: Path, llm_server) -> None:
    process = start(tmp_path, llm_server.base_url, free_port(), {})
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2 and "is not a GAM memory" in err
