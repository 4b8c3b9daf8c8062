"""gam-serve and gam-mcp search as the app does (issue 35 §2): by meaning too when Settings
set up an embedding model (the file the app writes, or the environment), by words alone
(BM25) when search by meaning is off."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import openai
import pytest

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.embeddings import EmbeddingChoice, EmbeddingSettings
from gam_desktop.serve import cli as serve_cli
from gam_desktop.serve import mcp_cli
from gam_desktop.serve.mcp_server import MemoryServer
from tests.serve.test_endpoint import ONCALL, QUESTION
from tests.serve.test_serve_cli import free_port, start, wait_up

pytestmark = pytest.mark.timeout(180)
EMBEDDING_VARIABLES = (
    "GAM_EMBEDDINGS",
    "GAM_EMBEDDING_BASE_URL",
    "GAM_EMBEDDING_MODEL",
    "GAM_EMBEDDING_API_KEY",
)


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow(embeddings=EmbeddingSettings(enabled="off"))
    workflow.add(text=ONCALL)
    return workflow.folder.root


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's config folder (appdirs.config_dir's parent) for this test alone, in this
    process and the ones it starts; no GAM_EMBEDDING* variable of the machine counts."""
    home = tmp_path / "config"
    for variable in ("XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.setenv(variable, str(home))
    for variable in EMBEDDING_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    return home


def chosen(choice: EmbeddingChoice) -> None:
    """What the app's Settings would have saved."""
    from gam_desktop import appdirs

    choice.write(appdirs.embeddings_file())


def ask_gam_serve(memory: Path, base_url: str) -> None:
    port, token = free_port(), "embeddings-token-123"
    process = start(memory, base_url, port, {"GAM_SERVE_TOKEN": token})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(process, url)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0)
        reply = client.chat.completions.create(
            model="gam", messages=[{"role": "user", "content": QUESTION}]
        )
        assert reply.choices[0].message.content
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err


def test_gam_serve_searches_by_meaning_as_settings_chose(
    memory: Path, llm_server, config_home: Path
) -> None:
    chosen(EmbeddingChoice(enabled="on", model="fake-embed"))  # on the chat's server
    assert "GAM_EMBEDDING_MODEL" not in os.environ
    ask_gam_serve(memory, llm_server.base_url)
    calls = llm_server.embeddings.calls
    assert calls and {call["model"] for call in calls} == {"fake-embed"}
    assert any(QUESTION in text for text in llm_server.embeddings.texts)  # the query too


def test_gam_serve_searches_by_words_alone_when_search_by_meaning_is_off(
    memory: Path, llm_server, config_home: Path
) -> None:
    chosen(EmbeddingChoice(enabled="off", model="fake-embed"))
    ask_gam_serve(memory, llm_server.base_url)
    assert llm_server.embeddings.calls == []  # BM25 alone


def test_the_environment_overrides_the_stored_choice(
    llm_server, config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen(EmbeddingChoice(enabled="on", model="fake-embed"))
    chat = LLMSettings(base_url=llm_server.base_url, api_key="chat-key")
    settings = serve_cli.embedding_settings(chat)
    assert (settings.enabled, settings.model, settings.key_value()) == (
        "on",
        "fake-embed",
        "chat-key",
    )
    monkeypatch.setenv("GAM_EMBEDDINGS", "off")
    assert serve_cli.embedding_settings(chat).enabled == "off"


def test_an_endpoint_of_its_own_has_its_key_from_the_keychain(
    config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = "https://embed.example/v1"
    chosen(EmbeddingChoice(base_url=own, model="text-embedding-3-small"))
    asked: list[str] = []

    def get_key(endpoint: str) -> str:
        asked.append(endpoint)
        return "sk-embed-kept"

    monkeypatch.setattr(serve_cli.keystore, "get_key", get_key)
    chat = LLMSettings(base_url="http://127.0.0.1:8080/v1", api_key="chat-key")
    settings = serve_cli.embedding_settings(chat)
    assert (settings.base_url, settings.key_value(), asked) == (own, "sk-embed-kept", [own])


def test_gam_mcp_is_given_the_stored_search_settings(
    memory: Path, llm_server, config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen(EmbeddingChoice(enabled="on", model="fake-embed"))
    made: list[MemoryServer] = []

    class Recorded(MemoryServer):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(mcp_cli, "MemoryServer", Recorded)
    monkeypatch.setattr(mcp_cli.anyio, "run", lambda *_a, **_k: None)  # no stdio session
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert mcp_cli.mcp_main(["--gam-dir", str(memory)]) == 0
    (server,) = made
    assert server.embeddings is not None and server.embeddings.model == "fake-embed"
    server.tools.index.embed_pending()
    assert "escalates" in server.search("who gets paged after half an hour")
    assert any("half an hour" in text for text in llm_server.embeddings.texts)
    server.tools.close()


def test_gam_mcp_without_embeddings_searches_by_words_alone(memory: Path, llm_server) -> None:
    server = MemoryServer(memory, LLMSettings(base_url=llm_server.base_url))
    assert "Acme" in server.search("Acme on-call escalation")
    assert llm_server.embeddings.calls == []
    server.tools.close()
