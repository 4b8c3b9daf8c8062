"""Errors as a person should read them: what happened, then what to do about it."""

from __future__ import annotations

from dataclasses import dataclass

from gam_desktop.engine.build.documents import DocumentError
from gam_desktop.engine.history.gitrepo import GitUnavailable
from gam_desktop.engine.history.log import RollbackConflict
from gam_desktop.engine.history.versioned import InterruptedOperationError
from gam_desktop.engine.llm import LLMAuthError, LLMCallFailed, LLMUnreachable
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.folder import NotAMemoryError
from gam_desktop.engine.store.lock import FolderBusyError
from gam_desktop.keystore import KeychainUnavailable


@dataclass(frozen=True)
class Message:
    title: str
    text: str
    advice: str

    def full(self) -> str:
        return f"{self.text}\n\n{self.advice}" if self.advice else self.text


_ADVICE: list[tuple[type[BaseException], str, str]] = [
    (
        LLMAuthError,
        "The API key was refused",
        "Open Settings, check the key for this endpoint and save it again.",
    ),
    (
        LLMUnreachable,
        "The LLM server cannot be reached",
        "Check that the server is running and the address in Settings is right "
        "(Settings ▸ Test connection).",
    ),
    (
        LLMCallFailed,
        "The LLM server kept failing",
        "It may be overloaded or rate-limiting; wait a minute and try again, or lower the "
        "number of parallel calls in Settings.",
    ),
    (
        DocumentError,
        "A document could not be read",
        "Save an unprotected or repaired copy of the file and drop that instead.",
    ),
    (
        RollbackConflict,
        "This operation cannot be undone on its own",
        "Use “Restore to before this” to go back to the state before it.",
    ),
    (
        InterruptedOperationError,
        "An earlier operation was interrupted",
        "Choose whether to restore the last saved state or keep the files as they are.",
    ),
    (
        GitUnavailable,
        "History is unavailable",
        "Install git, or set its path in Settings. Everything else keeps working.",
    ),
    (
        FolderBusyError,
        "The memory is busy",
        "Another operation is still writing it; try again when it has finished.",
    ),
    (
        NotAMemoryError,
        "This folder is not a memory",
        "Choose an empty folder or an existing memory.",
    ),
    (KeychainUnavailable, "The key was not saved", ""),
    (
        StoreError,
        "The memory folder could not be written",
        "Nothing was changed. Check the free disk space and the folder's permissions.",
    ),
    (
        PermissionError,
        "The memory folder cannot be written",
        "Check the folder's permissions, or choose another folder.",
    ),
]


def describe(error: BaseException) -> Message:
    for kind, title, advice in _ADVICE:
        if isinstance(error, kind):
            return Message(title, str(error), advice)
    return Message(
        "Something went wrong",
        f"{type(error).__name__}: {error}",
        "Details are in the log file (Help ▸ Open log folder).",
    )
