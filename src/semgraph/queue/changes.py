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


_KEPT_ARGS = ("source", "commit", "ref")


def merged_args(old: str, new: str) -> str:
    """A coalesced job's args: the newest request's, but never losing the source, pushed
    commit or ref the job had to a request that names none (``semgraph enqueue KEY``, a
    repair's ``{"source": ..., "force": true}``): a push is never dropped by a coalesce."""
    if new == "{}":
        return old
    old_args, new_args = json.loads(old), json.loads(new)
    for name in _KEPT_ARGS:
        if new_args.get(name) is None and old_args.get(name) is not None:
            new_args[name] = old_args[name]
    return json.dumps(new_args, sort_keys=True, separators=(",", ":"))


def _args_json(job: Job) -> str:
    return json.dumps(job.args, sort_keys=True, separators=(",", ":"))


def pushed_later(a: Job, b: Job) -> bool:
    """Whether ``a`` holds a later push than ``b``: a job that names no commit holds none; a
    job from before ``pushed_at`` was recorded counts from its last update."""
    if a.commit is None or b.commit is None:
        return b.commit is None
    return (a.pushed_at or a.updated_at) >= (b.pushed_at or b.updated_at)


def to_pending(
    tx: neo4j.Transaction, job: Job, props: dict[str, Any], now: float
) -> dict[str, Any]:
    """Props that return ``job`` to pending; a follow-up already pending for the
    repository is merged into it (latest commit wins, highest priority kept; a follow-up
    naming no commit or source keeps the job's: see :func:`merged_args`)."""
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
            # the later push wins: a requeued old job can find a newer push pending, and a
            # follow-up can name no commit at all (an operator enqueue, a repair)
            newer, older = (other, job) if pushed_later(other, job) else (job, other)
            props.update(
                commit=newer.commit if newer.commit is not None else older.commit,
                pushed_at=newer.pushed_at if newer.commit is not None else older.pushed_at,
                kind=other.kind,  # the newest request wins, as when a pending job coalesces
                ref=newer.ref if newer.ref is not None else older.ref,
                args=merged_args(_args_json(older), _args_json(newer)),
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
