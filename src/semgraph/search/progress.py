"""Where the embedding phase stands: a progress log line at least every
:data:`PROGRESS_EVERY_S` (a job without a terminal shows it is alive), and an
:class:`EmbedProgress` after each file read and each model batch for a live display (a
:class:`VectorsProgress` after each window of a vectors job)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from semgraph.logs import event

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 10.0  # a progress log line at least this often while embedding


@dataclass(frozen=True)
class EmbedProgress:
    """What a live display draws. ``chunks_done`` are embedded or reused,
    ``chunks_queued`` read so far; with ``files_total`` they estimate the phase's whole
    chunk count."""

    files_read: int
    files_total: int | None
    chunks_done: int
    chunks_queued: int
    elapsed_s: float

    @property
    def chunks_estimate(self) -> int | None:
        if not self.files_total or not self.files_read:
            return None
        estimate = round(self.chunks_queued / self.files_read * self.files_total)
        return max(estimate, self.chunks_done)


@dataclass(frozen=True)
class VectorsProgress:
    """What a live display draws of a vectors job (progressive publish): ``filled`` chunks
    of the ``total`` it found pending (and those it filled before a newer index)."""

    filled: int
    total: int
    elapsed_s: float


class EmbedMeter:
    """The phase's progress state, fed by the loader."""

    def __init__(self, repo_key: str, run_id: str, clock: Callable[[], float]) -> None:
        self.repo_key = repo_key
        self.run_id = run_id
        self.clock = clock
        self.total_files: int | None = None  # for the ETA, when known
        self.sink: Callable[[EmbedProgress], None] | None = None  # a live display
        self.queued = 0  # chunks read
        self.in_flight = 0  # chunks of the window being embedded that are done
        self._started = self._reported = clock()

    def show(self, files: int, chunks: int, batch: int = 0) -> None:
        """Hand the live display where the phase stands: ``files`` read, ``chunks`` of
        finished windows, ``batch`` more of the window being embedded done."""
        self.in_flight += batch
        if self.sink is not None:
            elapsed = self.clock() - self._started
            done = chunks + self.in_flight
            self.sink(EmbedProgress(files, self.total_files, done, self.queued, elapsed))

    def report(self, files: int, chunks: int) -> None:
        """Log progress (files done of the total, chunks, rate, ETA) when the last line is
        :data:`PROGRESS_EVERY_S` old."""
        now = self.clock()
        if now - self._reported < PROGRESS_EVERY_S:
            return
        self._reported = now
        elapsed = max(now - self._started, 1e-9)
        total = self.total_files
        eta = ""
        if total and files:
            eta = f", ETA {max(total - files, 0) / (files / elapsed):.0f}s"
        of = f"/{total}" if total else ""
        event(
            log,
            logging.INFO,
            "search_progress",
            f"embedding: {files}{of} files, {chunks} chunks, {chunks / elapsed:.1f} chunks/s{eta}",
            repo=self.repo_key,
            run_id=self.run_id,
            files=files,
            files_total=total,
            chunks=chunks,
        )
