"""Search by meaning's settings: the person's choice (Settings) under the environment, the
keys each kept to its own server, the choice's file; the endpoint settings the chat roles
and the embeddings share (one way to read the environment, one way to make the SDK's
client); a key that arrives later is asked with."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from gam_desktop.engine.llm import LLMClient, LLMSettings, embeddings
from gam_desktop.engine.llm.embeddings import (
    Embedder,
    EmbeddingChoice,
    EmbeddingSettings,
    same_server,
)
from gam_desktop.engine.llm.settings import Endpoint
from gam_desktop.selfcheck.scripted_llm import RunningServer

pytestmark = pytest.mark.timeout(60)
CHAT = LLMSettings(base_url="http://127.0.0.1:8089/v1", api_key="chat-key")


def test_the_choice_counts_under_the_environment() -> None:
    choice = EmbeddingChoice(enabled="on", model="nomic-embed-text")
    chosen = EmbeddingSettings.from_env(CHAT, {}, choice=choice)
    assert (chosen.enabled, chosen.base_url, chosen.model) == ("on", CHAT.base_url, choice.model)
    assert chosen.key_value() == "chat-key"  # the chat's server: the chat's key
    env = {"GAM_EMBEDDINGS": "off", "GAM_EMBEDDING_MODEL": "bge-m3"}
    over = EmbeddingSettings.from_env(CHAT, env, choice=choice)
    assert (over.enabled, over.model) == ("off", "bge-m3")
    assert EmbeddingSettings.from_env(CHAT, {"GAM_EMBEDDINGS": " "}, choice=choice).enabled == "on"


def test_a_stored_key_goes_to_the_chosen_endpoint_only() -> None:
    own = EmbeddingChoice(base_url="https://embed.example/v1")
    kept = EmbeddingSettings.from_env(CHAT, {}, choice=own, stored_key="embed-key")
    assert kept.base_url == own.base_url and kept.key_value() == "embed-key"
    assert "embed-key" not in repr(kept)
    env = {"GAM_EMBEDDING_BASE_URL": "https://elsewhere.example/v1"}
    moved = EmbeddingSettings.from_env(CHAT, env, choice=own, stored_key="embed-key")
    assert moved.key_value() == "not-needed"  # another server: never the stored key
    named = EmbeddingSettings.from_env(
        CHAT, {**env, "GAM_EMBEDDING_API_KEY": "env-key"}, choice=own, stored_key="embed-key"
    )
    assert named.key_value() == "env-key"
    no_key = EmbeddingSettings.from_env(CHAT, {}, choice=own)
    assert no_key.key_value() == "not-needed"  # the chat's key stays on the chat's server


def test_the_choice_file_round_trips_and_a_damaged_one_gives_the_defaults(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config" / "embeddings.json"
    assert EmbeddingChoice.read(path) == EmbeddingChoice()  # none yet
    choice = EmbeddingChoice(enabled="off", base_url="http://127.0.0.1:8090/v1", model="e5")
    choice.write(path)
    assert EmbeddingChoice.read(path) == choice
    assert [p.name for p in path.parent.iterdir()] == ["embeddings.json"]  # no temporary left
    path.write_text("[1, 2", encoding="utf-8")
    assert EmbeddingChoice.read(path) == EmbeddingChoice()


def test_one_endpoint_type_for_the_roles_and_the_embeddings() -> None:
    """The near-copies are one: both settings are an Endpoint (the key, the environment's
    overrides, the SDK's client), with their own defaults."""
    assert issubclass(LLMSettings, Endpoint) and issubclass(EmbeddingSettings, Endpoint)
    assert (LLMSettings().timeout, LLMSettings().max_retries) == (120.0, 5)
    assert (EmbeddingSettings().timeout, EmbeddingSettings().max_retries) == (60.0, 1)
    roles = LLMSettings.from_env("chat", {"OPENAI_API_KEY": "k"}, api_key="override")
    assert isinstance(roles.api_key, SecretStr) and roles.key_value() == "override"
    assert LLMSettings.from_env("chat", {}).key_value() == "not-needed"
    client = EmbeddingSettings(base_url="http://127.0.0.1:9/v1", api_key="e", timeout=7)
    made = client.openai_client(max_retries=2)
    assert (str(made.base_url), made.api_key, made.timeout, made.max_retries) == (
        "http://127.0.0.1:9/v1/",
        "e",
        7,
        2,
    )
    chat = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", timeout=9))._openai
    assert (chat.api_key, chat.timeout, chat.max_retries) == ("not-needed", 9, 0)


def test_same_server_ignores_the_path_and_a_port_being_typed() -> None:
    assert same_server("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080")
    assert not same_server("http://127.0.0.1:8080/v1", "http://127.0.0.1:8090/v1")
    assert not same_server("https://api.openai.com/v1", "http://api.openai.com/v1")
    assert same_server("http://127.0.0.1:80x", "http://127.0.0.1:80x/v1")  # no ValueError


def test_a_key_that_arrives_later_is_asked_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote server is not asked without a key; that answer is not kept for when the
    key has arrived (from the keychain, after the search was made)."""
    with RunningServer() as server:
        server.state.models = ["chat-model", "text-embedding-3-small"]
        monkeypatch.setattr(embeddings, "is_local", lambda _url: False)  # as if remote
        embedder = Embedder(EmbeddingSettings(base_url=server.base_url))
        assert embedder.model() is None  # no key: not asked
        embedder.use(EmbeddingSettings(base_url=server.base_url, api_key="arrived"))
        assert embedder.model() == "text-embedding-3-small"
        assert embedder.settings.key_value() == "arrived"
