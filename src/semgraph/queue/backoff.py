"""Exponential backoff with jitter: for jobs that raised, and for queue transactions that
lost a conflict."""

from __future__ import annotations

import random
from collections.abc import Callable

from semgraph.errors import QueueInputError


def backoff_ceiling_s(attempt: int, base_s: float, cap_s: float) -> float:
    """The un-jittered delay after ``attempt`` (1-based): ``base * 2**(attempt-1)``, capped."""
    if attempt < 1:
        raise QueueInputError(f"attempt must be >= 1, got {attempt}")
    # min() before the power keeps huge attempt numbers from overflowing a float
    exponent = min(attempt - 1, 64)
    return float(min(cap_s, base_s * (2.0**exponent)))


def backoff_s(attempt: int, base_s: float, cap_s: float, rng: random.Random | None = None) -> float:
    """A delay in ``[ceiling/2, ceiling]`` ("equal jitter"): never zero unless ``base_s`` is,
    never above ``cap_s``, and spread so retries of many jobs do not synchronise."""
    ceiling = backoff_ceiling_s(attempt, base_s, cap_s)
    half = ceiling / 2.0
    return half + (rng or random).uniform(0.0, half)


#: the first sleep after a lost conflict, and the most any one sleep lasts
CONFLICT_BACKOFF_BASE_S = 0.005
CONFLICT_BACKOFF_CAP_S = 1.0


class RetryBudget:
    """The retries of one transaction that lost a conflict: exponential backoff with jitter
    (:func:`backoff_s`, from :data:`CONFLICT_BACKOFF_BASE_S` up to
    :data:`CONFLICT_BACKOFF_CAP_S`) until ``budget_s`` has passed since the first try, or
    ``max_tries`` were made. On snapshot isolation (Memgraph) the later of two conflicting
    writers aborts at once, so the budget must outlast the transaction it conflicts with,
    not just a few milliseconds. ``clock`` and ``rng`` are injected (tests need no sleeping).
    """

    def __init__(
        self,
        budget_s: float,
        max_tries: int,
        *,
        clock: Callable[[], float],
        rng: random.Random,
        base_s: float = CONFLICT_BACKOFF_BASE_S,
        cap_s: float = CONFLICT_BACKOFF_CAP_S,
    ) -> None:
        self.budget_s, self.max_tries = budget_s, max_tries
        self.base_s, self.cap_s = base_s, cap_s
        self._clock, self._rng = clock, rng
        self.started = clock()
        self.tries = 1  # the caller is making the first one

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self.started

    def next_delay(self) -> float | None:
        """After a failed try: how long to sleep before the next one, or None when the
        budget is spent (the last sleep is cut to what remains of it)."""
        remaining = self.budget_s - self.elapsed_s
        if self.tries >= self.max_tries or remaining <= 0:
            return None
        delay = min(backoff_s(self.tries, self.base_s, self.cap_s, self._rng), remaining)
        self.tries += 1
        return delay
