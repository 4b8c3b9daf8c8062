"""Errors as a person should read them: what happened, then what to do about it.

The engine's errors carry their own title and advice (GamError); the environment's
(OSError) get advice here; anything else is a bug, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from gam_desktop.engine.api import GamError


@dataclass(frozen=True)
class Message:
    title: str
    text: str
    advice: str

    def full(self) -> str:
        """What happened, then what to do: each said once."""
        said = " ".join(self.text.split()).casefold()
        if not self.advice or " ".join(self.advice.split()).casefold().rstrip(".") in said:
            return self.text
        return f"{self.text}\n\n{self.advice}"


_ENVIRONMENT: list[tuple[type[OSError], str, str]] = [
    (
        PermissionError,
        "The memory folder cannot be written",
        "Check the folder's permissions, or choose another folder.",
    ),
    (
        OSError,
        "A file could not be read or written",
        "Check the free disk space and that the folder is still there.",
    ),
]
LOG_ADVICE = "Details are in the log file (Help ▸ Open log folder)."


def describe(error: BaseException) -> Message:
    if isinstance(error, GamError):
        return Message(error.title, str(error), error.advice)
    for kind, title, advice in _ENVIRONMENT:
        if isinstance(error, kind):
            return Message(title, str(error), advice)
    return Message(
        "Something went wrong (an unexpected error)",
        f"{type(error).__name__}: {error}",
        LOG_ADVICE,
    )
