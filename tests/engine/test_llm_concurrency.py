"""How many calls go to a server at once: the limit's arithmetic on made-up timings (a
simulated server, no clock), and the limiter against the scripted server's slots."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from gam_desktop.engine.llm import LLMClient, LLMSettings, capabilities, concurrency
from gam_desktop.engine.llm.concurrency import Limiter
from gam_desktop.engine.llm.limit import AdaptiveLimit, Sample
from gam_desktop.engine.progress import CancelToken, OperationCancelled
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.engine.test_llm_client import memorize, release_at


def simulate(slots: int, start: int, calls: int = 80) -> list[int]:
    """A client keeping `limit` calls in flight at a server that works on `slots` at once
    (1 s each, the first token after 0.1 s) and queues the rest: the limit after each call."""
    limit = AdaptiveLimit(start)
    free = [0.0] * slots  # when each slot is next free
    flight: list[tuple[float, float, float, int, bool]] = []
    now, sent, limits = 0.0, 0, []
    while sent < calls or flight:
        while sent < calls and len(flight) < limit.limit:
            slot = min(range(slots), key=free.__getitem__)
            begin = max(now, free[slot])
            free[slot] = begin + 1.0
            n = len(flight) + 1
            flight.append((begin + 1.0, now, begin + 0.1, n, n >= limit.limit))
            sent += 1
        flight.sort()
        end, when, first, n, full = flight.pop(0)
        now = end
        limit.observe(Sample(when, n, first - when, end - when, full), now)
        limits.append(limit.limit)
    return limits


@pytest.mark.parametrize(("slots", "start"), [(1, 8), (1, 2), (2, 8), (4, 8)])
def test_calls_that_queue_lower_the_limit_to_the_servers_slots(slots: int, start: int) -> None:
    limits = simulate(slots, start)
    settled = limits[len(limits) // 2 :]
    if start > slots:  # down as soon as a call queued (the first after the slots' worth)
        assert limits[slots] < start
    assert slots <= min(settled) and max(settled) <= slots + 1  # a probe one above at most


def test_a_flat_time_per_call_raises_the_limit_to_what_the_server_takes() -> None:
    limits = simulate(8, 2)
    assert limits[0] == 2 and max(limits) >= 8
    assert 8 <= min(limits[-10:]) <= max(limits[-10:]) <= 9


def test_the_limit_is_raised_only_while_in_use() -> None:
    limit = AdaptiveLimit(2)
    for n in range(4):  # flat, but never two in flight: nothing says two more would be flat
        limit.observe(Sample(float(n), 1, 0.1, 1.0, full=False), n + 1.0)
    assert limit.limit == 2
    limit.observe(Sample(10.0, 2, 0.1, 1.0, full=True), 11.0)
    limit.observe(Sample(10.0, 2, 0.1, 1.0, full=True), 11.0)
    assert limit.limit == 3


def test_a_429_or_a_timeout_halves_the_limit_once_for_the_calls_sent_before() -> None:
    limit = AdaptiveLimit(8)
    assert limit.back_off(sent=1.0, now=2.0) and limit.limit == 4
    assert not limit.back_off(sent=1.5, now=2.5) and limit.limit == 4  # sent at 8: counted
    assert limit.back_off(sent=3.0, now=4.0) and limit.limit == 2
    limit.back_off(sent=5.0, now=6.0)
    limit.back_off(sent=7.0, now=8.0)
    assert limit.limit == 1


def test_the_slots_a_server_named_are_kept_through_a_slow_call_not_through_a_429() -> None:
    limit = AdaptiveLimit(4, ceiling=4, floor=4)  # llama.cpp said: four slots
    limit.observe(Sample(0.0, 4, 0.1, 1.0, full=True), 1.0)
    limit.observe(Sample(0.0, 4, 1.5, 2.5, full=True), 2.5)  # waited, for the machine
    assert limit.limit == 4
    assert limit.back_off(sent=3.0, now=4.0) and limit.limit == 2


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_rate_limit_named_by_a_429_caps_the_limit() -> None:
    clock = Clock()
    limiter = Limiter(8, clock=clock)
    first = limiter.acquire()
    clock.now = 3.0
    limiter.done(first, first_token=0.5)  # a call works 3 s
    refused = limiter.acquire()
    limiter.backed_off(refused, rpm=20)  # 20 a minute, 3 s each: one at a time
    assert limiter.limit == 1


def test_the_first_token_may_wait_for_the_calls_queued_ahead() -> None:
    clock = Clock()
    limiter = Limiter(3, clock=clock)
    alone = limiter.acquire(fixed=1)
    assert limiter.first_token_limit(alone, 10.0) == 10.0  # nothing can be ahead of it
    limiter.failed(alone)
    permits = [limiter.acquire() for _ in range(3)]
    # Any of the other two may reach the server first; nothing measured yet, so each call
    # ahead may take as long as the silence limit.
    assert limiter.first_token_limit(permits[0], 10.0) == 30.0
    clock.now = 2.0
    limiter.done(permits[0], first_token=0.2)  # a call works 2 s
    assert limiter.first_token_limit(permits[2], 10.0) == pytest.approx(10.0 + 2 * 3.0)
    limiter.slots = 2  # the server works on two at once: one of them is not ahead
    assert limiter.first_token_limit(permits[2], 10.0) == pytest.approx(10.0 + 3.0)


def test_each_step_of_patience_doubles_the_first_token_limit_up_to_a_cap() -> None:
    limiter = Limiter(3, clock=Clock())
    limits = []
    for steps in range(7):
        permit = limiter.acquire(fixed=1, patience=steps)
        limits.append(limiter.first_token_limit(permit, 10.0))
        limiter.failed(permit)
    assert limits == [10.0, 20.0, 40.0, 80.0, 80.0, 80.0, 80.0]  # 8 times at most
    permit = limiter.acquire(fixed=1, patience=10**6)
    assert limiter.first_token_limit(permit, 10.0) == 80.0
    assert limiter.first_token_limit(permit, 600.0) == 1800.0  # half an hour at most
    assert limiter.first_token_limit(permit, 3600.0) == 3600.0  # never shorter than asked
    patient = limiter.acquire(patience=1)  # two of ours may be queued ahead of it
    assert limiter.first_token_limit(patient, 10.0) == 2 * (10.0 + 2 * 10.0)


def test_no_first_token_makes_the_next_calls_patient_until_first_tokens_are_prompt() -> None:
    """Our limiter cannot see another program's calls at the server: a call that got no
    first token says the next ones may wait as long (TCP keeps a backed-off timeout for the
    next segments); a step is given back for each call sent since the last change whose
    first token came within what our own calls explain."""
    clock = Clock()
    limiter = Limiter(1, clock=clock)
    silent = limiter.acquire()
    limiter.unanswered(silent)  # 10 s without a first token
    assert limiter.patience == 1
    retry = limiter.acquire(patience=silent.patience + 1)
    assert limiter.first_token_limit(retry, 10.0) == 20.0
    clock.now = 1.0
    limiter.unanswered(retry)  # 20 s without one either
    assert limiter.patience == 2
    later = limiter.acquire()  # another call: as patient as the last attempt
    assert limiter.first_token_limit(later, 10.0) == 40.0
    clock.now = 30.0
    limiter.done(later, first_token=25.0, silence=10.0)  # waited 25 s: still needed
    assert limiter.patience == 2
    for n in range(2):
        clock.now += 1.0
        prompt = limiter.acquire()
        clock.now += 3.0
        limiter.done(prompt, first_token=clock.now - 1.0, silence=10.0)  # 2 s: prompt
        assert limiter.patience == 1 - n
    assert limiter.first_token_limit(limiter.acquire(fixed=1), 10.0) == 10.0


def test_patience_is_given_back_only_by_calls_sent_since_it_grew() -> None:
    clock = Clock()
    limiter = Limiter(4, clock=clock)
    early, silent = limiter.acquire(), limiter.acquire()
    clock.now = 10.0
    limiter.unanswered(silent)
    limiter.done(early, first_token=1.0, silence=10.0)  # sent before: it says nothing
    assert limiter.patience == 1


def test_a_full_limiter_holds_a_call_and_a_cancel_ends_the_wait() -> None:
    limiter = Limiter(1)
    held = limiter.acquire()
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(OperationCancelled):
        limiter.acquire(cancel=cancel)
    limiter.failed(held)
    assert limiter.acquire(cancel=CancelToken()).in_flight == 1


def auto(server: RunningServer, **update: object) -> LLMSettings:
    settings = LLMSettings(
        base_url=server.base_url, model="scripted", api_key="k", timeout=5, backoff_base=0.01
    )
    return settings.model_copy(update=update)


def test_a_server_that_names_its_slots_gets_them_and_one_call_waiting() -> None:
    with RunningServer(slots=1) as server:
        release_at(server, 2)
        client = LLMClient(auto(server))
        client.parallel_map(lambda _: memorize(client), range(5))
        assert server.state.max_in_flight == 2  # /props said one slot: one more waits
        assert server.state.slots.completed == 5
        assert client.limiter.limit == 2


def test_the_workers_setting_overrides_the_limit() -> None:
    with RunningServer(slots=1) as server:
        release_at(server, 4)
        client = LLMClient(auto(server, workers=4))
        client.parallel_map(lambda _: memorize(client), range(6))
        assert server.state.max_in_flight == 4  # four at once, though the server has one


def test_the_learned_limit_is_remembered_per_server_and_model(tmp_path: Path) -> None:
    path = tmp_path / "capabilities.json"
    capabilities.remember_in(path)
    with RunningServer() as server:  # no /props: the limit is learned
        client = LLMClient(auto(server))
        assert client.limiter.limit == concurrency.LOCAL_START == 2
        permit = client.limiter.acquire()
        client.limiter.backed_off(permit)  # a 429: halved, and remembered
        entry = json.loads(path.read_text())["servers"][0]
        assert (entry["model"], entry["parallel"]["limit"]) == ("scripted", 1)

        capabilities.forget_all()  # the next run of the app
        capabilities.remember_in(path)
        assert concurrency.current(server.base_url, "scripted") == 1
        assert concurrency.current(server.base_url, "another-model") is None
        assert LLMClient(auto(server)).limiter.limit == 1  # starts from what was learned
        assert LLMClient(auto(server, model="another-model")).limiter.limit == 2


def test_the_recent_calls_are_read_under_the_limiters_lock() -> None:
    """Another worker's call ending while this one reads the recent calls (done ->
    observe appends) must wait for the lock: an unlocked read died with "deque mutated
    during iteration" in a parallel gam-add. The recent calls here let another thread add
    a call in the middle of being read whenever the limiter's lock is free to take."""
    from collections import deque
    from collections.abc import Iterator

    from gam_desktop.engine.llm.limit import HISTORY

    limiter = Limiter(4)
    lock = limiter._changed
    for _ in range(3):
        limiter.done(limiter.acquire(), None)

    class Racing(deque[Sample]):
        def __iter__(self) -> Iterator[Sample]:
            reading = super().__iter__()
            yield next(reading)

            def other_call_ends() -> None:
                if lock.acquire(blocking=False):  # the lock is free: a call ends meanwhile
                    try:
                        self.append(Sample(0.0, 1, 0.1, 1.0))
                    finally:
                        lock.release()

            other = threading.Thread(target=other_call_ends)
            other.start()
            other.join()
            yield from reading

    history = limiter._limit._history
    limiter._limit._history = Racing(history, maxlen=HISTORY)
    permit = limiter.acquire(4)
    assert limiter.first_token_limit(permit, 1.0) >= 1.0
    limiter.done(permit, None, 1.0)
    backed = limiter.acquire(4)
    limiter.backed_off(backed, rpm=60.0)
