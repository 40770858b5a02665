"""The embedding phase logs its progress at least every 10 s (files done of the total,
chunks, rate, ETA), so a job without a terminal shows it is alive."""

from __future__ import annotations

import logging
from typing import cast

import elasticsearch
import pytest

from semgraph.config import load_settings
from semgraph.search.embed import Embedder
from semgraph.search.loader import PROGRESS_EVERY_S, Loader


def progress_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if getattr(r, "action", "") == "search_progress"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def loader_at(clock: Clock) -> Loader:
    """A loader that only counts and reports (no server, no model: nothing is sent)."""
    return Loader(
        cast(elasticsearch.Elasticsearch, None),
        load_settings(),
        "code-r--run",
        "r",
        "run",
        cast(Embedder, None),
        None,
        clock=clock,
    )


def test_a_progress_line_every_ten_seconds_with_rate_and_eta(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    loader = loader_at(clock)
    loader.total_files = 40
    with caplog.at_level(logging.INFO, logger="semgraph"):
        loader.stats.files, loader.stats.chunks = 5, 50
        clock.now += PROGRESS_EVERY_S - 1
        loader.report()  # too soon
        clock.now += 1
        loader.report()
        clock.now += 3
        loader.report()  # too soon again
    lines = [
        r.getMessage() for r in caplog.records if getattr(r, "action", "") == "search_progress"
    ]
    # 5 of 40 files in 10 s: 5.0 chunks/s, 35 files left at 0.5 files/s
    assert lines == ["embedding: 5/40 files, 50 chunks, 5.0 chunks/s, ETA 70s"]


def test_without_a_known_total_the_line_has_no_eta(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    loader = loader_at(clock)
    with caplog.at_level(logging.INFO, logger="semgraph"):
        loader.stats.files, loader.stats.chunks = 2, 4
        clock.now += PROGRESS_EVERY_S
        loader.report()
    lines = [
        r.getMessage() for r in caplog.records if getattr(r, "action", "") == "search_progress"
    ]
    assert lines == ["embedding: 2 files, 4 chunks, 0.4 chunks/s"]
