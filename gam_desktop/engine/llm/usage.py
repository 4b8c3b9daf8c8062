"""Counting LLM calls and tokens per operation and per stage."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from gam_desktop.engine.textutil import plural


@dataclass
class StageUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class UsageMeter:
    """Thread-safe totals; one meter per operation so reports are per operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stages: dict[str, StageUsage] = {}

    def record(self, stage: str, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            usage = self.stages.setdefault(stage, StageUsage())
            usage.calls += 1
            usage.prompt_tokens += prompt_tokens
            usage.completion_tokens += completion_tokens

    def absorb(self, other: UsageMeter) -> None:
        """Add `other`'s counts to these (the steps of one drop, into its total)."""
        if other is self:
            return
        with other._lock:
            theirs = {k: StageUsage(**vars(v)) for k, v in other.stages.items()}
        with self._lock:
            for stage, usage in theirs.items():
                mine = self.stages.setdefault(stage, StageUsage())
                mine.calls += usage.calls
                mine.prompt_tokens += usage.prompt_tokens
                mine.completion_tokens += usage.completion_tokens

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages.values())

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.stages.values())

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.stages.values())

    def summary(self) -> str:
        return (
            f"{plural(self.calls, 'LLM call')}, {self.prompt_tokens} prompt + "
            f"{self.completion_tokens} completion tokens"
        )
