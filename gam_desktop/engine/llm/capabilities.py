"""What each server supports, learned from its answers and remembered across runs.

A server that rejects `response_format={"type": "json_schema"}` or `tools` with a
400 is marked so, and later calls go straight to the next rung of the ladder
instead of paying for the rejected request again. With `remember_in(path)` (the entry
points give a file in the app's data folder) what was learned per (base URL, model) is
kept there, so the next run makes none of those rejected requests either.

What is remembered is learned again when a call suggests the server changed (another
build behind the same URL, another model behind the same name): a feature remembered as
working is rejected, the model is not found, or a structured reply in a fallback mode
stays invalid after its re-ask. Entries older than `MAX_AGE_DAYS` are learned again too.

The number of calls the server takes at once (llm/concurrency.py learns it) is kept here
too, so the next run starts from it rather than from a guess; the live limiter of this
process hangs on the same entry, so forgetting a server forgets both.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
STRUCTURED_MODES = ("json_schema", "json_object", "prompt")
MAX_AGE_DAYS = 30


@dataclass
class Capabilities:
    supported: dict[str, bool] = field(default_factory=dict)  # mode or "tools" -> known?
    remembered: set[str] = field(default_factory=set)  # known from an earlier run only
    learned: float = field(default_factory=time.time)  # when it was last learned
    parallel: int | None = None  # calls in flight the server was last found to take
    parallel_learned: float = 0.0  # when that was learned
    limiter: Any = field(default=None, repr=False, compare=False)  # concurrency.Limiter

    def usable(self, feature: str) -> bool:
        return self.supported.get(feature, True)

    def known(self, feature: str) -> bool | None:
        return self.supported.get(feature)


_registry: dict[tuple[str, str], Capabilities] = {}
_lock = threading.Lock()
_memory: Path | None = None  # the file what is learned is kept in, if any
_saving = threading.Lock()  # one read-modify-write of that file at a time


def _key(base_url: str, model: str) -> tuple[str, str]:
    return base_url.rstrip("/"), model


def capabilities_for(base_url: str, model: str) -> Capabilities:
    with _lock:
        return _registry.setdefault(_key(base_url, model), Capabilities())


def mark(base_url: str, model: str, feature: str, supported: bool) -> None:
    caps = capabilities_for(base_url, model)
    with _lock:
        if not supported and feature in caps.remembered and caps.supported.get(feature):
            # It worked in an earlier run and is refused now: the server changed. Learn
            # everything again (this call's answer is the first thing learned).
            log.info("%s %s no longer accepts %s; probing it again", base_url, model, feature)
            caps.supported.clear()
            caps.remembered.clear()
        caps.remembered.discard(feature)
        before = caps.supported.get(feature)
        if not before:  # a feature that worked once stays usable: one odd 400 must not
            caps.supported[feature] = supported  # demote it
        changed = caps.supported[feature] != before
        if changed:
            caps.learned = time.time()
    if changed:
        _save(_key(base_url, model))


def remember_parallel(base_url: str, model: str, limit: int) -> None:
    """Keep `limit`, the calls in flight this server was found to take, for the next run."""
    caps = capabilities_for(base_url, model)
    with _lock:
        changed = caps.parallel != limit
        caps.parallel, caps.parallel_learned = limit, time.time()
    if changed:
        _save(_key(base_url, model))


def degraded(base_url: str, model: str) -> bool:
    """Whether structured output is taken down the ladder on an earlier run's word only."""
    caps = capabilities_for(base_url, model)
    with _lock:
        return any(
            caps.supported.get(mode) is False and mode in caps.remembered
            for mode in STRUCTURED_MODES
        )


def forget(base_url: str, model: str) -> None:
    """Learn this server's capabilities again (it answered as if it had changed)."""
    key = _key(base_url, model)
    with _lock:
        dropped = _registry.pop(key, None)
    if dropped is not None and (dropped.supported or dropped.parallel):
        log.info("probing %s %s again", base_url, model)
        _save(key)


def forget_all() -> None:
    """For tests and for the settings dialog after the endpoint changes (what is remembered
    on disk stays; `remember_in(None)` stops remembering)."""
    with _lock:
        _registry.clear()


def remember_in(path: Path | None) -> None:
    """Keep what is learned in `path` from now on, and know what it holds (None: keep it
    for this process only). A missing or unreadable file is no error: it is learned."""
    global _memory
    with _lock:
        _memory = path
    if path is None:
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    entries = data.get("servers", []) if isinstance(data, dict) else []
    oldest = time.time() - MAX_AGE_DAYS * 86400
    with _lock:
        for entry in entries if isinstance(entries, list) else []:
            loaded = _loaded(entry, oldest)
            if loaded is not None:
                key, caps = loaded
                _registry.setdefault(key, caps)


def _loaded(entry: Any, oldest: float) -> tuple[tuple[str, str], Capabilities] | None:
    if not isinstance(entry, dict):
        return None
    supported = entry.get("supported")
    learned = entry.get("learned")
    if not isinstance(supported, dict) or not isinstance(learned, int | float) or learned < oldest:
        return None
    known = {str(k): v for k, v in supported.items() if isinstance(v, bool)}
    key = _key(str(entry.get("base_url", "")), str(entry.get("model", "")))
    caps = Capabilities(known, set(known), float(learned))
    caps.parallel, caps.parallel_learned = _loaded_parallel(entry.get("parallel"), oldest)
    return key, caps


def _loaded_parallel(value: Any, oldest: float) -> tuple[int | None, float]:
    """The remembered number of parallel calls, unless missing, malformed or too old."""
    if not isinstance(value, dict):
        return None, 0.0
    limit, learned = value.get("limit"), value.get("learned")
    if type(limit) is not int or limit < 1 or not isinstance(learned, int | float):
        return None, 0.0
    return (limit, float(learned)) if learned >= oldest else (None, 0.0)


def _save(key: tuple[str, str]) -> None:
    """Write what is known of server `key` into the remembered file (atomically, keeping
    what another process wrote there of other servers); a failure is only logged."""
    with _lock:
        path = _memory
        caps = _registry.get(key)
        mine = _entry(key, caps) if caps is not None else None
    if path is None:
        return
    with _saving:
        _merge_into(path, key, mine)


def _entry(key: tuple[str, str], caps: Capabilities) -> dict[str, Any] | None:
    """What the file keeps of one server (None: nothing worth keeping)."""
    if not caps.supported and caps.parallel is None:
        return None
    url, model = key
    entry: dict[str, Any] = {"base_url": url, "model": model}
    entry.update(supported=dict(caps.supported), learned=caps.learned)
    if caps.parallel is not None:
        entry["parallel"] = {"limit": caps.parallel, "learned": caps.parallel_learned}
    return entry


def _merge_into(path: Path, key: tuple[str, str], mine: dict[str, Any] | None) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        servers = [e for e in data.get("servers", []) if isinstance(e, dict)]
    except (OSError, ValueError, AttributeError):
        servers = []
    servers = [e for e in servers if _key(str(e.get("base_url")), str(e.get("model"))) != key]
    if mine is not None:
        servers.append(mine)
    try:
        _write(path, json.dumps({"servers": servers}, indent=1))
    except OSError as exc:
        log.warning("could not remember the server's capabilities in %s: %s", path, exc)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".capabilities.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
