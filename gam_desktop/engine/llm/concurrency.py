"""How many calls go to a server at once: a semaphore whose size the server sets.

Every call of `LLMClient.complete` holds a permit of its server's `Limiter` while it is
in flight (all the clients of a process share it, per base URL and model), and
`parallel_map` starts no more items than the limiter allows. The size is the person's
number when they set one (`workers` > 0); otherwise it is learned (llm/limit.py),
starting from what the server says it takes: llama.cpp's `GET /props` `total_slots`, and
one call waiting (that number is then kept, lowered only by a 429 or a timeout), else what
an earlier run learned, else a guess: few for a server on this machine or the local
network, more for a known provider. A 429 that names the provider's rate limit caps it
(Little's law: requests per minute x seconds per call).

The limiter also says how long a call may wait for its first token: the silence limit,
plus a call's work for each of our calls that may be queued ahead of it at the server,
times its patience. Our limiter cannot see the calls of another program at the same server
(an evaluation, a chat window): a call queued behind them waits longer than anything our
own calls explain, and asking it again with the same limit only fails the same way, each
time from the back of the server's queue. So a call that got no first token doubles the
patience of its next attempt, and of the calls that follow it (up to 8 times the limit, and
no more than 30 minutes unless the limit itself was longer); patience is given back a
step for each call, sent since it last changed, whose first token came within the limit it
would have had without it. TCP keeps a backed-off retransmission timeout for the next
segments in the same way, until a fresh measurement says the path is fast again (Karn's
algorithm).

llama.cpp's `GET /slots` is not asked whether a silent call only waits behind another
client's work: it lists the slots busy, not whose calls they hold (the OpenAI API gives our
call no task id to find there), so our own long prompt being read, another client's call
and a slot that is stuck look alike; it is off on servers started with `--no-slots`, absent
behind proxies and on the other local servers, and its fields changed between versions.
And a call still queued has no reply headers yet, so its wait is bounded by the HTTP read
timeout fixed when it was sent: extending it on `/slots`' word would need a transport of our
own. Growing patience needs neither, and costs only time when a server has truly hung.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from gam_desktop.engine.llm import capabilities
from gam_desktop.engine.llm.limit import MAX_LIMIT, AdaptiveLimit, Sample
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.engine.progress import CancelToken

log = logging.getLogger(__name__)
LOCAL_START = 2  # a server on this machine or network: Ollama and LM Studio often take one
REMOTE_START = 4  # a server elsewhere, not a provider we know
PROVIDER_START = 8  # a provider built for many callers at once
PROVIDERS = (
    "api.openai.com",
    "api.anthropic.com",
    "openrouter.ai",
    "api.groq.com",
    "api.mistral.ai",
    "api.deepseek.com",
    "api.together.xyz",
    "api.fireworks.ai",
    "generativelanguage.googleapis.com",
)
PROPS_TIMEOUT = 2.0  # seconds; /props is answered at once by the servers that have it
WORK_MARGIN = 1.5  # a queued call's wait is counted as this many of the longest recent calls
WAIT_TICK = 0.2  # seconds between looks at the cancel token while waiting for a permit
PATIENCE_GROWTH = 2  # no first token: the calls that follow wait this many times longer
PATIENCE_STEPS = 3  # ... at most this many times over (8 times the limit)
PATIENCE_CAP_S = 1800.0  # ... and no longer than this, unless the limit was longer
# Calls left waiting at a server that said how many it works on: its slot starts on the
# next call the moment a reply ends, instead of idling while the reply reaches us and the
# next request reaches it (on a busy machine a third of the time: tests/benchmarks/
# bench_concurrency.py). TCP Vegas keeps a packet or two queued for the same reason.
QUEUE_ALLOWANCE = 1
_making = threading.Lock()  # one limiter per server, and one /props question


@dataclass(frozen=True)
class Permit:
    """One call's place among the calls in flight."""

    sent: float  # the clock's reading when it was let through
    in_flight: int  # our calls in flight then, this one included
    full: bool  # as many in flight then as the learned limit allows
    allowed: int  # how many were allowed in flight then
    patience: int = 0  # doublings of its first-token limit (`patient`)


class Limiter:
    """A semaphore whose size changes: the learned limit, or the person's fixed number."""

    def __init__(
        self,
        start: int,
        *,
        slots: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[int], None] | None = None,
    ) -> None:
        self.slots = slots  # what the server said it works on at once, if it said
        self._limit = _pinned(slots) if slots else AdaptiveLimit(start)
        self._clock = clock
        self._on_change = on_change
        self._in_flight = 0
        self._changed = threading.Condition()
        self.probed = False  # /props asked (only for the automatic limit)
        self.patience = 0  # doublings of the first-token limit the next calls start from
        self._patience_changed = -math.inf  # when it last changed (the clock's reading)

    @property
    def limit(self) -> int:
        """The learned limit (what "automatic" means now)."""
        return self._limit.limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def allowed(self, fixed: int = 0) -> int:
        """How many calls may be in flight: `fixed` when the person set it, else the limit."""
        return fixed if fixed > 0 else self._limit.limit

    def acquire(
        self, fixed: int = 0, cancel: CancelToken | None = None, patience: int = 0
    ) -> Permit:
        """Wait for a place among the calls in flight (OperationCancelled on a cancel).
        `patience`: the steps of patience the call needs at least (an attempt after one
        that got no first token needs one more than that one had)."""
        with self._changed:
            while self._in_flight >= self.allowed(fixed):
                if cancel is not None:
                    cancel.raise_if_cancelled()
                self._changed.wait(WAIT_TICK)  # a cancel does not notify this condition
            self._in_flight += 1
            full = self._in_flight >= self._limit.limit
            patience = min(max(patience, self.patience), PATIENCE_STEPS)
            return Permit(self._clock(), self._in_flight, full, self.allowed(fixed), patience)

    def first_token_limit(self, permit: Permit, silence: float) -> float:
        """Seconds the call of `permit` may wait for its first token: the limit our own
        calls explain (`explained`), doubled for each step of the permit's patience."""
        return patient(self.explained(permit, silence), permit.patience)

    def explained(self, permit: Permit, silence: float) -> float:
        """What our own calls explain of a first token's wait: `silence`, plus a call's
        work for each of our calls that may be queued ahead of it: any other call allowed
        in flight with it (calls sent together reach the server in any order), beyond the
        server's slots (all of them when the slots are not known). Read under the lock:
        the calls ending on other threads add to the recent calls meanwhile."""
        with self._changed:
            ahead = max(0, permit.allowed - (self.slots or 1))
            work = self._limit.work_time()
        return silence + ahead * (work * WORK_MARGIN if work is not None else silence)

    def done(self, permit: Permit, first_token: float | None, silence: float | None = None) -> None:
        """The call of `permit` got its reply; `first_token` is when its first token came
        (None: the reply was not streamed, so only its end is known). With `silence` (the
        silence limit it had), a call that waited no longer than our own calls explain
        gives back a step of patience."""
        now = self._clock()
        wait = (first_token if first_token is not None else now) - permit.sent
        total = now - permit.sent
        sample = Sample(permit.sent, permit.in_flight, max(0.0, wait), total, permit.full)
        calm = silence is not None and wait <= self.explained(permit, silence)

        def learn() -> bool:
            if calm and self.patience > 0 and permit.sent >= self._patience_changed:
                self._set_patience(self.patience - 1, now)
            return self._limit.observe(sample, now)

        self._release(learn)

    def unanswered(self, permit: Permit) -> None:
        """The call of `permit` got no first token in time: a timeout (the limit backs
        off), and this call's next attempt and the calls that follow wait twice as long."""
        now = self._clock()

        def learn() -> bool:
            self._set_patience(max(self.patience, min(permit.patience + 1, PATIENCE_STEPS)), now)
            return self._limit.back_off(permit.sent, now)

        self._release(learn)

    def backed_off(self, permit: Permit, rpm: float | None = None) -> None:
        """The call of `permit` got a 429 (`rpm`: the rate limit it named) or timed out."""
        now = self._clock()

        def learn() -> bool:
            lowered = self._limit.back_off(permit.sent, now)
            work = self._limit.work_time()
            if rpm is None or work is None:
                return lowered
            return self._limit.cap(max(1, int(rpm * work / 60)), now) or lowered

        self._release(learn)

    def failed(self, _permit: Permit) -> None:
        """The call of `permit` failed in a way that says nothing of the server's load."""
        self._release(lambda: False)

    def take_slots(self, slots: int) -> None:
        """The server says it works on `slots` calls at once: keep them busy and one call
        waiting, never more, and fewer only after a 429 or a timeout."""
        with self._changed:
            self.slots = slots
            self._limit = _pinned(slots)
            limit = self._limit.limit
            self._changed.notify_all()
        if self._on_change is not None:
            self._on_change(limit)

    def _set_patience(self, patience: int, now: float) -> None:
        if patience != self.patience:
            self.patience, self._patience_changed = patience, now
            times = PATIENCE_GROWTH**patience
            log.info("waiting up to %dx as long for first tokens from the LLM server", times)

    def _release(self, learn: Callable[[], bool]) -> None:
        with self._changed:
            self._in_flight -= 1
            changed = learn()
            limit = self._limit.limit
            self._changed.notify_all()
        if changed:
            log.info("parallel calls to the LLM server: now %d", limit)
            if self._on_change is not None:
                self._on_change(limit)


def patient(limit: float, patience: int) -> float:
    """The first-token `limit` doubled for each step of `patience`, `PATIENCE_STEPS` times
    at most, and no longer than `PATIENCE_CAP_S` (never shorter than `limit`, though)."""
    if patience <= 0:
        return limit
    grown: float = limit * PATIENCE_GROWTH ** min(patience, PATIENCE_STEPS)
    return max(limit, min(grown, PATIENCE_CAP_S))


def _pinned(slots: int) -> AdaptiveLimit:
    busy = slots + QUEUE_ALLOWANCE
    return AdaptiveLimit(busy, ceiling=busy, floor=busy)


def limiter_for(settings: LLMSettings) -> Limiter:
    """The limiter of `settings`' server and model, shared by the whole process; the first
    automatic use asks the server how many calls it takes (once)."""
    caps = capabilities.capabilities_for(settings.base_url, settings.model)
    with _making:
        if caps.limiter is None:
            caps.limiter = Limiter(
                start_guess(settings.base_url, caps.parallel), on_change=_remember(settings)
            )
        limiter: Limiter = caps.limiter
        if settings.workers == 0 and not limiter.probed:
            limiter.probed = True
            slots = server_slots(settings)
            if slots is not None:
                limiter.take_slots(slots)
    return limiter


def expected(settings: LLMSettings) -> int:
    """How many calls will be in flight, for estimates: the person's number, the live or
    remembered limit, or the first guess (no network: this is asked before a build)."""
    if settings.workers > 0:
        return settings.workers
    return current(settings.base_url, settings.model) or start_guess(settings.base_url, None)


def current(base_url: str, model: str) -> int | None:
    """The automatic limit as it stands (this process's, else the remembered one)."""
    caps = capabilities.capabilities_for(base_url, model)
    if caps.limiter is not None:
        return int(caps.limiter.limit)
    return caps.parallel


def start_guess(base_url: str, remembered: int | None) -> int:
    if remembered is not None:
        return remembered
    host = (urlparse(base_url).hostname or "").lower()
    if is_local(host):
        return LOCAL_START
    if any(host == p or host.endswith(f".{p}") for p in PROVIDERS):
        return PROVIDER_START
    return REMOTE_START


def is_local(host: str) -> bool:
    """A server on this machine or the local network (where one GPU serves everyone)."""
    if host in ("localhost", "") or host.endswith((".local", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def server_slots(settings: LLMSettings) -> int | None:
    """llama.cpp's `GET /props` `total_slots` (at the address without `/v1`), or None for a
    server without it, a provider (never asked), or no answer in time."""
    host = (urlparse(settings.base_url).hostname or "").lower()
    if any(host == p or host.endswith(f".{p}") for p in PROVIDERS):
        return None
    root = settings.base_url.rstrip("/").removesuffix("/v1")
    request = urllib.request.Request(f"{root}/props")
    request.add_header("Authorization", f"Bearer {settings.key_value()}")
    try:
        with urllib.request.urlopen(request, timeout=PROPS_TIMEOUT) as response:
            data = json.loads(response.read(1_000_000) or b"{}")
    except (OSError, ValueError, urllib.error.URLError):
        return None
    slots = data.get("total_slots") if isinstance(data, dict) else None
    return slots if type(slots) is int and 0 < slots <= MAX_LIMIT else None


def _remember(settings: LLMSettings) -> Callable[[int], None]:
    def remember(limit: int) -> None:
        capabilities.remember_parallel(settings.base_url, settings.model, limit)

    return remember
