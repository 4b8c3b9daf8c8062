"""The stored preferences: their version and what an older one becomes (issue 36: a stored
`workers = 8`, the old default, is automatic now), and the search settings kept where
gam-serve and gam-mcp read them, never a key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from gam_desktop.engine.llm.embeddings import EmbeddingChoice
from gam_desktop.gui.settings import VERSION, Preferences, load, save, stored_version

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def store(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    return tmp_path / "config" / "embeddings.json"


def old_preferences(path: Path, workers: int) -> QSettings:
    """Preferences as the app before versions saved them: every field, no version."""
    path.write_text(
        "[prefs]\nprovider=Custom\nbase_url=http://127.0.0.1:8080/v1\n"
        f"builder_model=m\nchat_model=m\nworkers={workers}\nmin_tokens=100\n",
        encoding="utf-8",
    )
    return QSettings(str(path), QSettings.Format.IniFormat)


def test_the_old_default_of_eight_workers_becomes_automatic(tmp_path: Path, shared: Path) -> None:
    store = old_preferences(tmp_path / "old.ini", workers=8)
    assert stored_version(store) == 1
    prefs = load(store, shared)
    assert prefs.workers == 0  # automatic: adaptive concurrency
    assert prefs.base_url == "http://127.0.0.1:8080/v1"  # the rest as it was
    save(store, prefs, shared)
    again = QSettings(store.fileName(), QSettings.Format.IniFormat)
    assert stored_version(again) == VERSION and load(again, shared).workers == 0


def test_another_stored_number_of_workers_was_chosen_and_stays(
    tmp_path: Path, shared: Path
) -> None:
    store = old_preferences(tmp_path / "old.ini", workers=3)
    assert load(store, shared).workers == 3


def test_eight_workers_chosen_after_the_change_stay(store: QSettings, shared: Path) -> None:
    save(store, replace(Preferences(), workers=8), shared)
    assert load(QSettings(store.fileName(), QSettings.Format.IniFormat), shared).workers == 8


def test_the_old_default_chat_temperature_becomes_the_new_one(tmp_path: Path, shared: Path) -> None:
    """Versions before 3 saved the chat's 0.7 whether or not it was chosen; it is 0 now."""
    path = tmp_path / "v2.ini"
    path.write_text("[prefs]\nversion=2\nchat_temperature=0.7\nworkers=3\n", encoding="utf-8")
    prefs = load(QSettings(str(path), QSettings.Format.IniFormat), shared)
    assert (prefs.chat_temperature, prefs.workers) == (0.0, 3)
    save(
        QSettings(str(path), QSettings.Format.IniFormat),
        replace(prefs, chat_temperature=0.7),
        shared,
    )
    chosen = load(QSettings(str(path), QSettings.Format.IniFormat), shared)
    assert chosen.chat_temperature == 0.7  # chosen after the change: it stays


def test_no_preferences_yet_are_of_this_version(store: QSettings, shared: Path) -> None:
    assert stored_version(store) == VERSION
    assert load(store, shared) == Preferences()


def test_search_settings_are_kept_for_the_command_line_servers_too(
    store: QSettings, shared: Path
) -> None:
    prefs = replace(
        Preferences(),
        embeddings="on",
        embedding_base_url=" http://127.0.0.1:8090/v1 ",
        embedding_model="nomic-embed-text",
    )
    save(store, prefs, shared)
    assert EmbeddingChoice.read(shared) == EmbeddingChoice(
        enabled="on", base_url="http://127.0.0.1:8090/v1", model="nomic-embed-text"
    )
    assert not [k for k in store.allKeys() if "embedding" in k]  # one place: the shared file
    loaded = load(QSettings(store.fileName(), QSettings.Format.IniFormat), shared)
    assert (loaded.embeddings, loaded.embedding_base_url, loaded.embedding_model) == (
        "on",
        "http://127.0.0.1:8090/v1",
        "nomic-embed-text",
    )


def test_the_embedding_endpoint_key_goes_to_its_own_server_only(monkeypatch) -> None:
    for variable in ("GAM_EMBEDDINGS", "GAM_EMBEDDING_BASE_URL", "GAM_EMBEDDING_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("GAM_EMBEDDING_API_KEY", raising=False)
    chat = replace(Preferences(), provider="Custom", base_url="http://127.0.0.1:8080/v1")
    same = chat.embedding_settings("chat-key", "embed-key")
    assert same.base_url == chat.base_url and same.key_value() == "chat-key"
    assert chat.own_embedding_endpoint() == ""
    own = replace(chat, embedding_base_url="https://embed.example/v1")
    assert own.own_embedding_endpoint() == "https://embed.example/v1"
    settings = own.embedding_settings("chat-key", "embed-key")
    assert settings.base_url == "https://embed.example/v1" and settings.key_value() == "embed-key"
    assert own.embedding_settings("chat-key", None).key_value() == "not-needed"
    env = {"GAM_EMBEDDING_BASE_URL": "http://127.0.0.1:9999/v1"}  # the environment wins
    moved = own.embedding_settings("chat-key", "embed-key", env)
    assert moved.base_url == env["GAM_EMBEDDING_BASE_URL"] and moved.key_value() == "not-needed"


def test_a_damaged_search_settings_file_gives_the_defaults(store: QSettings, shared: Path) -> None:
    shared.parent.mkdir(parents=True)
    shared.write_text('{"enabled": "sometimes"', encoding="utf-8")
    assert load(store, shared).embeddings == "auto"
    save(store, Preferences(), shared)  # written whole again
    assert EmbeddingChoice.read(shared) == EmbeddingChoice()
