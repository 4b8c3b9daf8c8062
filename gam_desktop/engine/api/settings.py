"""How the app is set up: the LLM's and the embeddings' settings, what a server offers
(Settings ▸ Test connection, the model lists, local servers), what is learned about each
server across runs, prices, keeping keys out of logs, the git the history runs, and the
app's own resources."""

from __future__ import annotations

from pathlib import Path

from gam_desktop.engine.history.gitrepo import bundled_git, find_git
from gam_desktop.engine.llm import LLMSettings, capabilities, concurrency, embeddings
from gam_desktop.engine.llm.client import sdk
from gam_desktop.engine.llm.embeddings import (
    EmbeddingChoice,
    EmbeddingSettings,
    Enabled,
    is_local,
    pick_model,
    same_server,
)
from gam_desktop.engine.llm.prices import PriceTable
from gam_desktop.engine.llm.probe import (
    LOCAL_SERVERS,
    LocalServer,
    detect_local,
    list_models,
    probe,
)
from gam_desktop.engine.llm.redact import RedactingFormatter, Redactor, redact_json
from gam_desktop.engine.llm.redact import known as redact_known
from gam_desktop.engine.llm.settings import CHAT_TEMPERATURE, Role
from gam_desktop.engine.llm.tokenizer import count_tokens, resources_dir

__all__ = [
    "CHAT_TEMPERATURE",
    "LOCAL_SERVERS",
    "EmbeddingChoice",
    "EmbeddingSettings",
    "Enabled",
    "LLMSettings",
    "LocalServer",
    "PriceTable",
    "RedactingFormatter",
    "Redactor",
    "Role",
    "automatic_parallel_calls",
    "bundled_git",
    "detect_local",
    "find_git",
    "forget_found_models",
    "is_local",
    "list_models",
    "pick_model",
    "probe",
    "redact_json",
    "redact_known",
    "remember_capabilities_in",
    "resources_dir",
    "same_server",
    "warm_up_llm",
]


def automatic_parallel_calls(base_url: str, model: str) -> int | None:
    """How many calls at once the automatic limit allows `model` at `base_url` now (learned
    in this process, else remembered from earlier runs); None until one is known."""
    return concurrency.current(base_url, model)


def remember_capabilities_in(path: Path | None) -> None:
    """Keep what is learned about each server (its limits, what it supports) in `path`
    across runs (None: for this process only)."""
    capabilities.remember_in(path)


def forget_found_models() -> None:
    """Ask the servers again for their embedding models (after the endpoint changed)."""
    embeddings.forget_found()


def warm_up_llm() -> None:
    """Import the LLM SDK and load the tokenizer now (on a worker thread), so that the first
    build does not pay for them on its critical path."""
    sdk()
    count_tokens("warm up")
