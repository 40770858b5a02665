"""The job's state machine: each transition is the body of one write transaction, run by
:class:`semgraph.queue.store.JobStore` (which retries it, counts it and fences the caller's
view of it).

* claim: pending -> running (a new claim token, the attempt charged);
* the owner's transitions, fenced by ``status = 'running'`` and the claim token: heartbeat,
  complete, fail (back to pending with backoff, or failed), release (graceful shutdown),
  acknowledge an operator's abandon;
* recover: the sweep's, for a job whose worker died (a crash charged; the job's running
  ``:IndexRun`` nodes abandoned in the same transaction);
* the operator's: requeue, abandon.

Each locks the job node before it reads the state it decides on (:func:`changes.lock`) and
reaches the store's fault points (``pause``: ``queue.<point>``) where the race tests stop.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import neo4j

from semgraph.config import Settings
from semgraph.errors import InvalidTransition, JobNotFound
from semgraph.graph.runs import abandon_job_runs
from semgraph.queue import queries as q
from semgraph.queue.backoff import backoff_s
from semgraph.queue.changes import abandon_props, history, lock, terminal, to_pending, update
from semgraph.queue.lanes import ClaimScope
from semgraph.queue.models import REQUEUEABLE, FailureKind, HeartbeatResult, Job, JobStatus


class Transitions:
    """The transaction bodies of every job state change (each takes the ``tx`` first)."""

    def __init__(
        self, settings: Settings, rng: random.Random, pause: Callable[[str], None]
    ) -> None:
        self.settings = settings
        self._rng = rng
        self.pause = pause

    # -- helpers --------------------------------------------------------------------------------

    def _history(self, job: Job, now: float, kind: FailureKind, message: str) -> str:
        return history(job, now, kind, message, self.settings.job_error_history)

    def _abandon_props(self, job: Job, now: float, reason: str) -> dict[str, Any]:
        return abandon_props(job, now, reason, self.settings.job_error_history)

    def _retry_later(
        self, tx: neo4j.Transaction, job: Job, attempt: int, props: dict[str, Any], now: float
    ) -> dict[str, Any]:
        """Back to pending after the backoff of ``attempt`` (a failure's or a crash's)."""
        s = self.settings
        delay = backoff_s(attempt, s.backoff_base_s, s.backoff_cap_s, self._rng)
        return to_pending(tx, job, {**props, "run_after": now + delay}, now)

    def _fenced(self, tx: neo4j.Transaction, op: str, job_id: str, token: str) -> Job | None:
        self.pause(f"{op}:before_lock")
        job = lock(tx, job_id)
        if job is None or job.status is not JobStatus.RUNNING or job.claim_token != token:
            return None
        return job

    # -- claim ----------------------------------------------------------------------------------

    def claim(
        self,
        tx: neo4j.Transaction,
        worker_id: str,
        kinds: list[str],
        now: float,
        job_id: str | None = None,
        scope: ClaimScope = ClaimScope(),
    ) -> Job | None:
        """The candidates (in claim order; lanes and affinity: :mod:`semgraph.queue.lanes`),
        then the first that CLAIM_ONE takes; a claim by id ignores lanes and affinity."""
        lanes = (scope if job_id is None else ClaimScope()).params(self.settings)
        if job_id is None:
            context = tx.run(q.CLAIM_CONTEXT, lanes, now=now).single()
            assert context is not None  # an aggregation answers one row
            found = {**lanes, **dict(context), "now": now, "kinds": kinds, "limit": 8}
            rows = list(tx.run(q.CLAIM_CANDIDATES, found))
        else:
            rows = list(tx.run(q.CLAIM_CANDIDATE_BY_ID, id=job_id, now=now, kinds=kinds))
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
            record = tx.run(q.CLAIM_ONE, {**lanes, **params}).single()
            if record is not None:
                return Job.from_props(record["job"])
        return None

    # -- the owner's (fenced) -------------------------------------------------------------------

    def heartbeat(
        self, tx: neo4j.Transaction, job_id: str, token: str, now: float
    ) -> HeartbeatResult:
        job = self._fenced(tx, "heartbeat", job_id, token)
        if job is None:
            return HeartbeatResult(owned=False)
        lease = {"lease_expires_at": now + self.settings.lease_s, "updated_at": now}
        update(tx, job_id, lease)
        return HeartbeatResult(owned=True, cancel_reason=job.cancel_reason)

    def complete(
        self, tx: neo4j.Transaction, job_id: str, token: str, now: float, files: int | None
    ) -> bool:
        """Mark the job succeeded; record its duration, ``files`` and host on its
        repository's record (the lanes' size class, the affinity)."""
        props = {
            "status": JobStatus.SUCCEEDED.value,
            "finished_at": now,
            "updated_at": now,
            "lease_expires_at": None,
            "cancel_reason": None,
        }
        self.pause("complete:before_lock")
        record = tx.run(q.COMPLETE, id=job_id, token=token, props=props).single()
        if record is None:
            return False
        self._record_attempt(tx, Job.from_props(record["job"]), now, files=files, completed=True)
        return True

    @staticmethod
    def _record_attempt(
        tx: neo4j.Transaction, job: Job, now: float, *, files: int | None, completed: bool
    ) -> None:
        """What a finished attempt tells the lanes and the affinity (RECORD_ATTEMPT)."""
        params = {
            "repo_key": job.repo_key,
            "worker_id": job.worker_id,
            "job_s": max(0.0, now - (job.claimed_at if job.claimed_at is not None else now)),
            "files": files,
            "completed": completed,
            "now": now,
        }
        tx.run(q.RECORD_ATTEMPT, params).consume()

    def fail(
        self,
        tx: neo4j.Transaction,
        job_id: str,
        token: str,
        now: float,
        message: str,
        kind: FailureKind,
    ) -> Job | None:
        job = self._fenced(tx, "fail", job_id, token)
        if job is None:
            return None
        self._record_attempt(tx, job, now, files=None, completed=False)
        props: dict[str, Any] = {
            "last_error": message,
            "errors": self._history(job, now, kind, message),
            "updated_at": now,
        }
        if job.cancel_reason is not None:
            props.update(terminal(JobStatus.ABANDONED, now), cancel_reason=None)
        elif job.attempts >= job.max_attempts:
            props.update(terminal(JobStatus.FAILED, now))
        else:
            props = self._retry_later(tx, job, job.attempts, props, now)
        return update(tx, job_id, props)

    def release(self, tx: neo4j.Transaction, job_id: str, token: str, now: float) -> Job | None:
        job = self._fenced(tx, "release", job_id, token)
        if job is None:
            return None
        props: dict[str, Any]
        if job.cancel_reason is not None:
            props = self._abandon_props(job, now, job.cancel_reason)
        else:
            base = {"attempts": max(0, job.attempts - 1), "run_after": now}
            props = to_pending(tx, job, base, now)
        return update(tx, job_id, props)

    def acknowledge_abandon(
        self, tx: neo4j.Transaction, job_id: str, token: str, now: float
    ) -> Job | None:
        job = self._fenced(tx, "acknowledge_abandon", job_id, token)
        if job is None:
            return None
        reason = job.cancel_reason or "abandoned"
        return update(tx, job_id, self._abandon_props(job, now, reason))

    # -- the sweep's ----------------------------------------------------------------------------

    def recover(
        self, tx: neo4j.Transaction, job_id: str, token: str, now: float, reason: str
    ) -> Job | None:
        job = self._fenced(tx, "recover", job_id, token)
        if job is None:
            return None
        self._record_attempt(tx, job, now, files=None, completed=False)  # an upper bound
        crashes = job.crash_count + 1
        message = f"worker died: {reason}"
        props: dict[str, Any] = {
            "crash_count": crashes,
            "last_error": message,
            "errors": self._history(job, now, FailureKind.CRASH, message),
            "updated_at": now,
        }
        if job.cancel_reason is not None:
            props.update(terminal(JobStatus.ABANDONED, now), cancel_reason=None)
        elif crashes >= job.max_crashes or job.attempts >= job.max_attempts:
            props.update(terminal(JobStatus.QUARANTINED, now))
        else:
            props = self._retry_later(tx, job, crashes, props, now)
        updated = update(tx, job_id, props)
        abandon_job_runs(tx, job_id, now=now, reason=message)  # the same transaction
        return updated

    # -- the operator's -------------------------------------------------------------------------

    def requeue(self, tx: neo4j.Transaction, job_id: str, now: float) -> Job:
        self.pause("requeue:before_lock")
        job = lock(tx, job_id)
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
        return update(tx, job_id, to_pending(tx, job, base, now))

    def abandon(self, tx: neo4j.Transaction, job_id: str, now: float, reason: str) -> Job:
        self.pause("abandon:before_lock")
        job = lock(tx, job_id)
        if job is None:
            raise JobNotFound(f"no job with id {job_id!r}")
        if job.status is JobStatus.PENDING:
            return update(tx, job_id, self._abandon_props(job, now, reason))
        if job.status is JobStatus.RUNNING:
            return update(tx, job_id, {"cancel_reason": reason, "updated_at": now})
        raise InvalidTransition(
            f"job {job_id} is {job.status.value}; only pending or running jobs can be abandoned"
        )
