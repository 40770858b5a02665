"""The job record as Python sees it: status enum, :class:`Job`, enqueue outcome, what a
heartbeat and the sweep see, stats."""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field
from typing import Any


class JobStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    QUARANTINED = "quarantined"
    ABANDONED = "abandoned"


TERMINAL = frozenset(
    {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.QUARANTINED, JobStatus.ABANDONED}
)
#: statuses an operator may requeue from
REQUEUEABLE = frozenset({JobStatus.FAILED, JobStatus.QUARANTINED, JobStatus.ABANDONED})
#: kinds that finish what another job published (``vectors``: progressive publish). Enqueued
#: while a job of the repository is pending, one merges into it without changing its kind
#: (that job publishes, then leaves its own follow-on)
VECTORS_KIND = "vectors"
FOLLOW_ON_KINDS = frozenset({VECTORS_KIND})
#: below every push (priority 0): a worker of every role publishes first, then embeds
VECTORS_PRIORITY = -100


#: a worker's roles (``worker_role``, ``semgraph worker --role``)
ROLES = ("all", "push", "embed")


def role_kinds(role: str, kinds: list[str]) -> list[str]:
    """The kinds a worker of ``role`` claims: ``all`` every one, ``push`` all but vectors
    (it never loads the model), ``embed`` only vectors."""
    if role == "push":
        return [k for k in kinds if k != VECTORS_KIND]
    if role == "embed":
        return [k for k in kinds if k == VECTORS_KIND]
    return list(kinds)


class FailureKind(enum.StrEnum):
    """Why an attempt ended badly (recorded in the job's error history)."""

    ERROR = "error"  # the job raised
    TIMEOUT = "timeout"  # over job_timeout_s, stopped by the worker
    CRASH = "crash"  # the worker died (found by the sweep)
    ABANDONED = "abandoned"  # an operator abandoned it


class EnqueueOutcome(enum.StrEnum):
    CREATED = "created"  # a new pending job
    COALESCED = "coalesced"  # merged into the repo's pending job
    FOLLOW_UP = "follow_up"  # a job runs for the repo: a new pending job queued behind it
    DUPLICATE = "duplicate"  # this delivery key was already enqueued
    # the repository is recorded with another source: nothing was stored (``detail`` says)
    REFUSED = "refused"


@dataclass(frozen=True)
class EnqueueResult:
    job_id: str  # empty when refused
    outcome: str  # an EnqueueOutcome value
    detail: str | None = None  # why it was refused

    @property
    def refused(self) -> bool:
        return self.outcome == EnqueueOutcome.REFUSED.value


@dataclass(frozen=True)
class EnqueueRequest:
    """One validated enqueue (``args`` already JSON text); build it with
    :func:`semgraph.queue.enqueue.enqueue_request`, which refuses bad fields."""

    repo_key: str
    kind: str = "reindex"
    args: str = "{}"
    ref: str | None = None
    commit: str | None = None
    priority: int = 0
    delivery_key: str | None = None
    # the repository's source (its canonical clone URL or file:// path), recorded on the
    # repository's :RepoRecord at its first enqueue; a later one with another source is refused
    source: str | None = None
    host: str | None = None  # who announced it: github, gitlab, gitea, cli, api
    default_branch: str | None = None
    note: str | None = None  # who asked and why, kept on the job's history (e.g. a repair)


@dataclass(frozen=True)
class RepoRecord:
    """A repository as the queue knows it from its first enqueue on (``:RepoRecord``):
    where its jobs check it out from, whether or not it was ever published."""

    key: str
    source: str | None
    host: str | None = None
    default_branch: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> RepoRecord:
        return cls(
            key=str(props["key"]),
            source=props.get("source"),
            host=props.get("host"),
            default_branch=props.get("default_branch"),
            created_at=float(props.get("created_at") or 0.0),
            updated_at=float(props.get("updated_at") or 0.0),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HistoryEntry:
    """Something done to a job from outside its attempts (a repair's enqueue)."""

    at: float
    what: str


@dataclass(frozen=True)
class ErrorEntry:
    at: float
    attempt: int
    kind: str  # a FailureKind value
    message: str


@dataclass
class Job:
    """One ``:JobQueue`` node."""

    id: str
    kind: str
    repo_key: str
    status: JobStatus
    args: dict[str, Any] = field(default_factory=dict)
    ref: str | None = None
    commit: str | None = None
    priority: int = 0
    attempts: int = 0
    crash_count: int = 0
    max_attempts: int = 1
    max_crashes: int = 1
    run_after: float = 0.0
    created_at: float = 0.0
    updated_at: float = 0.0
    claimed_at: float | None = None
    finished_at: float | None = None
    claim_token: str | None = None
    worker_id: str | None = None
    lease_expires_at: float | None = None
    last_error: str | None = None
    errors: list[ErrorEntry] = field(default_factory=list)
    coalesced_count: int = 0
    cancel_reason: str | None = None  # set while an operator abandon waits for the worker
    history: list[HistoryEntry] = field(default_factory=list)
    pushed_at: float | None = None  # when ``commit`` was set by an enqueue

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> Job:
        """Build from the node's property map (``args``/``errors`` are stored as JSON)."""
        errors = [ErrorEntry(**e) for e in json.loads(props.get("errors") or "[]")]
        return cls(
            id=props["id"],
            kind=props["kind"],
            repo_key=props["repo_key"],
            status=JobStatus(props["status"]),
            args=json.loads(props.get("args") or "{}"),
            ref=props.get("ref"),
            commit=props.get("commit"),
            priority=int(props.get("priority", 0)),
            attempts=int(props.get("attempts", 0)),
            crash_count=int(props.get("crash_count", 0)),
            max_attempts=int(props.get("max_attempts", 1)),
            max_crashes=int(props.get("max_crashes", 1)),
            run_after=float(props.get("run_after", 0.0)),
            created_at=float(props.get("created_at", 0.0)),
            updated_at=float(props.get("updated_at", 0.0)),
            claimed_at=props.get("claimed_at"),
            finished_at=props.get("finished_at"),
            claim_token=props.get("claim_token"),
            worker_id=props.get("worker_id"),
            lease_expires_at=props.get("lease_expires_at"),
            last_error=props.get("last_error"),
            errors=errors,
            coalesced_count=int(props.get("coalesced_count", 0)),
            cancel_reason=props.get("cancel_reason"),
            history=[HistoryEntry(**h) for h in json.loads(props.get("history") or "[]")],
            pushed_at=props.get("pushed_at"),
        )

    def to_json(self) -> dict[str, Any]:
        """A stable, JSON-serialisable view (the ``--json`` output of the CLI)."""
        data = asdict(self)
        data["status"] = self.status.value
        return data


@dataclass(frozen=True)
class HeartbeatResult:
    owned: bool  # False: the job is no longer ours (the writer lost)
    cancel_reason: str | None = None  # an operator asked the job to stop


@dataclass(frozen=True)
class RunningJob:
    """A running job as the sweep sees it before deciding."""

    id: str
    claim_token: str
    repo_key: str
    lease_expires_at: float | None
    worker: dict[str, Any] | None


@dataclass(frozen=True)
class QueueStats:
    counts: dict[str, int]  # every JobStatus value, zero when absent
    oldest_pending_created_at: float | None
    oldest_pending_age_s: float | None
    workers_alive: int
    # when the earliest pending job may run (a job in backoff waits for its run_after):
    # "waiting" when in the future, ready when 0
    next_eligible_at: float | None = None
    next_eligible_in_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def claim_key(priority: int, run_after: float, created_at: float, job_id: str) -> str:
    """A string whose order is (priority DESC, run_after, created_at, id)."""
    return (
        f"{1_000_000 - priority:07d}|{max(run_after, 0.0):020.6f}|"
        f"{max(created_at, 0.0):020.6f}|{job_id}"
    )
