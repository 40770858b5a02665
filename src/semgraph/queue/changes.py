"""What a job's state changes write, inside the caller's transaction: the job locked and
read, its properties updated, the properties of a terminal status or of a return to pending
(merging the repository's pending follow-up into it), and the error history.

The functions that take ``tx`` run inside the transitions of
:class:`semgraph.queue.transitions.Transitions` (the locking rules are in
:mod:`semgraph.queue.store`); the others only build properties.
"""

from __future__ import annotations

import json
from typing import Any

import neo4j

from semgraph.queue import queries as q
from semgraph.queue.models import ErrorEntry, FailureKind, Job, JobStatus, claim_key

Tx = neo4j.ManagedTransaction | neo4j.Transaction


def lock(tx: Tx, job_id: str) -> Job | None:
    """Lock the job node, then read it (None when there is no such job)."""
    record = tx.run(q.LOCK_JOB, id=job_id).single()
    return Job.from_props(record["job"]) if record else None


def update(tx: Tx, job_id: str, props: dict[str, Any]) -> Job:
    return Job.from_props(tx.run(q.UPDATE_JOB, id=job_id, props=props).single(strict=True)["job"])


def history(job: Job, now: float, kind: FailureKind, message: str, keep: int) -> str:
    """The job's error history with one entry added, the last ``keep`` kept, as JSON."""
    entries = [
        *job.errors,
        ErrorEntry(at=now, attempt=job.attempts, kind=kind.value, message=message),
    ]
    return json.dumps([e.__dict__ for e in entries[-keep:]], separators=(",", ":"))


def terminal(status: JobStatus, now: float) -> dict[str, Any]:
    return {
        "status": status.value,
        "finished_at": now,
        "updated_at": now,
        "lease_expires_at": None,
        "pending_key": None,
        "claim_key": None,
    }


def abandon_props(job: Job, now: float, reason: str, keep: int) -> dict[str, Any]:
    return {
        **terminal(JobStatus.ABANDONED, now),
        "cancel_reason": None,
        "last_error": f"abandoned: {reason}",
        "errors": history(job, now, FailureKind.ABANDONED, reason, keep),
    }


def to_pending(
    tx: neo4j.Transaction, job: Job, props: dict[str, Any], now: float
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
    record = tx.run(q.PENDING_FOR_REPO, repo_key=job.repo_key).single()
    if record is not None and record["id"] != job.id:
        other = lock(tx, record["id"])
        if other is not None and other.status is JobStatus.PENDING:
            props.update(
                commit=other.commit,
                kind=other.kind,  # the newest request wins, as when a pending job coalesces
                ref=other.ref if other.ref is not None else job.ref,
                args=json.dumps(other.args, sort_keys=True, separators=(",", ":")),
                priority=max(job.priority, other.priority, int(props.get("priority", 0))),
                coalesced_count=job.coalesced_count + other.coalesced_count + 1,
            )
            tx.run(q.ABSORB_MOVE_DELIVERIES, from_id=other.id, to_id=job.id).consume()
            tx.run(q.ABSORB_DELETE, id=other.id).consume()
    props["claim_key"] = claim_key(
        int(props.get("priority", job.priority)),
        float(props.get("run_after", job.run_after)),
        job.created_at,
        job.id,
    )
    return props
