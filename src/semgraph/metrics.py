"""Prometheus metrics shared across layers (each layer may keep its own module too)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

INDEX_DIVERGED = Gauge(
    "semgraph_index_diverged",
    "1 while a repository's graph run and the index behind its alias disagree.",
    ["repo"],
)

VECTORS_PENDING = Gauge(
    "semgraph_vectors_pending",
    "Chunks of a repository's published index still without vectors (progressive publish).",
    ["repo"],
)

CLEANUP_REMOVED = Counter(
    "semgraph_cleanup_removed_total",
    "What maintenance removed, by kind: staging_index, workdir, package, run, job.",
    ["what"],
)


def removed(what: str, count: int) -> None:
    """Count ``count`` things of kind ``what`` that maintenance removed."""
    if count > 0:
        CLEANUP_REMOVED.labels(what=what).inc(count)
