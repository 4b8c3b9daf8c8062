"""The API key in the OS keychain (macOS Keychain, Windows Credential Locker, the Secret
Service on Linux) and nowhere else: never a settings file, a log line or git.

Calls can block (a locked Secret Service asks for a password), so the GUI makes them on
a worker thread. Without a usable keychain, callers fall back to OPENAI_API_KEY or a key
kept for the session only, and say so. keyring is imported on first use, on that worker
thread: its import (and its backends') would otherwise delay the window's start.
"""

from __future__ import annotations

import contextlib
from types import ModuleType

from gam_desktop.engine.errors import GamError

SERVICE = "gam-desktop"
NO_KEYCHAIN = "No keychain is available on this system, so the API key cannot be saved."
SESSION_ONLY = "The key is kept for this session only; set OPENAI_API_KEY to avoid retyping it."


class KeychainUnavailable(GamError, RuntimeError):
    """No usable keychain, or it refused: str() says what happened, `advice` what becomes of
    the key (said once, whatever the cause)."""

    title = "The key was not saved"
    advice = SESSION_ONLY


def _keyring() -> ModuleType:
    import keyring
    import keyring.backends.fail
    import keyring.errors

    return keyring


def backend_name() -> str:
    backend = _keyring().get_keyring()
    return f"{type(backend).__module__}.{type(backend).__name__}"


def available() -> bool:
    keyring = _keyring()
    backend = keyring.get_keyring()
    return not isinstance(backend, keyring.backends.fail.Keyring) and backend.priority > 0


def _account(endpoint: str) -> str:
    """Keys are per endpoint: an OpenAI key is not sent to a local server and vice versa."""
    return endpoint.strip().rstrip("/") or "default"


def get_key(endpoint: str) -> str | None:
    if not available():
        return None
    keyring = _keyring()
    try:
        return keyring.get_password(SERVICE, _account(endpoint))
    except keyring.errors.KeyringError as exc:
        raise KeychainUnavailable(f"The keychain could not be read: {exc}") from exc


def set_key(endpoint: str, key: str) -> None:
    if not available():
        raise KeychainUnavailable(NO_KEYCHAIN)
    keyring = _keyring()
    try:
        if key:
            keyring.set_password(SERVICE, _account(endpoint), key)
        else:
            delete_key(endpoint)
    except keyring.errors.KeyringError as exc:
        raise KeychainUnavailable(f"The keychain refused the key: {exc}") from exc


def delete_key(endpoint: str) -> None:
    if not available():
        return
    keyring = _keyring()
    with contextlib.suppress(keyring.errors.PasswordDeleteError):
        keyring.delete_password(SERVICE, _account(endpoint))
