"""What each server supports, probed once and remembered for the process.

A server that rejects `response_format={"type": "json_schema"}` or `tools` with a
400 is marked so, and later calls go straight to the next rung of the ladder
instead of paying for the rejected request again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

STRUCTURED_MODES = ("json_schema", "json_object", "prompt")


@dataclass
class Capabilities:
    supported: dict[str, bool] = field(default_factory=dict)  # mode or "tools" -> known?

    def usable(self, feature: str) -> bool:
        return self.supported.get(feature, True)

    def known(self, feature: str) -> bool | None:
        return self.supported.get(feature)


_registry: dict[tuple[str, str], Capabilities] = {}
_lock = threading.Lock()


def capabilities_for(base_url: str, model: str) -> Capabilities:
    with _lock:
        return _registry.setdefault((base_url.rstrip("/"), model), Capabilities())


def mark(base_url: str, model: str, feature: str, supported: bool) -> None:
    caps = capabilities_for(base_url, model)
    with _lock:
        # A feature that worked once stays usable: one odd 400 must not demote it.
        if not caps.supported.get(feature, False):
            caps.supported[feature] = supported


def forget_all() -> None:
    """For tests and for the settings dialog after the endpoint changes."""
    with _lock:
        _registry.clear()
