"""Errors of the LLM layer, phrased for the person who has to act on them.

Two families: fatal errors stop the whole operation (nothing is written), and
LLMCallFailed covers one call that kept failing, which the caller may replace
with its deterministic fallback.
"""

from gam_desktop.engine.errors import GamError


class LLMError(GamError, RuntimeError):
    """Any failure talking to the LLM."""

    title = "The LLM failed"


class LLMUnreachable(LLMError):
    """The server could not be reached (connection refused, DNS, no route) on a call's first
    attempt, or stopped accepting connections and was still refusing after every retry."""

    title = "The LLM server cannot be reached"
    advice = (
        "Check that the server is running and the address in Settings is right "
        "(Settings ▸ Test connection)."
    )


class LLMAuthError(LLMError):
    """The server refused the API key (401/403)."""

    title = "The API key was refused"
    advice = "Open Settings, check the key for this endpoint and save it again."


class LLMNoReply(LLMError):
    """The server kept a call open without a single token for as long as the most patient
    attempt waits, over all the call's attempts (keep-alive comments only, a stuck slot, a
    queue of other programs' work): the operation stops, rather than wait as long again
    for each of its calls and fall back on every one."""

    title = "The LLM server does not reply"
    advice = (
        "Check the server (its log, its load). If it is only slow or busy with other "
        "programs' work, raise the timeout in Settings, then try again."
    )


class NoModels(LLMError):
    """The server answered, but lists no models (none loaded, or no model list at all)."""

    title = "The server offers no models"
    advice = (
        "Load or download a model in the server (Ollama: ollama pull <name>), or type the "
        "model's name in Settings."
    )


class LLMCallFailed(LLMError):
    """One call failed after every retry (5xx, 429, timeout, a dropped connection, a reply
    cut short or not JSON), or the server rejected the request."""

    title = "The LLM server kept failing"
    advice = (
        "It may be overloaded or rate-limiting; wait a minute and try again, or lower the "
        "number of parallel calls in Settings."
    )


class StructuredOutputError(LLMCallFailed):
    """The model's reply was not valid JSON of the requested shape, even after a re-ask."""


class LLMRejected(LLMCallFailed):
    """The server refused the request itself (HTTP 400 or 422: the context is too long, a
    parameter it does not know, `response_format` or `tools` it cannot do). Not retried; a
    caller with another way to ask (structured output's ladder, the JSON-action protocol)
    catches it and asks that way."""

    title = "The LLM server rejected the request"
    advice = (
        "The reason is the server's own words. A question or document too long for the "
        "model's context needs a model with a longer one (or a larger context setting in "
        "the server)."
    )
