"""What failed and abandoned work leaves in the graph, removed by the maintenance pass, and
the count of everything every pass removes (``semgraph_cleanup_removed_total{what}``):

* ``package``: ``:Package`` nodes no repository provides or depends on (a publish sweeps the
  packages it stopped naming; one left by an interrupted removal or an older version is
  found here);
* ``run``: ``:IndexRun`` nodes that ended more than ``job_retention_s`` ago, except the run
  each repository's graph is published from (its stats are what ``repos show`` and the
  console report), in slices of :data:`SLICE` per statement;
* the other passes count theirs under the same metric: ``staging_index``
  (:mod:`semgraph.maintenance.search`), ``workdir`` (:mod:`semgraph.maintenance.leftovers`)
  and ``job`` (terminal jobs past the same retention, :func:`semgraph.queue.supervise.
  maintain`).

Every statement deletes only nodes no writer holds: a package with no relationship (a
publish that names it again creates it again, ``MERGE``), a run that ended. Each is bounded,
so a pass never holds a large transaction.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from semgraph.config import Settings
from semgraph.logs import event
from semgraph.maintenance import queries as q
from semgraph.metrics import removed

log = logging.getLogger(__name__)

SLICE = 5_000  # nodes one statement deletes at most
MAX_SLICES = 20  # statements of one kind per pass (the next pass goes on)


def _sliced(graph: Any, what: str, cypher: str, **params: Any) -> int:
    total = 0
    for _ in range(MAX_SLICES):
        rows = graph.query(f"clean up {what}", cypher, limit=SLICE, **params)
        n = int(rows[0]["deleted"]) if rows else 0
        total += n
        if n < SLICE:
            break
    return total


def clean_up(settings: Settings, graph: Any, *, now: float | None = None) -> dict[str, int]:
    """The maintenance pass: delete orphan packages and old runs; returns the counts."""
    now = time.time() if now is None else now
    counts = {
        "package": _sliced(graph, "orphan packages", q.ORPHAN_PACKAGES),
        "run": _sliced(graph, "old runs", q.OLD_RUNS, cutoff=now - settings.job_retention_s),
    }
    for what, n in counts.items():
        removed(what, n)
    if any(counts.values()):
        event(log, logging.INFO, "cleanup_removed", f"maintenance removed {counts}", **counts)
    return counts


def maintain_cleanup(settings: Settings, graph: Any) -> None:
    """:func:`clean_up` as the worker's maintenance hook."""
    clean_up(settings, graph)
