"""Where the app keeps its own files outside any memory, the same for the window and the
command-line tools (so Qt-free): `config_dir` for files a person may edit (the price
table), `data_dir` for what the app learns (the servers' capabilities).

Linux follows XDG ($XDG_CONFIG_HOME, $XDG_DATA_HOME); macOS uses Application Support
(unless those variables are set); Windows %APPDATA% and %LOCALAPPDATA%. Nothing is created
here: writers make the folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "GAM Desktop"


def _base(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable)
    return Path(value) if value and os.path.isabs(value) else Path.home() / fallback


SUPPORT = "Library/Application Support"  # macOS


def config_dir() -> Path:
    if sys.platform == "win32":
        return _base("APPDATA", "AppData/Roaming") / APP
    return _base("XDG_CONFIG_HOME", SUPPORT if sys.platform == "darwin" else ".config") / APP


def data_dir() -> Path:
    if sys.platform == "win32":
        return _base("LOCALAPPDATA", "AppData/Local") / APP
    return _base("XDG_DATA_HOME", SUPPORT if sys.platform == "darwin" else ".local/share") / APP


def capabilities_file() -> Path:
    """What each LLM server was found to support (engine/llm/capabilities.py)."""
    return data_dir() / "capabilities.json"


def prices_file() -> Path:
    """The price table the estimate uses for known providers (engine/llm/prices.py)."""
    return config_dir() / "prices.json"


def embeddings_file() -> Path:
    """Search by meaning as chosen in Settings (engine/llm/embeddings.py `EmbeddingChoice`):
    the app writes it, gam-serve and gam-mcp read it too (they cannot read Qt's settings)."""
    return config_dir() / "embeddings.json"
