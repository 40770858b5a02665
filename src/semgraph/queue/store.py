"""The durable job queue in the graph: :class:`JobStore`, every read and state change of
``:JobQueue`` / ``:Worker`` / ``:JobDelivery`` nodes (its Cypher is in
:mod:`semgraph.queue.queries`).

Correct on Neo4j 5 (read-committed) and Memgraph (snapshot isolation):

* every state change locks the job node first (``SET j._lock = true REMOVE j._lock``) and
  only then reads the state it decides on, so on Neo4j a concurrent writer has either
  committed (and is seen) or waits; on Memgraph the later of two conflicting writers aborts
  with a transient error, and the transaction runs again with exponential backoff within a
  time budget (``graph_conflict_retry_s``: :mod:`semgraph.queue.transaction`);
* a claim also locks a per-repository ``:RepoLock`` node before it checks that no job of the
  repository runs, so claims for one repository serialise (the node is created with the
  repository's first job, so a claim only writes it; a claim that had to create it and lost
  the unique constraint at COMMIT, as on Memgraph, runs again);
* "at most one pending job per repository" is the unique constraint on
  ``JobQueue.pending_key`` (set only while pending), never read-then-write;
* an enqueue batch (group commit, :meth:`JobStore.enqueue_many`,
  :func:`semgraph.queue.enqueue.write_batch`) decides on an unlocked read and is optimistic;
* every transition after the claim is fenced by ``status = 'running'`` and the claim token.

What each change writes is in :mod:`semgraph.queue.transitions`, the worker records in
:mod:`semgraph.queue.workers`. ``now`` always comes from Python. ``args`` and the error
history are stored as JSON text. The module is over 300 lines because ``JobStore`` is the
queue's one public face: each method is a short wrapper around a transition or a read.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Unpack

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import QueueInputError, SourceConflict
from semgraph.faults import PROCESS, Faults
from semgraph.queue import metrics, workers
from semgraph.queue import queries as q
from semgraph.queue.enqueue import EnqueueFields, check_text, enqueue_request, write_batch
from semgraph.queue.lanes import ClaimScope
from semgraph.queue.models import (
    TERMINAL,
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    FailureKind,
    HeartbeatResult,
    Job,
    JobStatus,
    QueueStats,
    RepoRecord,
    RunningJob,
)
from semgraph.queue.transaction import RetryingWriter
from semgraph.queue.transitions import Transitions
from semgraph.queue.wake import nudge_workers

T = TypeVar("T")
MAX_ERROR_CHARS = 4000
MAX_REASON_CHARS = 1000
# enqueue outcomes that leave a job a worker may claim now (a follow-up waits for its run)
_CLAIMABLE = {EnqueueOutcome.CREATED.value, EnqueueOutcome.COALESCED.value}


class JobStore:
    """Every read and state change of ``:JobQueue`` / ``:Worker`` / ``:JobDelivery`` nodes."""

    def __init__(
        self,
        graph: Graph,
        settings: Settings,
        *,
        faults: Faults = PROCESS,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.graph = graph
        self.settings = settings
        self.faults = faults
        self._rng = rng or random.Random()
        # the conflict retries' time budget runs on ``clock`` (injected by tests)
        self._writer = RetryingWriter(graph, settings, rng=self._rng, clock=clock, sleep=sleep)
        self._tx = Transitions(settings, self._rng, self.pause)

    # -- plumbing ---------------------------------------------------------------------------

    def pause(self, point: str) -> None:
        """Fault point ``queue.<point>`` (:mod:`semgraph.faults`), reached between a read and
        the write that depends on it (for example ``queue.recover:before_lock``): the race
        tests stop a store there, with a registry of its own."""
        self.faults.point(f"queue.{point}")

    def _write(self, op: str, fn: Callable[..., T], *args: Any, retry_unique: bool = False) -> T:
        """Run ``fn(tx, *args)`` in one explicit write transaction, again while it loses a
        race (:class:`semgraph.queue.transaction.RetryingWriter`)."""
        return self._writer.write(op, fn, *args, retry_unique=retry_unique)

    def _finish(self, op: str, fn: Callable[..., T], *args: Any) -> T:
        """A transition of the owner: a result of None or False is a lost fence."""
        result = self._write(op, fn, *args)
        if result is None or result is False:
            metrics.LOST_FENCES.labels(op=op).inc()
        else:
            metrics.TRANSITIONS.labels(action=op).inc()
        return result

    # -- enqueue ----------------------------------------------------------------------------

    def enqueue(
        self, repo_key: str, *, now: float, **fields: Unpack[EnqueueFields]
    ) -> EnqueueResult:
        """Queue work for ``repo_key`` (the fields of :func:`~semgraph.queue.enqueue.
        enqueue_request`, checked there); returns once the job is committed. With ``source``,
        the repository is recorded at its first enqueue, and an enqueue naming another
        source is ``refused`` (see :class:`semgraph.queue.models.RepoRecord`)."""
        request = enqueue_request(repo_key, **fields)
        result = self.enqueue_many([request], now=now)[0]
        if result.refused:
            raise SourceConflict(result.detail or f"enqueue for {repo_key} refused")
        return result

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
        args = (self.settings, list(requests), now, self.pause)
        results = self._write("enqueue", write_batch, *args, retry_unique=True)
        for result in results:
            metrics.TRANSITIONS.labels(action=f"enqueue_{result.outcome}").inc()
        if any(r.outcome in _CLAIMABLE for r in results):
            nudge_workers(self.settings.state_dir)  # idle workers here claim now, not next poll
        return results

    # -- claim ------------------------------------------------------------------------------

    def claim(
        self,
        worker_id: str,
        kinds: list[str],
        *,
        now: float,
        job_id: str | None = None,
        scope: ClaimScope = ClaimScope(),
    ) -> Job | None:
        """Atomically take the best eligible pending job that ``scope`` allows (its lane, and
        the affinity rule: :mod:`semgraph.queue.lanes`), or ``None``; with ``job_id``, that
        job only, when it is eligible, whatever the lane."""
        if not kinds:
            return None
        started = time.perf_counter()
        args = (worker_id, list(kinds), now, job_id, scope)
        job = self._write("claim", self._tx.claim, *args, retry_unique=True)
        metrics.CLAIM_LATENCY.observe(time.perf_counter() - started)
        if job is not None:
            metrics.TRANSITIONS.labels(action="claim").inc()
        return job

    # -- fenced transitions (the owner of a claim) ----------------------------------------------

    def heartbeat(self, job_id: str, token: str, *, now: float) -> HeartbeatResult:
        """Extend the lease. ``owned=False`` tells a stale owner that it lost the job."""
        result = self._write("heartbeat", self._tx.heartbeat, job_id, token, now)
        if not result.owned:
            metrics.LOST_FENCES.labels(op="heartbeat").inc()
        return result

    def complete(self, job_id: str, token: str, *, now: float, files: int | None = None) -> bool:
        """Mark the job succeeded; False when the caller no longer owns it. ``files``: how
        many files the job found in the repository (its size class), when it knows."""
        return self._finish("complete", self._tx.complete, job_id, token, now, files)

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
        return self._finish("fail", self._tx.fail, job_id, token, now, message, kind)

    def release(self, job_id: str, token: str, *, now: float) -> Job | None:
        """Graceful shutdown: back to pending without charging the attempt (or
        ``abandoned`` if an operator asked). None when not owned."""
        return self._finish("release", self._tx.release, job_id, token, now)

    def acknowledge_abandon(self, job_id: str, token: str, *, now: float) -> Job | None:
        """The owner stopped a job an operator abandoned: mark it ``abandoned``."""
        return self._finish("acknowledge_abandon", self._tx.acknowledge_abandon, job_id, token, now)

    # -- recovery (the sweep) -----------------------------------------------------------------

    def running_jobs(self) -> list[RunningJob]:
        rows = self.graph.query("running jobs", q.RUNNING_WITH_WORKERS)
        return [RunningJob(**row) for row in rows]

    def recover(self, job_id: str, token: str, *, now: float, reason: str) -> Job | None:
        """A job whose worker died: charge a crash and return it to pending, or quarantine
        it (crash_count >= max_crashes or attempts >= max_attempts), or mark it abandoned if
        an operator asked. Its running ``:IndexRun`` nodes become ``abandoned`` in the same
        transaction. Fenced by status and token: a job completed meanwhile is left alone
        (returns None)."""
        reason = reason[:MAX_ERROR_CHARS]
        job = self._write("recover", self._tx.recover, job_id, token, now, reason)
        if job is None:
            metrics.LOST_FENCES.labels(op="recover").inc()
        else:
            metrics.CRASHES.inc()
            metrics.TRANSITIONS.labels(action=f"recover_{job.status.value}").inc()
        return job

    # -- operator -------------------------------------------------------------------------------

    def requeue(self, job_id: str, *, now: float) -> Job:
        """failed / quarantined / abandoned -> pending with attempts and crashes reset."""
        job = self._write("requeue", self._tx.requeue, job_id, now)
        metrics.TRANSITIONS.labels(action="requeue").inc()
        return job

    def abandon(self, job_id: str, *, now: float, reason: str) -> Job:
        """pending -> abandoned at once; running -> the owner is asked to stop at its next
        checkpoint (``cancel_reason`` set; it notices within one heartbeat)."""
        check_text("reason", reason, MAX_REASON_CHARS, required=True)
        job = self._write("abandon", self._tx.abandon, job_id, now, reason)
        metrics.TRANSITIONS.labels(action="abandon").inc()
        return job

    def purge(self, *, older_than_s: float, now: float, batch: int = 1000) -> int:
        """Delete terminal jobs finished more than ``older_than_s`` ago (and their delivery
        keys, and long-gone worker records). Returns the number of jobs deleted."""
        if older_than_s < 0:
            raise QueueInputError("older_than_s must be >= 0")
        cutoff = now - older_than_s
        terminal_statuses = sorted(s.value for s in TERMINAL)
        total = 0
        while True:
            rows = self.graph.query(
                "purge", q.PURGE, terminal=terminal_statuses, cutoff=cutoff, batch=batch
            )
            n = int(rows[0]["n"]) if rows else 0
            total += n
            if n < batch:
                break
        workers.purge(self.graph, cutoff=cutoff, batch=batch)
        return total

    # -- workers (:mod:`semgraph.queue.workers`) ------------------------------------------------

    def register_worker(self, worker_id: str, props: dict[str, Any], *, now: float) -> None:
        workers.register(self.graph, worker_id, props, now=now, lease_s=self.settings.lease_s)

    def worker_heartbeat(self, worker_id: str, *, now: float) -> None:
        workers.heartbeat(self.graph, worker_id, now=now, lease_s=self.settings.lease_s)

    def stop_worker(self, worker_id: str, *, now: float) -> None:
        workers.stop(self.graph, worker_id, now=now)

    # -- reads ----------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        rows = self.graph.query("get job", q.GET, id=job_id)
        return Job.from_props(rows[0]["job"]) if rows else None

    def record(self, repo_key: str) -> RepoRecord | None:
        """The repository's record (written at its first enqueue), or ``None``."""
        rows = self.graph.query("get repository record", q.RECORD, key=repo_key)
        return RepoRecord.from_props(rows[0]["record"]) if rows else None

    def records(self, after: str = "", limit: int = 1000) -> list[RepoRecord]:
        """Repository records in key order, the first ``limit`` after key ``after``."""
        if not 1 <= limit <= 100_000:
            raise QueueInputError("limit must be between 1 and 100000")
        rows = self.graph.query("list repository records", q.RECORDS, after=after, limit=limit)
        return [RepoRecord.from_props(r["record"]) for r in rows]

    def due_work(
        self, kinds: list[str], *, now: float, repo: str, any_repo: bool = True, limit: int = 100
    ) -> bool:
        """Whether a pending job of ``kinds`` is due and claimable now: ``repo``'s, or (with
        ``any_repo``) one whose repository runs nothing; of the first ``limit`` due ones."""
        if not kinds:
            return False
        params = {"kinds": kinds, "now": now, "repo": repo, "any_repo": any_repo, "limit": limit}
        return bool(self.graph.query("due work", q.DUE_WORK, **params))

    def list(
        self, status: str | None = None, repo: str | None = None, limit: int = 100
    ) -> list[Job]:
        if status is not None and status not in {s.value for s in JobStatus}:
            raise QueueInputError(
                f"unknown status {status[:50]!r}; one of {', '.join(s.value for s in JobStatus)}"
            )
        if not 1 <= limit <= 100_000:
            raise QueueInputError("limit must be between 1 and 100000")
        rows = self.graph.query("list jobs", q.LIST, status=status, repo=repo, limit=limit)
        return [Job.from_props(r["job"]) for r in rows]

    def stats(self, now: float | None = None) -> QueueStats:
        now = time.time() if now is None else now
        counts = {s.value: 0 for s in JobStatus}
        for row in self.graph.query("stats", q.STATS_COUNTS):
            counts[str(row["status"])] = int(row["n"])
        oldest, next_run = self.pending_times()
        return QueueStats(
            counts=counts,
            oldest_pending_created_at=oldest,
            oldest_pending_age_s=None if oldest is None else max(0.0, now - oldest),
            workers_alive=workers.alive_count(self.graph, now=now),
            next_eligible_at=next_run,
            next_eligible_in_s=None if next_run is None else max(0.0, next_run - now),
        )

    def pending_times(self) -> tuple[float | None, float | None]:
        """(creation of the oldest pending job, earliest ``run_after`` of any pending job)."""
        rows = self.graph.query("stats oldest", q.STATS_OLDEST_PENDING)
        if not rows:
            return None, None
        return rows[0]["oldest"], rows[0]["next_run"]
