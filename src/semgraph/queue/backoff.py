"""Exponential backoff with jitter for jobs that raised."""

from __future__ import annotations

import random


def backoff_ceiling_s(attempt: int, base_s: float, cap_s: float) -> float:
    """The un-jittered delay after ``attempt`` (1-based): ``base * 2**(attempt-1)``, capped."""
    if attempt < 1:
        raise ValueError(f"attempt must be >= 1, got {attempt}")
    # min() before the power keeps huge attempt numbers from overflowing a float
    exponent = min(attempt - 1, 64)
    return float(min(cap_s, base_s * (2.0**exponent)))


def backoff_s(attempt: int, base_s: float, cap_s: float, rng: random.Random | None = None) -> float:
    """A delay in ``[ceiling/2, ceiling]`` ("equal jitter"): never zero unless ``base_s`` is,
    never above ``cap_s``, and spread so retries of many jobs do not synchronise."""
    ceiling = backoff_ceiling_s(attempt, base_s, cap_s)
    half = ceiling / 2.0
    return half + (rng or random).uniform(0.0, half)
