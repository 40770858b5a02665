"""The queue's write transactions: each runs in one explicit transaction and, when it loses a
race, runs again.

On Memgraph (snapshot isolation) the later of two conflicting writers aborts with a transient
error; on either server a writer that lost a uniqueness race fails at COMMIT; a connection cut
before COMMIT changed nothing. :class:`RetryingWriter` runs such a transaction again with
exponential backoff and jitter (:class:`semgraph.queue.backoff.RetryBudget`) until the time
budget ``graph_conflict_retry_s`` is spent. A timeout abort is never retried, nor a cut during
COMMIT (its outcome is unknown: the caller decides).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphConflict, GraphConstraintViolation, GraphError, GraphTimeout
from semgraph.queue import metrics
from semgraph.queue.backoff import RetryBudget

T = TypeVar("T")


class Retry(Exception):
    """The transaction lost a race it can resolve by running again (raised inside it)."""


class RetryingWriter:
    """Runs ``fn(tx, *args)`` in one explicit write transaction, again while it loses races."""

    def __init__(
        self,
        graph: Graph,
        settings: Settings,
        *,
        rng: random.Random,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self._rng = rng
        self._clock = clock  # the retries' time budget (injected by tests)
        self._sleep = sleep

    def write(self, op: str, fn: Callable[..., T], *args: Any, retry_unique: bool = False) -> T:
        """Run ``fn(tx, *args)`` and commit; retry transient conflicts and :class:`Retry`
        (and, where asked, lost uniqueness races) with backoff until the time budget
        ``graph_conflict_retry_s`` is spent. A timeout abort is never retried."""
        budget = RetryBudget(
            self.settings.graph_conflict_retry_s,
            self.settings.claim_conflict_retries,
            clock=self._clock,
            rng=self._rng,
        )
        while True:
            committing = False
            try:
                with self.graph.transaction(op) as tx:
                    result = fn(tx, *args)
                    committing = True  # the block's end sends COMMIT
                return result
            except GraphTimeout:
                raise  # it would only time out again: the server's limit must be raised
            except (GraphConflict, Retry) as exc:
                delay = budget.next_delay()
                if delay is None:
                    raise GraphConflict(
                        f"{op}: still conflicting after {budget.tries} tries in "
                        f"{budget.elapsed_s:.1f}s (SEMGRAPH_GRAPH_CONFLICT_RETRY_S="
                        f"{budget.budget_s:g}): {exc}"
                    ) from exc
            except GraphConstraintViolation:
                if not retry_unique:
                    raise
                delay = budget.next_delay()
                if delay is None:
                    raise
            except GraphError:
                # a connection that broke before COMMIT was sent changed nothing: run it
                # again; during COMMIT the outcome is unknown, so the caller must decide
                if committing:
                    raise
                delay = budget.next_delay()
                if delay is None:
                    raise
            metrics.CONFLICT_RETRIES.labels(op=op).inc()
            self._sleep(delay)
