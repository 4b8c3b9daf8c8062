"""What a research run may spend: iterations, LLM calls, tokens and wall time.

Checked between steps (a call in flight is never cut off), so a run stops with a partial
report that names the limit it hit instead of running on or failing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gam_desktop.engine.llm.usage import UsageMeter
from gam_desktop.engine.textutil import plural


@dataclass(frozen=True)
class Limits:
    iterations: int = 3  # plan/search/integrate/reflect rounds
    llm_calls: int = 30
    tokens: int = 60_000  # prompt + completion, all calls together
    seconds: float = 600.0  # a local model on a laptop takes minutes


@dataclass
class Budget:
    limits: Limits
    usage: UsageMeter
    started: float = field(default_factory=time.monotonic)
    _calls0: int = 0
    _tokens0: int = 0

    def __post_init__(self) -> None:  # the meter may have counted calls before this run
        self._calls0 = self.usage.calls
        self._tokens0 = self.usage.prompt_tokens + self.usage.completion_tokens

    @property
    def calls(self) -> int:
        return self.usage.calls - self._calls0

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens - self._tokens0

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def calls_left(self) -> int:
        return max(0, self.limits.llm_calls - self.calls)

    def exceeded(self, calls_needed: int = 1) -> str | None:
        """Why no further step of `calls_needed` calls may run, in words; None if it may."""
        limits = self.limits
        if self.calls + calls_needed > limits.llm_calls:
            return f"the LLM call limit ({plural(limits.llm_calls, 'call')}; {self.calls} made)"
        if self.tokens >= limits.tokens:
            return f"the token limit ({limits.tokens:,}; {self.tokens:,} used)"
        if self.seconds >= limits.seconds:
            return f"the time limit ({limits.seconds:g} s; {self.seconds:.0f} s spent)"
        return None
