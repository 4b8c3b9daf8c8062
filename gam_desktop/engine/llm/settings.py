"""LLM settings for one role (builder or chat), from a settings object or the environment.

The environment variables are OPENAI_*/GAM_* as the README lists them. The API key is a
SecretStr so that it never shows up in a repr, a log line or an error message.

`Endpoint` is what every call to an OpenAI-compatible server needs (its address, the key,
the time limit, retries) and how settings are put together from the environment: the chat
and builder roles (`LLMSettings`) and the embedding model (`embeddings.EmbeddingSettings`)
share it.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, SecretStr, field_validator

Role = Literal["builder", "chat"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
NO_KEY = "not-needed"  # local servers (Ollama, llama.cpp) accept any non-empty key
# The chat's calls read passages and answer from them (the grounded reading, research's
# claims, the facts of a turn): extraction, not writing. At 0.7 a small model sampled other
# passages' values and the same question got other answers (the persona evaluation's dev
# half: 36 → 41 of 63 questions at 0, and its runs stopped differing by ±4).
CHAT_TEMPERATURE = 0.0
_ROLE_ENV = {
    "builder": ("GAM_AGENT_MODEL", "GAM_AGENT_TEMPERATURE", 0.3),
    "chat": ("CHAT_AGENT_MODEL", "CHAT_AGENT_TEMPERATURE", CHAT_TEMPERATURE),
}


class Endpoint(BaseModel):
    """An OpenAI-compatible endpoint: where, with which key, how long and how often to try."""

    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr | None = None
    timeout: float = Field(default=120.0, gt=0)  # seconds
    max_retries: int = Field(default=5, ge=0)

    @classmethod
    def settled(cls, values: dict[str, object], overrides: Mapping[str, object]) -> Self:
        """`values` (read from the environment or stored settings) with the keyword
        `overrides` that are not None on top, a key given as text kept secret."""
        values = {**values, **{k: v for k, v in overrides.items() if v is not None}}
        if isinstance(values.get("api_key"), str):
            values["api_key"] = SecretStr(str(values["api_key"]))
        return cls.model_validate(values)

    def key_value(self) -> str:
        """The key to send. Local servers (Ollama, llama.cpp) accept any non-empty key."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        return NO_KEY

    def openai_client(self, max_retries: int, body_limit: int | None = None) -> Any:
        """The openai SDK's client for this endpoint (`max_retries`: the SDK's own, 0 where
        the caller retries itself), reading no more than the start of an error's body and,
        with `body_limit`, no more than that of any (llm/bodies.py)."""
        from gam_desktop.engine.llm.bodies import http_client
        from gam_desktop.engine.llm.client import sdk  # (the client imports these settings)

        http = http_client(self.base_url, self.timeout, body_limit)
        client = sdk().OpenAI(
            base_url=self.base_url,
            api_key=self.key_value(),
            timeout=self.timeout,
            max_retries=max_retries,
            http_client=http,
        )
        weakref.finalize(client, http.close)  # the SDK closes only an HTTP client of its own
        return client


def env_key(env: Mapping[str, str], variable: str) -> SecretStr | None:
    """The key in the environment variable `variable`, if it is set and not empty."""
    return SecretStr(env[variable]) if env.get(variable) else None


class LLMSettings(Endpoint):
    model: str = DEFAULT_MODEL
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(default=4096, ge=16)
    # Seconds of silence before a call is given up: no first token (plus the time the calls
    # queued ahead of it take), or no next token. Never the call's total time.
    timeout: float = Field(default=120.0, gt=0)
    backoff_base: float = Field(default=1.0, ge=0)  # seconds; doubled per retry
    backoff_max: float = Field(default=30.0, ge=0)
    workers: int = Field(default=0, ge=0, le=64)  # calls at once; 0 ("auto"): learned

    @field_validator("workers", mode="before")
    @classmethod
    def _automatic(cls, value: object) -> object:
        """The word "auto" (the environment, a flag) is 0: the server's limit, learned."""
        return 0 if isinstance(value, str) and value.strip().lower() == "auto" else value

    @classmethod
    def from_env(
        cls, role: Role = "builder", env: Mapping[str, str] | None = None, **overrides: object
    ) -> LLMSettings:
        """Settings for `role` from the environment variables; keyword overrides win."""
        env = os.environ if env is None else env
        model_var, temp_var, default_temp = _ROLE_ENV[role]
        values: dict[str, object] = {
            "base_url": env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            "model": env.get(model_var) or env.get("OPENAI_MODEL") or DEFAULT_MODEL,
            "temperature": float(env.get(temp_var) or default_temp),
            "api_key": env_key(env, "OPENAI_API_KEY"),
        }
        if env.get("GAM_LLM_WORKERS"):
            values["workers"] = env["GAM_LLM_WORKERS"]  # a number, or "auto"
        return cls.settled(values, overrides)
