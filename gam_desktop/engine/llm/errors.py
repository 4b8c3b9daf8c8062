"""Errors of the LLM layer, phrased for the person who has to act on them.

Two families: fatal errors stop the whole operation (nothing is written), and
LLMCallFailed covers one call that kept failing, which the caller may replace
with its deterministic fallback.
"""


class LLMError(RuntimeError):
    """Any failure talking to the LLM."""


class LLMUnreachable(LLMError):
    """The server could not be reached at all (connection refused, DNS, no route)."""


class LLMAuthError(LLMError):
    """The server refused the API key (401/403)."""


class LLMCallFailed(LLMError):
    """One call failed after every retry (5xx, 429, timeout, rejected request)."""


class StructuredOutputError(LLMCallFailed):
    """The model's reply was not valid JSON of the requested shape, even after a re-ask."""
