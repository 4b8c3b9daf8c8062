"""What LLM calls cost, for the estimate before a big drop.

A small table, in dollars per million tokens, by provider (the endpoint's host name) and
model; a person may edit it (the entry points keep it as `prices.json` in the app's
configuration folder, written with the defaults the first time so there is a file to
edit). A model is found by its name or by the longest name it starts with
("gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini"). An endpoint not in the table (a
local server, an unknown provider) has no price: the estimate then names time and tokens.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)

# OpenAI's list prices (USD per 1M tokens, standard tier) when this table was written.
DEFAULTS: dict[str, Any] = {
    "currency": "USD",
    "unit": "per million tokens",
    "providers": {
        "api.openai.com": {
            "gpt-4o-mini": {"input": 0.15, "output": 0.60},
            "gpt-4o": {"input": 2.50, "output": 10.00},
            "gpt-4.1": {"input": 2.00, "output": 8.00},
            "gpt-4.1-mini": {"input": 0.40, "output": 1.60},
            "gpt-4.1-nano": {"input": 0.10, "output": 0.40},
        }
    },
}


@dataclass(frozen=True)
class Price:
    input: float  # per million prompt tokens
    output: float  # per million completion tokens
    currency: str = "USD"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


class PriceTable:
    def __init__(self, data: dict[str, Any]) -> None:
        self.currency = str(data.get("currency") or "USD")
        providers = data.get("providers")
        self.providers: dict[str, dict[str, Any]] = (
            {str(k).lower(): v for k, v in providers.items() if isinstance(v, dict)}
            if isinstance(providers, dict)
            else {}
        )

    @classmethod
    def defaults(cls) -> PriceTable:
        return cls(DEFAULTS)

    @classmethod
    def load(cls, path: Path) -> PriceTable:
        """The table in `path`; the defaults (written there when it is missing) when it is
        missing or unreadable."""
        try:
            return cls(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(DEFAULTS, indent=2) + "\n", encoding="utf-8")
            except OSError as exc:
                log.info("no price table written to %s: %s", path, exc)
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("the price table %s cannot be read (%s); using the defaults", path, exc)
        return cls.defaults()

    def price(self, base_url: str, model: str) -> Price | None:
        models = self.providers.get((urlparse(base_url).hostname or "").lower())
        if not models:
            return None
        name = model if model in models else _longest_prefix(model, models)
        entry = models.get(name) if name else None
        if not isinstance(entry, dict):
            return None
        try:
            return Price(float(entry["input"]), float(entry["output"]), self.currency)
        except (KeyError, TypeError, ValueError):
            return None


def _longest_prefix(model: str, names: dict[str, Any]) -> str | None:
    fitting = [n for n in names if model.startswith(f"{n}-")]
    return max(fitting, key=len) if fitting else None
