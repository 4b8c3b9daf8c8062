"""The LLM client: any OpenAI-compatible endpoint behind one small interface."""

from gam_desktop.engine.llm.client import LLMClient
from gam_desktop.engine.llm.errors import (
    LLMAuthError,
    LLMCallFailed,
    LLMError,
    LLMUnreachable,
    NoModels,
    StructuredOutputError,
)
from gam_desktop.engine.llm.protocol import LLM
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.engine.llm.usage import UsageMeter

__all__ = [
    "LLM",
    "LLMAuthError",
    "LLMCallFailed",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "LLMUnreachable",
    "NoModels",
    "StructuredOutputError",
    "UsageMeter",
]
