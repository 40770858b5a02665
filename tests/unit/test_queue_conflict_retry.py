"""The queue's conflict retries: exponential backoff with jitter inside a time budget
(``graph_conflict_retry_s``), on an injected clock and sleep (nothing sleeps here). A timeout
abort is never retried. The real server's conflicts are met in
tests/integration/test_queue_races.py."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from semgraph.config import load_settings
from semgraph.errors import GraphConflict, GraphTimeout, GraphUnavailable
from semgraph.queue.backoff import CONFLICT_BACKOFF_CAP_S, RetryBudget, backoff_ceiling_s
from semgraph.queue.store import JobStore
from semgraph.queue.transaction import Retry


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds


class FakeTx:
    def __init__(self) -> None:
        self.done = False

    def commit(self) -> None:
        self.done = True

    def rollback(self) -> None:
        self.done = True

    def closed(self) -> bool:
        return self.done


class FakeSession:
    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def begin_transaction(self) -> FakeTx:
        return FakeTx()


class FakeGraph:
    def session(self) -> FakeSession:
        return FakeSession()

    @contextmanager
    def transaction(self, what: str) -> Iterator[FakeTx]:
        """As :meth:`semgraph.db.Graph.transaction`: commit at the end, else roll back."""
        with self.session() as session:
            tx = session.begin_transaction()
            try:
                yield tx
                tx.commit()
            finally:
                if not tx.closed():
                    tx.rollback()


def store(clock: FakeClock, **settings: Any) -> JobStore:
    return JobStore(
        FakeGraph(),  # type: ignore[arg-type]
        load_settings(**settings),
        rng=random.Random(7),
        clock=clock,
        sleep=clock.sleep,
    )


def failing(times: int, error: Exception) -> tuple[list[int], Any]:
    calls: list[int] = []

    def fn(tx: FakeTx) -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "done"

    return calls, fn


def test_budget_grows_exponentially_and_stops_at_the_time_budget() -> None:
    clock = FakeClock()
    budget = RetryBudget(20.0, 100_000, clock=clock, rng=random.Random(1))
    while (delay := budget.next_delay()) is not None:
        clock.sleep(delay)
    assert sum(clock.sleeps) == pytest.approx(20.0)  # the last sleep is cut to what remains
    for n, delay in enumerate(clock.sleeps[:-1], start=1):
        ceiling = backoff_ceiling_s(n, budget.base_s, budget.cap_s)
        assert ceiling / 2 <= delay <= ceiling <= CONFLICT_BACKOFF_CAP_S
    assert clock.sleeps[8] > 10 * clock.sleeps[0]  # exponential, not linear
    assert 20 < budget.tries < 60  # tens of tries, not the 30 sub-second ones of before


def test_budget_also_stops_at_max_tries_and_zero_means_no_retry() -> None:
    clock = FakeClock()
    budget = RetryBudget(1000.0, 3, clock=clock, rng=random.Random(1))
    assert budget.next_delay() is not None and budget.next_delay() is not None
    assert budget.next_delay() is None and budget.tries == 3
    assert RetryBudget(0.0, 10, clock=clock, rng=random.Random(1)).next_delay() is None


def test_a_conflict_lasting_seconds_is_outlasted() -> None:
    """On snapshot isolation a conflicting transaction that holds its write for 5 s makes
    every retry before it ends fail; the write succeeds once it is over."""
    clock = FakeClock()
    jobs = store(clock, graph_conflict_retry_s=20.0)
    ends = clock.now + 5.0
    calls: list[float] = []

    def fn(tx: FakeTx) -> str:
        calls.append(clock.now)
        if clock.now < ends:
            raise GraphConflict("claim: transient server error, may be retried")
        return "claimed"

    assert jobs._write("claim", fn) == "claimed"
    assert len(calls) > 2 and calls[-1] >= ends and calls[-2] < ends
    assert clock.now - 1000.0 < 5.0 + CONFLICT_BACKOFF_CAP_S + 1e-9


@pytest.mark.parametrize("error", [GraphConflict("lost"), Retry()])
def test_exhausted_budget_raises_a_conflict_that_says_how_long(error: Exception) -> None:
    clock = FakeClock()
    jobs = store(clock, graph_conflict_retry_s=3.0)
    calls, fn = failing(10_000, error)
    with pytest.raises(GraphConflict, match=r"still conflicting after \d+ tries in 3\.0s"):
        jobs._write("enqueue", fn)
    assert sum(clock.sleeps) == pytest.approx(3.0)
    assert len(calls) == len(clock.sleeps) + 1


def test_a_timeout_abort_is_never_retried() -> None:
    clock = FakeClock()
    jobs = store(clock)
    calls, fn = failing(1, GraphTimeout("publish: aborted at its execution timeout"))
    with pytest.raises(GraphTimeout):
        jobs._write("claim", fn)
    assert calls == [1] and clock.sleeps == []


def test_a_broken_connection_before_commit_is_retried_within_the_budget() -> None:
    clock = FakeClock()
    jobs = store(clock, graph_conflict_retry_s=5.0)
    calls, fn = failing(2, GraphUnavailable("connection reset"))
    assert jobs._write("heartbeat", fn) == "done"
    assert len(calls) == 3 and len(clock.sleeps) == 2
