"""The embedding phase logs its progress at least every 10 s (files done of the total,
chunks, rate, ETA), so a job without a terminal shows it is alive; on a terminal
``semgraph index`` draws it as a live line after every file."""

from __future__ import annotations

import logging
import re
from typing import cast

import elasticsearch
import pytest

from semgraph.commands.progress import progress_printer
from semgraph.config import load_settings
from semgraph.model import FileFacts
from semgraph.search.embed import Embedder
from semgraph.search.loader import Loader
from semgraph.search.progress import PROGRESS_EVERY_S, EmbedProgress, VectorsProgress


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
    loader.meter.total_files = 40
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


def test_each_file_reports_to_the_live_display() -> None:
    clock = Clock()
    loader = loader_at(clock)
    loader.meter.total_files = 3
    seen: list[EmbedProgress] = []
    loader.meter.sink = seen.append
    for n in range(2):
        clock.now += 2.0
        loader.add_file(FileFacts(f"f{n}.txt", "text", "b" * 40, 1, 1, "ok"))
    assert seen == [EmbedProgress(1, 3, 0, 0, 2.0), EmbedProgress(2, 3, 0, 0, 4.0)]


def test_the_terminal_line_shows_done_of_the_estimate_rate_and_eta(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show = progress_printer(live=True)
    assert show is not None and progress_printer(live=False) is None
    show(
        EmbedProgress(
            files_read=10, files_total=40, chunks_done=60, chunks_queued=100, elapsed_s=20.0
        )
    )
    show(
        EmbedProgress(
            files_read=20, files_total=40, chunks_done=200, chunks_queued=200, elapsed_s=40.0
        )
    )
    lines = re.findall(r"embed: .*? ETA \d+s", capsys.readouterr().err)
    # 10 of 40 files read gave 100 chunks: ~400 in all; 60 done in 20 s: 3/s, 340 left
    assert lines == [
        "embed: 60/~400 chunks, 10/40 files read, 3.0 chunks/s, ETA 113s",
        "embed: 200/~400 chunks, 20/40 files read, 5.0 chunks/s, ETA 40s",
    ]


def test_the_vectors_step_draws_a_line_of_its_own_below_the_embedding_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show = progress_printer(live=True)
    assert show is not None
    show(EmbedProgress(files_read=4, files_total=4, chunks_done=8, chunks_queued=8, elapsed_s=2.0))
    show(VectorsProgress(filled=256, total=1786, elapsed_s=2.0))
    show(VectorsProgress(filled=1786, total=1786, elapsed_s=14.0))
    printed = capsys.readouterr().err
    embed_at = printed.index("embed: ")
    assert "\n" in printed[embed_at : printed.index("vectors: ")]  # a line of its own
    assert re.findall(r"vectors: [^\r]*?chunks/s(?:, ETA \d+s)?", printed) == [
        "vectors: 256/1,786 chunks, 128.0 chunks/s, ETA 12s",
        "vectors: 1,786/1,786 chunks, 127.6 chunks/s, ETA 0s",
    ]
