"""How many calls to keep in flight at a server, learned from how long the calls take.

A server works on a few requests at once (llama.cpp's slots, `-np`; Ollama and LM Studio
often one) and queues the rest. A call that waited in the queue reaches its first token
later by the time it waited, and the server is no faster for it. So the limit follows
TCP's additive increase / multiplicative decrease, measured in time as Netflix's
concurrency-limits does:

- the wait of each call is the time to its first token (to its whole reply when it was not
  streamed); the shortest wait yet is the wait of a call that did not queue (not the
  shortest of the recent calls only: while calls queue, none of those is), and what a call
  waited beyond it is its time in the queue;
- a call that queued for more than half of its own work time says the limit is too high:
  it goes down at once, to what the recent calls say the server works on at a time
  (Little's law: calls in flight x work / (work + queue)), at least by one, but never below
  the `floor` (what the server itself said it takes: a call that waited for a busy
  machine, or behind another app's call, is no reason to use fewer);
- a 429 or a call that timed out halves it;
- once as many calls as the limit ended without queueing, with the limit in use, it goes
  up by one. (No slow start: a queued call is seen only when it ends, by which time a
  doubling limit has long overshot; the start comes from the server's word instead.)

A call sent before the last change says nothing about the new limit: it moves it no more.
Nothing here keeps time or threads: the caller gives the clock's readings
(llm/concurrency.py), the tests give made-up ones.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass

QUEUED_SHARE = 0.5  # a call queued when it waited more than half its own work time
MIN_QUEUE_S = 0.02  # a wait shorter than this is noise (scheduling, the network)
HISTORY = 30  # the recent calls that say what the server works on at once
BACKOFF = 0.5  # a 429 or a timeout halves the limit
MAX_LIMIT = 64


@dataclass(frozen=True)
class Sample:
    """One call that got its reply."""

    sent: float  # the clock's reading when it was sent
    in_flight: int  # our calls in flight as it was sent, itself included
    wait: float  # seconds to its first token (to its whole reply when not streamed)
    total: float  # seconds to the end of its reply
    full: bool = False  # it was sent with the limit in use (as many in flight as allowed)


class AdaptiveLimit:
    """The number of calls to keep in flight, between 1 and `ceiling`."""

    def __init__(self, start: int, ceiling: int = MAX_LIMIT, floor: int = 1) -> None:
        self.ceiling = max(1, min(ceiling, MAX_LIMIT))
        self.floor = max(1, min(floor, self.ceiling))  # what queueing never goes below
        self.limit = max(1, min(start, self.ceiling))
        self.changed = -math.inf  # when the limit last changed
        self._history: deque[Sample] = deque(maxlen=HISTORY)
        self._base = math.inf  # the shortest wait yet: a call that did not queue
        self._flat = 0  # calls sent since the last change that did not queue
        self._used = False  # one of them was sent with the limit in use (`Sample.full`)

    def observe(self, sample: Sample, now: float) -> bool:
        """Learn from a call that got its reply; True when the limit changed."""
        self._history.append(sample)
        self._base = min(self._base, sample.wait)
        if sample.sent < self.changed:
            return False  # sent at another limit: it says nothing of this one
        queued = self.queue_delay(sample)
        if queued > max(QUEUED_SHARE * (sample.total - queued), MIN_QUEUE_S):
            target = max(self.floor, min(self.limit - 1, self.server_takes()))
            return self._set(target, now)
        self._flat += 1
        self._used = self._used or sample.full
        if self._used and self._flat >= self.limit:
            return self._set(self.limit + 1, now)
        return False

    def back_off(self, sent: float, now: float) -> bool:
        """A 429 or a timeout, for a call sent at `sent`; True when the limit changed."""
        if sent < self.changed:
            return False  # sent at a higher limit, already lowered since
        return self._lower(math.floor(self.limit * BACKOFF), now)

    def cap(self, ceiling: int, now: float) -> bool:
        """The server said how much it takes at most (its slots, its rate limit)."""
        self.ceiling = max(1, min(ceiling, MAX_LIMIT))
        return self.limit > self.ceiling and self._set(self.ceiling, now)

    def queue_delay(self, sample: Sample) -> float:
        """How long `sample` waited beyond the shortest wait yet: its time in a queue."""
        return max(0.0, sample.wait - min(self._base, sample.wait))

    def server_takes(self) -> int:
        """What the recent calls say the server works on at once (Little's law, the median
        over as many calls as the limit: one call sent in a burst may wait longer)."""
        recent = list(self._history)[-max(self.limit, 3) :]
        takes = []
        for sample in recent:
            queued = self.queue_delay(sample)
            work = max(sample.total - queued, 1e-6)
            takes.append(sample.in_flight * work / (work + queued))
        return max(1, round(statistics.median(takes))) if takes else self.limit

    def work_time(self) -> float | None:
        """The longest recent call without its time in a queue (None before any)."""
        works = [s.total - self.queue_delay(s) for s in self._history]
        return max(works) if works else None

    def _lower(self, target: int, now: float) -> bool:
        return self._set(max(1, min(self.limit - 1, target)), now)

    def _set(self, limit: int, now: float) -> bool:
        self._flat, self._used, self.changed = 0, False, now
        limit = max(1, min(limit, self.ceiling))
        if limit == self.limit:
            return False
        self.limit = limit
        return True
