"""Narrowing for tests: a result the test expects to be there (a claimed job, a job read
back, its claim token), typed without ``Optional`` and asserted present where it is taken."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def some(value: T | None) -> T:
    """``value``, asserting that it is not ``None``."""
    assert value is not None
    return value
