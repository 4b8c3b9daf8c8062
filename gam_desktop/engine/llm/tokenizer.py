"""Token counting with tiktoken, offline.

tiktoken downloads its vocabularies on first use and fails without a network, so
the app ships them in `resources/tokenizers/` (named by tiktoken's cache key, the
sha1 of the download URL) and points `TIKTOKEN_CACHE_DIR` there before the first
`get_encoding`. The files are checked against SHA256SUMS so a damaged install
fails with a clear message instead of a confusing tiktoken error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import tiktoken

from gam_desktop.engine.errors import GamError

DEFAULT_ENCODING = "cl100k_base"


class TokenizerError(GamError, RuntimeError):
    title = "The tokenizer files are damaged"
    advice = "Reinstall GAM Desktop."

    pass


def resources_dir() -> Path:
    """The resources folder: in a PyInstaller bundle, a source checkout, or a wheel install."""
    bundle = getattr(sys, "_MEIPASS", None)
    candidates = [Path(bundle) / "resources"] if bundle else []
    candidates += [
        Path(__file__).resolve().parents[3] / "resources",  # <checkout>/gam_desktop/engine/llm/
        Path(sys.prefix) / "share" / "gam-desktop" / "resources",
    ]
    return next((c for c in candidates if (c / "tokenizers").is_dir()), candidates[0])


def tokenizer_dir() -> Path:
    return resources_dir() / "tokenizers"


def _verify(folder: Path) -> None:
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        raise TokenizerError(f"Tokenizer files are missing: {sums} not found.")
    for line in sums.read_text().splitlines():
        expected, name = line.split()
        data_file = folder / name
        if not data_file.is_file():
            raise TokenizerError(f"Tokenizer file missing: {data_file}")
        actual = hashlib.sha256(data_file.read_bytes()).hexdigest()
        if actual != expected:
            raise TokenizerError(f"Tokenizer file damaged (sha256 mismatch): {data_file}")


@functools.cache
def _configure() -> None:
    folder = tokenizer_dir()
    _verify(folder)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


@functools.cache
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    _configure()
    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    # disallowed_special=() so that document text containing "<|endoftext|>" is
    # counted as plain text instead of raising.
    return len(get_encoding(encoding).encode(text, disallowed_special=()))
