"""The durable job queue in the graph: every queue query, as named constants.

Correct on Neo4j 5 (read-committed) and Memgraph (snapshot isolation):

* every state change locks the job node first (``SET j._lock = true REMOVE j._lock``) and
  only then reads the state it decides on, so on Neo4j a concurrent writer has either
  committed (and is seen) or waits; on Memgraph the later of two conflicting writers aborts
  with a transient error, and :meth:`JobStore._write` retries it with exponential backoff
  within a time budget (``graph_conflict_retry_s``);
* a claim also locks a per-repository ``:RepoLock`` node before it checks that no job of the
  repository runs, so claims for one repository serialise (the node is created with the
  repository's first job, so a claim only writes it; a claim that had to create it and lost
  the unique constraint at COMMIT, as on Memgraph, runs again);
* "at most one pending job per repository" is the unique constraint on
  ``JobQueue.pending_key`` (set only while pending), never read-then-write;
* an enqueue batch (group commit, :meth:`JobStore.enqueue_many`) decides on an unlocked read
  and is optimistic: its write locks each pending job it merges into and changes it only if
  it is still the version read, else the whole batch runs again;
* every transition after the claim is fenced by ``status = 'running'`` and the claim token.

``now`` always comes from Python. ``args`` and the error history are stored as JSON text.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import (
    GraphConflict,
    GraphConstraintViolation,
    GraphError,
    GraphTimeout,
    InvalidTransition,
    JobNotFound,
)
from semgraph.queue import metrics
from semgraph.queue.backoff import RetryBudget, backoff_s
from semgraph.queue.enqueue import EnqueuePlan, Slot
from semgraph.queue.models import (
    REQUEUEABLE,
    TERMINAL,
    EnqueueRequest,
    EnqueueResult,
    ErrorEntry,
    FailureKind,
    Job,
    JobStatus,
    QueueStats,
    claim_key,
)

T = TypeVar("T")
Hook = Callable[[str], None]

MAX_REPO_KEY = 512
MAX_KIND = 64
MAX_REF = 1024
MAX_COMMIT = 128
MAX_ARGS_BYTES = 64 * 1024
MAX_DELIVERY_KEY = 512
MAX_ERROR_CHARS = 4000
MAX_REASON_CHARS = 1000

# -- shared -----------------------------------------------------------------------------------

LOCK_JOB = """
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
RETURN properties(j) AS job
"""

UPDATE_JOB = """
MATCH (j:JobQueue {id: $id})
SET j += $props
RETURN properties(j) AS job
"""

RUNNING_FOR_REPO = """
MATCH (j:JobQueue {repo_key: $repo_key, status: 'running'})
RETURN count(j) AS n
"""

PENDING_FOR_REPO = """
MATCH (j:JobQueue {pending_key: $repo_key})
RETURN j.id AS id
"""

# -- enqueue (any number of requests in one transaction: group commit) ---------------------------

# what a batch decides on, in one round trip and without locks: the delivery keys already
# seen, and the pending job (if any) and the number of running jobs of each repository
ENQUEUE_READ = """
UNWIND $repo_keys AS repo_key
OPTIONAL MATCH (p:JobQueue {pending_key: repo_key})
OPTIONAL MATCH (r:JobQueue {repo_key: repo_key, status: 'running'})
WITH repo_key, p, count(r) AS running
WITH collect({repo_key: repo_key, pending: properties(p), running: running}) AS repos
OPTIONAL MATCH (d:JobDelivery)
WHERE d.key IN $keys
RETURN repos, collect({key: d.key, job_id: d.job_id}) AS seen
"""

# every write of a batch in one round trip. A pending job is locked first and updated only
# if it is still the version ENQUEUE_READ saw (every change to a pending job moves its
# status, coalesced_count or updated_at, or deletes it); the caller compares ``updated`` and
# runs the whole batch again when a concurrent writer got there first. Rows come sorted by
# id, so concurrent batches lock in one order.
# A new job's repository gets its ``:RepoLock`` node here, so that a claim finds it and only
# writes it (CLAIM_ONE): on Memgraph two transactions that both CREATE the node both
# succeed until the later COMMIT fails the unique constraint (the batch is then run again).
ENQUEUE_WRITE = """
UNWIND $updates AS row
MATCH (j:JobQueue {id: row.id})
SET j._lock = true
REMOVE j._lock
WITH j, row
WHERE j.status = 'pending' AND j.coalesced_count = row.seen_count
  AND j.updated_at = row.seen_updated_at
SET j += row.props
WITH count(j) AS updated
FOREACH (props IN $creates | CREATE (j:JobQueue) SET j = props)
FOREACH (key IN $lock_keys | MERGE (:RepoLock {key: key}))
FOREACH (row IN $deliveries |
  CREATE (:JobDelivery {key: row.key, job_id: row.job_id, created_at: $now}))
RETURN updated
"""

# -- merge a returning job with the repository's pending follow-up ------------------------------

ABSORB_MOVE_DELIVERIES = """
MATCH (d:JobDelivery {job_id: $from_id})
SET d.job_id = $to_id
"""

ABSORB_DELETE = """
MATCH (j:JobQueue {id: $id})
DETACH DELETE j
"""

# -- claim --------------------------------------------------------------------------------------

# claim_key (set only while pending) sorts like (priority DESC, run_after, created_at, id),
# so the index hands candidates over in claim order instead of sorting every pending job
CLAIM_CANDIDATES = """
OPTIONAL MATCH (r:JobQueue {status: 'running'})
WITH collect(DISTINCT r.repo_key) AS busy
MATCH (j:JobQueue)
WHERE j.claim_key >= '' AND j.run_after <= $now AND j.kind IN $kinds
  AND NOT j.repo_key IN busy
RETURN j.id AS id, j.repo_key AS repo_key
ORDER BY j.claim_key ASC
LIMIT $limit
"""

# the one job of that id, when it is claimable (``semgraph index`` runs only its own job)
CLAIM_CANDIDATE_BY_ID = """
MATCH (j:JobQueue {id: $id})
WHERE j.claim_key >= '' AND j.run_after <= $now AND j.kind IN $kinds
OPTIONAL MATCH (r:JobQueue {repo_key: j.repo_key, status: 'running'})
WITH j, count(r) AS running
WHERE running = 0
RETURN j.id AS id, j.repo_key AS repo_key
"""

# one statement: lock the repository, check (after the lock) that none of its jobs runs,
# lock the job, re-check (after the lock) that it is still pending and due, take it.
# The enqueue that created the job created its :RepoLock, so the MERGE normally matches and
# writes an existing node: a lock on Neo4j, a write-write conflict on Memgraph (the later
# claim aborts and is retried). It creates one only for a job queued before enqueues did;
# two such first claims on Memgraph both create it and the later COMMIT fails the unique
# constraint: JobStore.claim runs again on that (retry_unique), and then finds the node.
CLAIM_ONE = """
MERGE (l:RepoLock {key: $repo_key})
SET l.locked_at = $now
WITH l
OPTIONAL MATCH (r:JobQueue {repo_key: $repo_key, status: 'running'})
WITH count(r) AS running
WHERE running = 0
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'pending' AND j.run_after <= $now
SET j += $props, j.attempts = j.attempts + 1
RETURN properties(j) AS job
"""

# one statement: lock the job, check (after the lock) owner and status, mark it succeeded
COMPLETE = """
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'running' AND j.claim_token = $token
SET j += $props
RETURN j.id AS id
"""

# -- sweep --------------------------------------------------------------------------------------

RUNNING_WITH_WORKERS = """
MATCH (j:JobQueue {status: 'running'})
OPTIONAL MATCH (w:Worker {id: j.worker_id})
RETURN j.id AS id, j.claim_token AS claim_token, j.repo_key AS repo_key,
       j.lease_expires_at AS lease_expires_at, properties(w) AS worker
ORDER BY j.claimed_at
"""

RECOVER_ABANDON_RUNS = """
MATCH (r:IndexRun {job_id: $job_id, status: 'running'})
SET r.status = 'abandoned', r.finished_at = $now, r.abandoned_reason = $reason
RETURN count(r) AS n
"""

# -- workers ------------------------------------------------------------------------------------

REGISTER_WORKER = """
MERGE (w:Worker {id: $id})
SET w += $props
"""

WORKER_HEARTBEAT = """
MATCH (w:Worker {id: $id})
SET w.heartbeat_at = $now, w.lease_expires_at = $lease_expires_at
RETURN w.status AS status
"""

STOP_WORKER = """
MATCH (w:Worker {id: $id})
SET w.status = 'stopped', w.stopped_at = $now, w.heartbeat_at = $now
"""

WORKERS_ALIVE = """
MATCH (w:Worker {status: 'running'})
WHERE w.lease_expires_at >= $now
RETURN count(w) AS n
"""

# -- reads --------------------------------------------------------------------------------------

GET = """
MATCH (j:JobQueue {id: $id})
RETURN properties(j) AS job
"""

LIST = """
MATCH (j:JobQueue)
WHERE ($status IS NULL OR j.status = $status) AND ($repo IS NULL OR j.repo_key = $repo)
RETURN properties(j) AS job
ORDER BY j.created_at DESC, j.id DESC
LIMIT $limit
"""

STATS_COUNTS = """
MATCH (j:JobQueue)
RETURN j.status AS status, count(j) AS n
"""

STATS_OLDEST_PENDING = """
MATCH (j:JobQueue {status: 'pending'})
RETURN min(j.created_at) AS oldest
"""

# -- retention ----------------------------------------------------------------------------------

PURGE = """
MATCH (j:JobQueue)
WHERE j.status IN $terminal AND j.finished_at < $cutoff
WITH j LIMIT $batch
OPTIONAL MATCH (d:JobDelivery {job_id: j.id})
WITH j, collect(d) AS deliveries
FOREACH (d IN deliveries | DELETE d)
DETACH DELETE j
RETURN count(*) AS n
"""

PURGE_WORKERS = """
MATCH (w:Worker)
WHERE w.heartbeat_at < $cutoff
OPTIONAL MATCH (j:JobQueue {status: 'running', worker_id: w.id})
WITH w, count(j) AS running
WHERE running = 0
WITH w LIMIT $batch
DETACH DELETE w
RETURN count(*) AS n
"""


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


class _Retry(Exception):
    """Internal: the transaction lost a race it can resolve by running again."""


def _json_args(args: dict[str, Any] | None) -> str:
    text = json.dumps(args or {}, sort_keys=True, separators=(",", ":"))
    if len(text.encode()) > MAX_ARGS_BYTES:
        raise ValueError(f"job args are larger than {MAX_ARGS_BYTES} bytes as JSON")
    return text


def _check_text(name: str, value: str | None, limit: int, required: bool = False) -> None:
    if value is None:
        if required:
            raise ValueError(f"{name} is required")
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    if required and not value.strip():
        raise ValueError(f"{name} must not be empty")
    if len(value) > limit:
        raise ValueError(f"{name} is longer than {limit} characters")
    if any(ord(c) < 32 for c in value):
        raise ValueError(f"{name} contains control characters")


def enqueue_request(
    repo_key: str,
    *,
    kind: str = "reindex",
    args: dict[str, Any] | None = None,
    ref: str | None = None,
    commit: str | None = None,
    priority: int = 0,
    delivery_key: str | None = None,
) -> EnqueueRequest:
    """A validated :class:`EnqueueRequest`; ``ValueError`` names the field it refuses."""
    _check_text("repo_key", repo_key, MAX_REPO_KEY, required=True)
    _check_text("kind", kind, MAX_KIND, required=True)
    _check_text("ref", ref, MAX_REF)
    _check_text("commit", commit, MAX_COMMIT)
    _check_text("delivery_key", delivery_key, MAX_DELIVERY_KEY)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError("priority must be an integer")
    if not -1_000_000 <= priority <= 1_000_000:
        raise ValueError("priority must be between -1000000 and 1000000")
    return EnqueueRequest(
        repo_key=repo_key,
        kind=kind,
        args=_json_args(args),
        ref=ref,
        commit=commit,
        priority=priority,
        delivery_key=delivery_key,
    )


class JobStore:
    """Every read and state change of ``:JobQueue`` / ``:Worker`` / ``:JobDelivery`` nodes."""

    def __init__(
        self,
        graph: Graph,
        settings: Settings,
        *,
        hook: Hook | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self._hook = hook
        self._rng = rng or random.Random()
        self._clock = clock  # the conflict retries' time budget (injected by tests)
        self._sleep = sleep

    # -- plumbing ---------------------------------------------------------------------------

    def pause(self, point: str) -> None:
        """Test hook: called at named points between a read and the write that depends on
        it (for example ``"recover:before_lock"``); production passes no hook."""
        if self._hook is not None:
            self._hook(point)

    def _write(self, op: str, fn: Callable[..., T], *args: Any, retry_unique: bool = False) -> T:
        """Run ``fn(tx, *args)`` in one explicit write transaction; retry transient conflicts
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
            except (GraphConflict, _Retry) as exc:
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

    def _read(self, what: str, cypher: str, **params: Any) -> list[dict[str, Any]]:
        return self.graph.query(what, cypher, **params)

    @staticmethod
    def _lock(tx: neo4j.ManagedTransaction | neo4j.Transaction, job_id: str) -> Job | None:
        record = tx.run(LOCK_JOB, id=job_id).single()
        return Job.from_props(record["job"]) if record else None

    @staticmethod
    def _update(
        tx: neo4j.ManagedTransaction | neo4j.Transaction, job_id: str, props: dict[str, Any]
    ) -> Job:
        return Job.from_props(tx.run(UPDATE_JOB, id=job_id, props=props).single(strict=True)["job"])

    def _history(self, job: Job, now: float, kind: FailureKind, message: str) -> str:
        entries = [
            *job.errors,
            ErrorEntry(at=now, attempt=job.attempts, kind=kind.value, message=message),
        ]
        keep = entries[-self.settings.job_error_history :]
        return json.dumps([e.__dict__ for e in keep], separators=(",", ":"))

    def _to_pending(
        self, tx: neo4j.Transaction, job: Job, props: dict[str, Any], now: float
    ) -> dict[str, Any]:
        """Props that return ``job`` to pending; a follow-up already pending for the
        repository is merged into it (latest commit wins, highest priority kept)."""
        props = {
            **props,
            "status": JobStatus.PENDING.value,
            "pending_key": job.repo_key,
            "claim_token": None,
            "worker_id": None,
            "lease_expires_at": None,
            "finished_at": None,
            "updated_at": now,
        }
        record = tx.run(PENDING_FOR_REPO, repo_key=job.repo_key).single()
        if record is not None and record["id"] != job.id:
            other = self._lock(tx, record["id"])
            if other is not None and other.status is JobStatus.PENDING:
                props.update(
                    commit=other.commit,
                    ref=other.ref if other.ref is not None else job.ref,
                    args=json.dumps(other.args, sort_keys=True, separators=(",", ":")),
                    priority=max(job.priority, other.priority, int(props.get("priority", 0))),
                    coalesced_count=job.coalesced_count + other.coalesced_count + 1,
                )
                tx.run(ABSORB_MOVE_DELIVERIES, from_id=other.id, to_id=job.id).consume()
                tx.run(ABSORB_DELETE, id=other.id).consume()
        props["claim_key"] = claim_key(
            int(props.get("priority", job.priority)),
            float(props.get("run_after", job.run_after)),
            job.created_at,
            job.id,
        )
        return props

    # -- enqueue ----------------------------------------------------------------------------

    def enqueue(
        self,
        repo_key: str,
        *,
        now: float,
        kind: str = "reindex",
        args: dict[str, Any] | None = None,
        ref: str | None = None,
        commit: str | None = None,
        priority: int = 0,
        delivery_key: str | None = None,
    ) -> EnqueueResult:
        """Queue work for ``repo_key``; returns once the job is committed."""
        request = enqueue_request(
            repo_key,
            kind=kind,
            args=args,
            ref=ref,
            commit=commit,
            priority=priority,
            delivery_key=delivery_key,
        )
        return self.enqueue_many([request], now=now)[0]

    def enqueue_many(
        self, requests: Sequence[EnqueueRequest], *, now: float
    ) -> list[EnqueueResult]:
        """Commit ``requests`` in ONE transaction (group commit) and return one result per
        request, in order. The outcome is the one the requests would have had one after the
        other in this order: a repeated delivery key is ``duplicate`` of the first, pushes of
        one repository coalesce into its one pending job (created by the first of them when
        there is none; ``follow_up`` when a job of the repository runs). All or nothing: an
        error means none of them was stored."""
        if not requests:
            return []
        results = self._write("enqueue", self._enqueue_tx, list(requests), now, retry_unique=True)
        for result in results:
            metrics.TRANSITIONS.labels(action=f"enqueue_{result.outcome}").inc()
        return results

    def _enqueue_tx(
        self, tx: neo4j.Transaction, requests: list[EnqueueRequest], now: float
    ) -> list[EnqueueResult]:
        keys = sorted({r.delivery_key for r in requests if r.delivery_key is not None})
        repo_keys = sorted({r.repo_key for r in requests})
        read = tx.run(ENQUEUE_READ, repo_keys=repo_keys, keys=keys).single(strict=True)
        self.pause("enqueue:after_read")
        seen = {row["key"]: row["job_id"] for row in read["seen"] if row["key"] is not None}
        slots: dict[str, Slot] = {}
        running: dict[str, int] = {}
        for row in read["repos"]:
            running[row["repo_key"]] = int(row["running"])
            if row["pending"] is not None:
                slots[row["repo_key"]] = Slot.existing(Job.from_props(row["pending"]))
        plan = EnqueuePlan(self.settings, now, seen, slots, running)
        results = [plan.add(request) for request in requests]
        updates = sorted(
            (
                {
                    "id": s.job_id,
                    "props": s.changes,
                    "seen_count": s.seen["coalesced_count"],
                    "seen_updated_at": s.seen["updated_at"],
                }
                for s in plan.slots.values()
                if s.update
            ),
            key=lambda row: str(row["id"]),
        )
        creates = [s.create_props() for s in plan.slots.values() if s.new]
        if updates or creates or plan.deliveries:
            written = tx.run(
                ENQUEUE_WRITE,
                updates=updates,
                creates=creates,
                lock_keys=sorted({str(props["repo_key"]) for props in creates}),
                deliveries=plan.deliveries,
                now=now,
            ).single(strict=True)
            if written["updated"] != len(updates):
                raise _Retry()  # a pending job changed since the read: decide again
        self.pause("enqueue:before_commit")
        return results

    # -- claim ------------------------------------------------------------------------------

    def claim(
        self, worker_id: str, kinds: list[str], *, now: float, job_id: str | None = None
    ) -> Job | None:
        """Atomically take the best eligible pending job (or ``None``); with ``job_id``, that
        job only, when it is eligible."""
        if not kinds:
            return None
        started = time.perf_counter()
        job = self._write(
            "claim", self._claim_tx, worker_id, list(kinds), now, job_id, retry_unique=True
        )
        metrics.CLAIM_LATENCY.observe(time.perf_counter() - started)
        if job is not None:
            metrics.TRANSITIONS.labels(action="claim").inc()
        return job

    def _claim_tx(
        self,
        tx: neo4j.Transaction,
        worker_id: str,
        kinds: list[str],
        now: float,
        job_id: str | None = None,
    ) -> Job | None:
        if job_id is None:
            rows = list(tx.run(CLAIM_CANDIDATES, now=now, kinds=kinds, limit=8))
        else:
            rows = list(tx.run(CLAIM_CANDIDATE_BY_ID, id=job_id, now=now, kinds=kinds))
        self.pause("claim:after_read")
        for row in rows:
            props = {
                "status": JobStatus.RUNNING.value,
                "pending_key": None,
                "claim_key": None,
                "claim_token": uuid.uuid4().hex,
                "worker_id": worker_id,
                "claimed_at": now,
                "updated_at": now,
                "lease_expires_at": now + self.settings.lease_s,
                "finished_at": None,
            }
            params = {"repo_key": row["repo_key"], "id": row["id"], "now": now, "props": props}
            record = tx.run(CLAIM_ONE, params).single()
            if record is not None:
                return Job.from_props(record["job"])
        return None

    # -- fenced transitions (the owner of a claim) ----------------------------------------------

    def _fenced(self, tx: neo4j.Transaction, op: str, job_id: str, token: str) -> Job | None:
        self.pause(f"{op}:before_lock")
        job = self._lock(tx, job_id)
        if job is None or job.status is not JobStatus.RUNNING or job.claim_token != token:
            return None
        return job

    def heartbeat(self, job_id: str, token: str, *, now: float) -> HeartbeatResult:
        """Extend the lease. ``owned=False`` tells a stale owner that it lost the job."""

        def tx_fn(tx: neo4j.Transaction) -> HeartbeatResult:
            job = self._fenced(tx, "heartbeat", job_id, token)
            if job is None:
                return HeartbeatResult(owned=False)
            lease = {"lease_expires_at": now + self.settings.lease_s, "updated_at": now}
            self._update(tx, job_id, lease)
            return HeartbeatResult(owned=True, cancel_reason=job.cancel_reason)

        result = self._write("heartbeat", tx_fn)
        if not result.owned:
            metrics.LOST_FENCES.labels(op="heartbeat").inc()
        return result

    def complete(self, job_id: str, token: str, *, now: float) -> bool:
        """Mark the job succeeded; False when the caller no longer owns it."""

        props = {
            "status": JobStatus.SUCCEEDED.value,
            "finished_at": now,
            "updated_at": now,
            "lease_expires_at": None,
            "cancel_reason": None,
        }

        def tx_fn(tx: neo4j.Transaction) -> bool:
            self.pause("complete:before_lock")
            record = tx.run(COMPLETE, id=job_id, token=token, props=props).single()
            return record is not None

        return self._finish("complete", tx_fn)

    def _finish(self, op: str, tx_fn: Callable[[neo4j.Transaction], T]) -> T:
        result = self._write(op, tx_fn)
        if result is None or result is False:
            metrics.LOST_FENCES.labels(op=op).inc()
        else:
            metrics.TRANSITIONS.labels(action=op).inc()
        return result

    def fail(
        self,
        job_id: str,
        token: str,
        *,
        now: float,
        message: str,
        kind: FailureKind = FailureKind.ERROR,
    ) -> Job | None:
        """Record a failed attempt: back to pending with backoff while attempts remain, else
        ``failed``. An abandon request turns it into ``abandoned``. None when not owned."""
        message = (message or kind.value)[:MAX_ERROR_CHARS]

        def tx_fn(tx: neo4j.Transaction) -> Job | None:
            job = self._fenced(tx, "fail", job_id, token)
            if job is None:
                return None
            props: dict[str, Any] = {
                "last_error": message,
                "errors": self._history(job, now, kind, message),
                "updated_at": now,
            }
            if job.cancel_reason is not None:
                props.update(self._terminal(JobStatus.ABANDONED, now), cancel_reason=None)
            elif job.attempts >= job.max_attempts:
                props.update(self._terminal(JobStatus.FAILED, now))
            else:
                delay = backoff_s(
                    job.attempts,
                    self.settings.backoff_base_s,
                    self.settings.backoff_cap_s,
                    self._rng,
                )
                props = self._to_pending(tx, job, {**props, "run_after": now + delay}, now)
            return self._update(tx, job_id, props)

        return self._finish("fail", tx_fn)

    def release(self, job_id: str, token: str, *, now: float) -> Job | None:
        """Graceful shutdown: back to pending without charging the attempt (or
        ``abandoned`` if an operator asked). None when not owned."""

        def tx_fn(tx: neo4j.Transaction) -> Job | None:
            job = self._fenced(tx, "release", job_id, token)
            if job is None:
                return None
            props: dict[str, Any]
            if job.cancel_reason is not None:
                props = self._abandon_props(job, now, job.cancel_reason)
            else:
                base = {"attempts": max(0, job.attempts - 1), "run_after": now}
                props = self._to_pending(tx, job, base, now)
            return self._update(tx, job_id, props)

        return self._finish("release", tx_fn)

    def acknowledge_abandon(self, job_id: str, token: str, *, now: float) -> Job | None:
        """The owner stopped a job an operator abandoned: mark it ``abandoned``."""

        def tx_fn(tx: neo4j.Transaction) -> Job | None:
            job = self._fenced(tx, "acknowledge_abandon", job_id, token)
            if job is None:
                return None
            reason = job.cancel_reason or "abandoned"
            return self._update(tx, job_id, self._abandon_props(job, now, reason))

        return self._finish("acknowledge_abandon", tx_fn)

    @staticmethod
    def _terminal(status: JobStatus, now: float) -> dict[str, Any]:
        return {
            "status": status.value,
            "finished_at": now,
            "updated_at": now,
            "lease_expires_at": None,
            "pending_key": None,
            "claim_key": None,
        }

    def _abandon_props(self, job: Job, now: float, reason: str) -> dict[str, Any]:
        return {
            **self._terminal(JobStatus.ABANDONED, now),
            "cancel_reason": None,
            "last_error": f"abandoned: {reason}",
            "errors": self._history(job, now, FailureKind.ABANDONED, reason),
        }

    # -- recovery (the sweep) -----------------------------------------------------------------

    def running_jobs(self) -> list[RunningJob]:
        rows = self._read("running jobs", RUNNING_WITH_WORKERS)
        return [RunningJob(**row) for row in rows]

    def recover(self, job_id: str, token: str, *, now: float, reason: str) -> Job | None:
        """A job whose worker died: charge a crash and return it to pending, or quarantine
        it (crash_count >= max_crashes or attempts >= max_attempts), or mark it abandoned if
        an operator asked. Its running ``:IndexRun`` nodes become ``abandoned``. Fenced by
        status and token: a job completed meanwhile is left alone (returns None)."""
        reason = reason[:MAX_ERROR_CHARS]

        def tx_fn(tx: neo4j.Transaction) -> Job | None:
            job = self._fenced(tx, "recover", job_id, token)
            if job is None:
                return None
            crashes = job.crash_count + 1
            message = f"worker died: {reason}"
            props: dict[str, Any] = {
                "crash_count": crashes,
                "last_error": message,
                "errors": self._history(job, now, FailureKind.CRASH, message),
                "updated_at": now,
            }
            if job.cancel_reason is not None:
                props.update(self._terminal(JobStatus.ABANDONED, now), cancel_reason=None)
            elif crashes >= job.max_crashes or job.attempts >= job.max_attempts:
                props.update(self._terminal(JobStatus.QUARANTINED, now))
            else:
                delay = backoff_s(
                    crashes, self.settings.backoff_base_s, self.settings.backoff_cap_s, self._rng
                )
                props = self._to_pending(tx, job, {**props, "run_after": now + delay}, now)
            updated = self._update(tx, job_id, props)
            tx.run(RECOVER_ABANDON_RUNS, job_id=job_id, now=now, reason=message).consume()
            return updated

        job = self._write("recover", tx_fn)
        if job is None:
            metrics.LOST_FENCES.labels(op="recover").inc()
        else:
            metrics.CRASHES.inc()
            metrics.TRANSITIONS.labels(action=f"recover_{job.status.value}").inc()
        return job

    # -- operator -------------------------------------------------------------------------------

    def requeue(self, job_id: str, *, now: float) -> Job:
        """failed / quarantined / abandoned -> pending with attempts and crashes reset."""

        def tx_fn(tx: neo4j.Transaction) -> Job:
            self.pause("requeue:before_lock")
            job = self._lock(tx, job_id)
            if job is None:
                raise JobNotFound(f"no job with id {job_id!r}")
            if job.status not in REQUEUEABLE:
                raise InvalidTransition(
                    f"job {job_id} is {job.status.value}; only failed, quarantined or "
                    "abandoned jobs can be requeued"
                )
            base = {
                "attempts": 0,
                "crash_count": 0,
                "run_after": now,
                "cancel_reason": None,
                "max_attempts": max(job.max_attempts, 1),
                "max_crashes": max(job.max_crashes, 1),
            }
            return self._update(tx, job_id, self._to_pending(tx, job, base, now))

        job = self._write("requeue", tx_fn)
        metrics.TRANSITIONS.labels(action="requeue").inc()
        return job

    def abandon(self, job_id: str, *, now: float, reason: str) -> Job:
        """pending -> abandoned at once; running -> the owner is asked to stop at its next
        checkpoint (``cancel_reason`` set; it notices within one heartbeat)."""
        _check_text("reason", reason, MAX_REASON_CHARS, required=True)

        def tx_fn(tx: neo4j.Transaction) -> Job:
            self.pause("abandon:before_lock")
            job = self._lock(tx, job_id)
            if job is None:
                raise JobNotFound(f"no job with id {job_id!r}")
            if job.status is JobStatus.PENDING:
                return self._update(tx, job_id, self._abandon_props(job, now, reason))
            if job.status is JobStatus.RUNNING:
                return self._update(tx, job_id, {"cancel_reason": reason, "updated_at": now})
            raise InvalidTransition(
                f"job {job_id} is {job.status.value}; only pending or running jobs can be abandoned"
            )

        job = self._write("abandon", tx_fn)
        metrics.TRANSITIONS.labels(action="abandon").inc()
        return job

    def purge(self, *, older_than_s: float, now: float, batch: int = 1000) -> int:
        """Delete terminal jobs finished more than ``older_than_s`` ago (and their delivery
        keys, and long-gone worker records). Returns the number of jobs deleted."""
        if older_than_s < 0:
            raise ValueError("older_than_s must be >= 0")
        cutoff = now - older_than_s
        terminal = sorted(s.value for s in TERMINAL)
        total = 0
        while True:
            rows = self.graph.query("purge", PURGE, terminal=terminal, cutoff=cutoff, batch=batch)
            n = int(rows[0]["n"]) if rows else 0
            total += n
            if n < batch:
                break
        self.graph.query("purge workers", PURGE_WORKERS, cutoff=cutoff, batch=batch)
        return total

    # -- workers --------------------------------------------------------------------------------

    def register_worker(self, worker_id: str, props: dict[str, Any], *, now: float) -> None:
        full = {
            **props,
            "status": "running",
            "started_at": now,
            "heartbeat_at": now,
            "lease_expires_at": now + self.settings.lease_s,
        }
        self.graph.query("register worker", REGISTER_WORKER, id=worker_id, props=full)

    def worker_heartbeat(self, worker_id: str, *, now: float) -> None:
        lease = now + self.settings.lease_s
        self.graph.query(
            "worker heartbeat", WORKER_HEARTBEAT, id=worker_id, now=now, lease_expires_at=lease
        )

    def stop_worker(self, worker_id: str, *, now: float) -> None:
        self.graph.query("stop worker", STOP_WORKER, id=worker_id, now=now)

    # -- reads ----------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        rows = self._read("get job", GET, id=job_id)
        return Job.from_props(rows[0]["job"]) if rows else None

    def list(
        self, status: str | None = None, repo: str | None = None, limit: int = 100
    ) -> list[Job]:
        if status is not None and status not in {s.value for s in JobStatus}:
            raise ValueError(
                f"unknown status {status[:50]!r}; one of {', '.join(s.value for s in JobStatus)}"
            )
        if not 1 <= limit <= 100_000:
            raise ValueError("limit must be between 1 and 100000")
        rows = self._read("list jobs", LIST, status=status, repo=repo, limit=limit)
        return [Job.from_props(r["job"]) for r in rows]

    def stats(self, now: float | None = None) -> QueueStats:
        now = time.time() if now is None else now
        counts = {s.value: 0 for s in JobStatus}
        for row in self._read("stats", STATS_COUNTS):
            counts[str(row["status"])] = int(row["n"])
        oldest_rows = self._read("stats oldest", STATS_OLDEST_PENDING)
        oldest = oldest_rows[0]["oldest"] if oldest_rows else None
        alive = self._read("stats workers", WORKERS_ALIVE, now=now)
        return QueueStats(
            counts=counts,
            oldest_pending_created_at=oldest,
            oldest_pending_age_s=None if oldest is None else max(0.0, now - oldest),
            workers_alive=int(alive[0]["n"]) if alive else 0,
        )
