"""Reads for the web console's queue pages: a filtered, paged job list with its count, the
job counts by state, the workers with their running jobs and the job timeline that the
queue charts are drawn from. All Cypher is in :mod:`semgraph.queue.browse_queries`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semgraph.db import Graph
from semgraph.errors import QueueInputError
from semgraph.queue import browse_queries as q
from semgraph.queue.models import Job, JobStatus

MAX_PAGE = 500
MAX_IDS = 10_000
MAX_TIMELINE = 20_000
MAX_ERROR_FILTER_CHARS = 200


@dataclass(frozen=True)
class JobFilter:
    """What the queue page filters by; ``repos`` is the caller's allowlist (None: all)."""

    status: str | None = None
    repo: str | None = None
    kind: str | None = None
    error: str | None = None
    repos: tuple[str, ...] | None = None

    def params(self) -> dict[str, Any]:
        if self.status is not None and self.status not in {s.value for s in JobStatus}:
            raise QueueInputError(f"unknown status {self.status[:50]!r}")
        error = None
        if self.error:
            if len(self.error) > MAX_ERROR_FILTER_CHARS:
                raise QueueInputError(f"error text is over {MAX_ERROR_FILTER_CHARS} characters")
            error = self.error.lower()
        return {
            "status": self.status,
            "repo": self.repo,
            "kind": self.kind,
            "error": error,
            "repos": None if self.repos is None else list(self.repos),
        }


@dataclass
class JobPage:
    jobs: list[Job]
    total: int
    offset: int
    limit: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.jobs) < self.total


def page(graph: Graph, flt: JobFilter, *, offset: int = 0, limit: int = 50) -> JobPage:
    """One page of the jobs ``flt`` selects, newest first, with how many it selects."""
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise QueueInputError(f"limit must be 1-{MAX_PAGE} and offset not negative")
    params = flt.params()
    rows = graph.query("browse jobs", q.BROWSE_PAGE, skip=offset, limit=limit, **params)
    total = graph.query("browse count", q.BROWSE_COUNT, **params)[0]["n"]
    return JobPage([Job.from_props(r["job"]) for r in rows], int(total), offset, limit)


def ids(graph: Graph, flt: JobFilter, *, limit: int = MAX_IDS) -> list[str]:
    """The ids of the newest ``limit`` jobs ``flt`` selects (a bulk action's targets)."""
    if not 1 <= limit <= MAX_IDS:
        raise QueueInputError(f"limit must be 1-{MAX_IDS}")
    rows = graph.query("browse ids", q.BROWSE_IDS, limit=limit, **flt.params())
    return [str(r["id"]) for r in rows]


def count(graph: Graph, flt: JobFilter) -> int:
    return int(graph.query("browse count", q.BROWSE_COUNT, **flt.params())[0]["n"])


def state_counts(graph: Graph, repos: tuple[str, ...] | None) -> dict[str, int]:
    """Jobs per state (every state, zero when absent) within the allowlist."""
    counts = {s.value: 0 for s in JobStatus}
    allow = None if repos is None else list(repos)
    for row in graph.query("browse state counts", q.BROWSE_STATE_COUNTS, repos=allow):
        counts[str(row["status"])] = int(row["n"])
    return counts


def kinds(graph: Graph) -> list[str]:
    return [str(r["kind"]) for r in graph.query("browse kinds", q.BROWSE_KINDS)]


@dataclass
class WorkerRow:
    worker: dict[str, Any]
    jobs: list[Job] = field(default_factory=list)


def worker_rows(graph: Graph, *, limit: int = 500) -> list[WorkerRow]:
    rows = graph.query("browse workers", q.BROWSE_WORKERS, limit=limit)
    return [WorkerRow(dict(r["worker"]), [Job.from_props(j) for j in r["jobs"] if j]) for r in rows]


def timeline(
    graph: Graph, *, since: float, repos: tuple[str, ...] | None, limit: int = MAX_TIMELINE
) -> list[dict[str, Any]]:
    """(created_at, claimed_at, finished_at, status) of the newest ``limit`` jobs created
    since ``since``: what the queue charts are drawn from (the jobs the queue still keeps)."""
    allow = None if repos is None else list(repos)
    rows = graph.query("browse timeline", q.BROWSE_TIMELINE, since=since, repos=allow, limit=limit)
    if not rows:
        return []
    row = rows[0]

    def known(value: float) -> float | None:
        return None if value < 0 else value

    return [
        {"created_at": c, "claimed_at": known(k), "finished_at": known(f), "status": s}
        for c, k, f, s in zip(
            row["created"], row["claimed"], row["finished"], row["status"], strict=True
        )
    ]
