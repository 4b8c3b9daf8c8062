"""Errors of the LLM layer, phrased for the person who has to act on them.

Two families: fatal errors stop the whole operation (nothing is written), and
LLMCallFailed covers one call that kept failing, which the caller may replace
with its deterministic fallback.
"""


class LLMError(RuntimeError):
    """Any failure talking to the LLM."""


class LLMUnreachable(LLMError):
    """The server could not be reached (connection refused, DNS, no route) on a call's first
    attempt, or stopped accepting connections and was still refusing after every retry."""


class LLMAuthError(LLMError):
    """The server refused the API key (401/403)."""


class LLMCallFailed(LLMError):
    """One call failed after every retry (5xx, 429, timeout, a dropped connection, a reply
    cut short or not JSON), or the server rejected the request."""


class StructuredOutputError(LLMCallFailed):
    """The model's reply was not valid JSON of the requested shape, even after a re-ask."""
