"""Prometheus metrics of the queue and worker (default registry, ``semgraph_`` prefix)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from semgraph.queue.models import JobStatus, QueueStats

JOBS = Gauge("semgraph_queue_jobs", "Jobs in the queue, by status.", ["status"])
OLDEST_PENDING_AGE = Gauge(
    "semgraph_queue_oldest_pending_age_seconds", "Age of the oldest pending job (0 when none)."
)
CLAIM_LATENCY = Histogram(
    "semgraph_queue_claim_latency_seconds",
    "Time one claim transaction took (including conflict retries).",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)
JOB_DURATION = Histogram(
    "semgraph_queue_job_duration_seconds",
    "Wall time of one job attempt, by kind and outcome.",
    ["kind", "outcome"],
    buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600, 7200),
)
TRANSITIONS = Counter(
    "semgraph_queue_transitions_total", "Job state transitions, by action.", ["action"]
)
RETRIES = Counter(
    "semgraph_queue_retries_total", "Attempts that went back to pending with backoff.", ["reason"]
)
CRASHES = Counter("semgraph_queue_crashes_total", "Jobs recovered from a dead worker.")
QUARANTINES = Counter("semgraph_queue_quarantines_total", "Jobs quarantined.")
CONFLICT_RETRIES = Counter(
    "semgraph_queue_conflict_retries_total",
    "Queue transactions retried after a transient conflict or a lost uniqueness race.",
    ["op"],
)
LOST_FENCES = Counter(
    "semgraph_queue_fence_lost_total",
    "Transitions refused because the writer no longer owned the job.",
    ["op"],
)


def publish_stats(stats: QueueStats) -> None:
    """Set the gauges from a :meth:`JobStore.stats` snapshot."""
    for status in JobStatus:
        JOBS.labels(status=status.value).set(stats.counts.get(status.value, 0))
    OLDEST_PENDING_AGE.set(stats.oldest_pending_age_s or 0.0)
