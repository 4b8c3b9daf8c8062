"""The app's settings: what the user chose in the Settings dialog, kept with QSettings.

Only preferences live here (endpoint, models, temperatures, chunking, workers,
layout, recent folders). The API keys are never written here: they live in the OS
keychain (gam_desktop.keystore), or in memory for this session when there is none.

Search by meaning (the embedding model: automatic, on or off, an endpoint, a model) is kept
in a JSON file of its own (`appdirs.embeddings_file`), which gam-serve and gam-mcp read too.
The stored preferences carry a version (`VERSION`); `load` brings older ones up to date.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import SecretStr
from PySide6.QtCore import QLockFile, QSettings

from gam_desktop import appdirs
from gam_desktop.engine.api import (
    CHAT_TEMPERATURE,
    BuildOptions,
    ChunkConfig,
    EmbeddingChoice,
    EmbeddingSettings,
    Enabled,
    LLMSettings,
    same_server,
)

log = logging.getLogger(__name__)

PRESETS = {  # name -> (base URL, default model, needs a key)
    "OpenAI": ("https://api.openai.com/v1", "gpt-4o-mini", True),
    "Ollama": ("http://127.0.0.1:11434/v1", "qwen2.5:7b", False),
    "LM Studio": ("http://127.0.0.1:1234/v1", "local-model", False),
    "llama.cpp": ("http://127.0.0.1:8080/v1", "local-model", False),  # llama-server's default
    "Custom": ("http://127.0.0.1:8080/v1", "local-model", False),
}
MAX_RECENT = 8
# The stored preferences' version. 1 (none stored): `workers` defaulted to 8, saved as 8
# whether or not the person chose it; 2: 0, automatic (adaptive concurrency, issue 36);
# 3: the chat's temperature defaults to CHAT_TEMPERATURE (0), where 0.7 was saved.
VERSION = 3
OLD_DEFAULT_WORKERS = 8
OLD_CHAT_TEMPERATURE = 0.7
# Kept in appdirs.embeddings_file(), not in QSettings: the command-line servers read them.
EMBEDDING_FIELDS = ("embeddings", "embedding_base_url", "embedding_model")
SET_UP_LLM = (
    "Set up your LLM first: Edit ▸ Settings… (an OpenAI key, or a server on this computer: "
    "Ollama, LM Studio or llama.cpp). Then ask."
)


@dataclass
class Preferences:
    provider: str = "OpenAI"
    base_url: str = PRESETS["OpenAI"][0]
    builder_model: str = "gpt-4o-mini"
    chat_model: str = "gpt-4o-mini"
    builder_temperature: float = 0.3
    chat_temperature: float = CHAT_TEMPERATURE
    min_tokens: int = 100
    max_tokens: int = 1000
    workers: int = 0  # parallel LLM calls; 0: automatic (learned from the server)
    reorganize_threshold: int = 10
    step_documents: int = 25  # a big drop is committed in steps of this many documents
    timeout: float = 120.0
    git_path: str = ""
    recent_folders: list[str] = field(default_factory=list)
    embeddings: Enabled = "auto"  # search by meaning: auto (when a model is found), on, off
    embedding_base_url: str = ""  # "": the chat's server
    embedding_model: str = ""  # "": the embedding model the server lists, if any

    def llm(self, role: str, api_key: str | None) -> LLMSettings:
        model = self.builder_model if role == "builder" else self.chat_model
        temperature = self.builder_temperature if role == "builder" else self.chat_temperature
        return LLMSettings(
            base_url=self.base_url,
            model=model,
            temperature=temperature,
            api_key=SecretStr(api_key) if api_key else None,
            workers=self.workers,
            timeout=self.timeout,
        )

    def embedding_choice(self) -> EmbeddingChoice:
        return EmbeddingChoice(
            enabled=self.embeddings,
            base_url=self.embedding_base_url.strip(),
            model=self.embedding_model.strip(),
        )

    def embedding_settings(
        self,
        api_key: str | None,
        embedding_key: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> EmbeddingSettings:
        """Search by meaning as chosen, the environment's GAM_EMBEDDING* variables on top.
        `embedding_key`: the key kept for the embedding endpoint, when it is not the chat's
        server (the chat's key `api_key` is used on the chat's server only)."""
        return EmbeddingSettings.from_env(
            self.llm("chat", api_key), env, choice=self.embedding_choice(), stored_key=embedding_key
        )

    def own_embedding_endpoint(self) -> str:
        """The embedding endpoint when it is another server than the chat's (it has a key of
        its own, kept in the keychain under its address), else ""."""
        url = self.embedding_base_url.strip()
        return url if url and not same_server(url, self.base_url) else ""

    def llm_missing(self, api_key: str | None) -> str | None:
        """Why no question can be sent to the LLM yet (no endpoint or model, or OpenAI
        without a key), or None: the window says so instead of failing at the first one."""
        needs_key = PRESETS.get(self.provider, ("", "", False))[2]
        if not self.base_url.strip() or not self.chat_model.strip() or (needs_key and not api_key):
            return SET_UP_LLM
        return None

    def build_options(self) -> BuildOptions:
        return BuildOptions(
            chunk=ChunkConfig(min_tokens=self.min_tokens, max_tokens=self.max_tokens),
            reorganize_threshold=self.reorganize_threshold,
            step_documents=self.step_documents,
        )

    def remember_folder(self, folder: str) -> None:
        self.recent_folders = [folder, *[f for f in self.recent_folders if f != folder]]
        del self.recent_folders[MAX_RECENT:]


def load(store: QSettings, shared: Path | None = None) -> Preferences:
    """The preferences kept in `store` (brought up to date when an older version stored
    them) and the search settings kept in `shared` (appdirs.embeddings_file() by default)."""
    prefs = Preferences()
    for name, default in asdict(prefs).items():
        if name in EMBEDDING_FIELDS:
            continue
        value = store.value(f"prefs/{name}", default)
        if isinstance(default, list):
            value = [
                str(v) for v in (value if isinstance(value, list) else [value] if value else [])
            ]
        elif isinstance(default, bool):
            value = str(value).lower() in ("1", "true")
        elif isinstance(default, int):
            value = int(_number(value))
        elif isinstance(default, float):
            value = float(_number(value))
        setattr(prefs, name, value)
    _migrate(store, prefs)
    choice = EmbeddingChoice.read(shared or appdirs.embeddings_file())
    prefs.embeddings = choice.enabled
    prefs.embedding_base_url, prefs.embedding_model = choice.base_url, choice.model
    return prefs


def stored_version(store: QSettings) -> int:
    """The version of the preferences in `store`: 1 when they were stored before versions
    were (any `prefs/` key but no `prefs/version`), the current one when none are."""
    stored = store.value("prefs/version")
    if stored is not None:
        return int(_number(stored))
    return 1 if any(k.startswith("prefs/") for k in store.allKeys()) else VERSION


def _migrate(store: QSettings, prefs: Preferences) -> None:
    """Older preferences, brought up to date (they are stored so at the next `save`).
    Version 1 saved every default: a `workers` of 8 was the default, not a choice, and is
    now automatic (0); another number was chosen, and stays."""
    version = stored_version(store)
    if version < 2 and prefs.workers == OLD_DEFAULT_WORKERS:
        prefs.workers = 0
    if version < 3 and prefs.chat_temperature == OLD_CHAT_TEMPERATURE:
        prefs.chat_temperature = CHAT_TEMPERATURE  # the old default, saved as if chosen


def _number(value: object) -> str | int | float:
    """A stored number as QSettings gives it back: the text read from the settings file,
    or the number itself when it was set in this session."""
    if isinstance(value, str | int | float):
        return value
    raise TypeError(f"a setting that should be a number is {type(value).__name__}")


def save(store: QSettings, prefs: Preferences, shared: Path | None = None) -> None:
    for name, value in asdict(prefs).items():
        if name not in EMBEDDING_FIELDS:
            store.setValue(f"prefs/{name}", value)
    store.setValue("prefs/version", VERSION)
    store.sync()
    try:
        prefs.embedding_choice().write(shared or appdirs.embeddings_file())
    except OSError as exc:  # (as QSettings, which says nothing): the app goes on with them
        log.warning("the search settings could not be saved: %s", exc)


def clear_broken_lock(store: QSettings, checks: int = 4) -> bool:
    """Remove the settings' lock file when it names no process: the app killed as it made
    it leaves it empty, and QSettings then waits until it is 30 s old before it writes (the
    window showed 32 s late). A writer fills its lock within microseconds, so a lock still
    empty after `checks` looks 50 ms apart is not being made. True when one was removed."""
    path = Path(store.fileName() + ".lock")
    lock = QLockFile(str(path))
    for check in range(checks):
        if not path.is_file() or lock.getLockInfo()[0]:
            return False  # none, or one QLockFile itself tells held from left by the dead
        if check < checks - 1:
            time.sleep(0.05)
    return lock.removeStaleLockFile()
