"""LLM settings for one role (builder or chat), from a settings object or the environment.

The environment variables are OPENAI_*/GAM_* as the README lists them. The API key is a
SecretStr so that it never shows up in a repr, a log line or an error message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

Role = Literal["builder", "chat"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_ROLE_ENV = {
    "builder": ("GAM_AGENT_MODEL", "GAM_AGENT_TEMPERATURE", 0.3),
    "chat": ("CHAT_AGENT_MODEL", "CHAT_AGENT_TEMPERATURE", 0.7),
}


class LLMSettings(BaseModel):
    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr | None = None
    model: str = DEFAULT_MODEL
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(default=4096, ge=16)
    # Seconds of silence before a call is given up: no first token (plus the time the calls
    # queued ahead of it take), or no next token. Never the call's total time.
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0)
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
        }
        if env.get("OPENAI_API_KEY"):
            values["api_key"] = SecretStr(env["OPENAI_API_KEY"])
        if env.get("GAM_LLM_WORKERS"):
            values["workers"] = env["GAM_LLM_WORKERS"]  # a number, or "auto"
        values.update({k: v for k, v in overrides.items() if v is not None})
        if isinstance(values.get("api_key"), str):
            values["api_key"] = SecretStr(str(values["api_key"]))
        return cls.model_validate(values)

    def key_value(self) -> str:
        """The key to send. Local servers (Ollama, llama.cpp) accept any non-empty key."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        return "not-needed"
