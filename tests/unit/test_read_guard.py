"""The per-token read limiter's arithmetic (semgraph.web.read_guard): a token bucket per
caller and a cap on its requests in flight, with a clock passed in."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from semgraph.config import load_settings
from semgraph.web.read_guard import ReadLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limiter(clock: Clock, **update: object) -> ReadLimiter:
    return ReadLimiter(load_settings().model_copy(update=update), clock=clock)


def test_a_callers_rate_refills_with_time_and_says_when() -> None:
    clock = Clock()
    guard = limiter(clock, read_rate_per_s=0.5, read_rate_burst=2, read_max_concurrent=10)
    guard.enter("alice")()
    guard.enter("alice")()
    with pytest.raises(HTTPException) as refused:
        guard.enter("alice")
    assert refused.value.status_code == 429
    assert refused.value.headers == {"Retry-After": "2"}  # one token at 0.5 a second
    guard.enter("bob")()  # another caller has a bucket of its own
    clock.now += 2.0
    guard.enter("alice")()


def test_requests_in_flight_are_capped_and_released_once() -> None:
    clock = Clock()
    guard = limiter(clock, read_rate_per_s=0, read_max_concurrent=2)  # 0: no rate limit
    first, second = guard.enter("alice"), guard.enter("alice")
    with pytest.raises(HTTPException) as refused:
        guard.enter("alice")
    assert refused.value.status_code == 429 and "in flight" in str(refused.value.detail)
    first()
    first()  # a second release of the same request frees nothing more
    third = guard.enter("alice")
    with pytest.raises(HTTPException):
        guard.enter("alice")
    second()
    third()
    for _ in range(1000):  # no rate limit at 0
        guard.enter("alice")()
