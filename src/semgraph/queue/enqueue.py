"""Enqueueing: the fields of a request validated, and a batch of requests planned in memory
and written in one transaction (group commit).

:func:`enqueue_request` refuses a bad field with :class:`QueueInputError` naming it.
:class:`EnqueuePlan` decides each request of a batch in order, from what the batch's
transaction read (known delivery keys, the pending job and the running count of each
repository), exactly as the requests would have been decided one after the other;
:func:`write_batch` (run by :meth:`semgraph.queue.store.JobStore.enqueue_many`) reads, plans
and writes the plan with a few ``UNWIND`` statements. The batch decides on an unlocked read
and is optimistic: its write locks each pending job it merges into and changes it only if it
is still the version read, else the whole batch runs again.

It is over 300 lines because the fields a request may carry, their validation and the plan
that merges them are one contract: a field added in one place is handled in the others.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import neo4j

from semgraph.config import Settings
from semgraph.errors import QueueInputError
from semgraph.queue import queries as q
from semgraph.queue import records
from semgraph.queue.changes import merged_args
from semgraph.queue.models import (
    FOLLOW_ON_KINDS,
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    Job,
    JobStatus,
    RepoRecord,
    claim_key,
)
from semgraph.queue.transaction import Retry

MAX_REPO_KEY = 512
MAX_KIND = 64
MAX_REF = 1024
MAX_COMMIT = 128
MAX_ARGS_BYTES = 64 * 1024
MAX_DELIVERY_KEY = 512
MAX_SOURCE = 4096
MAX_HOST = 64
MAX_NOTE = 1000
HISTORY_KEEP = 20  # entries kept on a job's history


def json_args(args: dict[str, Any] | None) -> str:
    text = json.dumps(args or {}, sort_keys=True, separators=(",", ":"))
    if len(text.encode()) > MAX_ARGS_BYTES:
        raise QueueInputError(f"job args are larger than {MAX_ARGS_BYTES} bytes as JSON")
    return text


def check_text(name: str, value: str | None, limit: int, required: bool = False) -> None:
    """Refuse (:class:`QueueInputError`) a field that is missing when ``required``, not a
    string, blank when required, longer than ``limit`` or holding control characters."""
    if value is None:
        if required:
            raise QueueInputError(f"{name} is required")
        return
    if not isinstance(value, str):
        raise QueueInputError(f"{name} must be a string")
    if required and not value.strip():
        raise QueueInputError(f"{name} must not be empty")
    if len(value) > limit:
        raise QueueInputError(f"{name} is longer than {limit} characters")
    if any(ord(c) < 32 for c in value):
        raise QueueInputError(f"{name} contains control characters")


class EnqueueFields(TypedDict, total=False):
    """What an enqueue may say besides the repository key (:func:`enqueue_request`)."""

    kind: str
    args: dict[str, Any] | None
    ref: str | None
    commit: str | None
    priority: int
    delivery_key: str | None
    source: str | None
    host: str | None
    default_branch: str | None
    note: str | None


def enqueue_request(
    repo_key: str,
    *,
    kind: str = "reindex",
    args: dict[str, Any] | None = None,
    ref: str | None = None,
    commit: str | None = None,
    priority: int = 0,
    delivery_key: str | None = None,
    source: str | None = None,
    host: str | None = None,
    default_branch: str | None = None,
    note: str | None = None,
) -> EnqueueRequest:
    """A validated :class:`EnqueueRequest`; :class:`QueueInputError` names the field it
    refuses. ``source`` is the repository's canonical source, compared as a string with the
    one recorded for ``repo_key``: callers pass it canonical
    (:func:`semgraph.indexer.sources.normalize_source`)."""
    check_text("repo_key", repo_key, MAX_REPO_KEY, required=True)
    check_text("kind", kind, MAX_KIND, required=True)
    check_text("ref", ref, MAX_REF)
    check_text("commit", commit, MAX_COMMIT)
    check_text("delivery_key", delivery_key, MAX_DELIVERY_KEY)
    check_text("source", source, MAX_SOURCE)
    check_text("host", host, MAX_HOST)
    check_text("default_branch", default_branch, MAX_REF)
    check_text("note", note, MAX_NOTE)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise QueueInputError("priority must be an integer")
    if not -1_000_000 <= priority <= 1_000_000:
        raise QueueInputError("priority must be between -1000000 and 1000000")
    return EnqueueRequest(
        repo_key=repo_key,
        kind=kind,
        args=json_args(args),
        ref=ref,
        commit=commit,
        priority=priority,
        delivery_key=delivery_key,
        source=source or None,
        host=host or None,
        default_branch=default_branch or None,
        note=note,
    )


def _history(previous: str | None, note: str | None, now: float) -> str | None:
    """The job's history JSON with ``note`` appended (the newest ``HISTORY_KEEP``)."""
    if note is None:
        return None
    entries = [*json.loads(previous or "[]"), {"at": now, "what": note}]
    return json.dumps(entries[-HISTORY_KEEP:], separators=(",", ":"))


@dataclass
class Slot:
    """The one pending job of a repository while a batch is planned: an existing job
    (``changes`` become one SET) or one the batch creates (``props`` become one CREATE)."""

    props: dict[str, Any]
    new: bool
    changes: dict[str, Any] = field(default_factory=dict)
    seen: dict[str, Any] = field(default_factory=dict)  # the version read (existing jobs)

    @classmethod
    def existing(cls, job: Job) -> Slot:
        props = {
            "id": job.id,
            "kind": job.kind,
            "args": json.dumps(job.args, sort_keys=True, separators=(",", ":")),
            "ref": job.ref,
            "priority": job.priority,
            "run_after": job.run_after,
            "created_at": job.created_at,
            "coalesced_count": job.coalesced_count,
            "commit": job.commit,
            "pushed_at": job.pushed_at,
            "history": json.dumps([h.__dict__ for h in job.history], separators=(",", ":")),
        }
        seen = {"coalesced_count": job.coalesced_count, "updated_at": job.updated_at}
        return cls(props, new=False, seen=seen)

    @property
    def job_id(self) -> str:
        return str(self.props["id"])

    @property
    def update(self) -> bool:
        return not self.new and bool(self.changes)

    def create_props(self) -> dict[str, Any]:
        return {k: v for k, v in self.props.items() if v is not None}

    def coalesce(self, req: EnqueueRequest, now: float) -> None:
        """Merge a push: latest commit wins (a request naming none keeps the pending one),
        highest priority kept, args and ref replaced when given."""
        priority = max(int(self.props["priority"]), req.priority)
        change: dict[str, Any] = {
            "commit": req.commit if req.commit is not None else self.props.get("commit"),
            "pushed_at": now if req.commit is not None else self.props.get("pushed_at"),
            "ref": req.ref if req.ref is not None else self.props["ref"],
            "args": merged_args(str(self.props["args"]), req.args),
            "priority": priority,
            "claim_key": claim_key(
                priority, self.props["run_after"], self.props["created_at"], self.job_id
            ),
            "coalesced_count": int(self.props["coalesced_count"]) + 1,
            "updated_at": now,
        }
        if self.props["kind"] != req.kind and req.kind not in FOLLOW_ON_KINDS:
            change["kind"] = req.kind  # a follow-on never replaces the work it follows
        history = _history(self.props.get("history"), req.note, now)
        if history is not None:
            change["history"] = history
        self.props.update(change)
        self.changes.update(change)


class EnqueuePlan:
    """Decides a batch's requests in order, in memory, from what the transaction read."""

    def __init__(
        self,
        settings: Settings,
        now: float,
        seen: dict[str, str],
        slots: dict[str, Slot],
        running: dict[str, int],
        records: dict[str, RepoRecord] | None = None,
    ) -> None:
        self.settings = settings
        self.now = now
        self.seen = dict(seen)
        self.slots = slots
        self.running = running
        self.records = dict(records or {})
        self.record_writes: dict[str, dict[str, Any]] = {}
        self.deliveries: list[dict[str, str]] = []

    def add(self, req: EnqueueRequest) -> EnqueueResult:
        key = req.delivery_key
        if key is not None and key in self.seen:
            return EnqueueResult(self.seen[key], EnqueueOutcome.DUPLICATE.value)
        refusal = self._record(req)
        if refusal is not None:
            return EnqueueResult("", EnqueueOutcome.REFUSED.value, refusal)
        slot = self.slots.get(req.repo_key)
        if slot is not None:
            slot.coalesce(req, self.now)
            result = EnqueueResult(slot.job_id, EnqueueOutcome.COALESCED.value)
        else:
            slot = self._create(req)
            self.slots[req.repo_key] = slot
            busy = self.running.get(req.repo_key, 0) > 0
            outcome = EnqueueOutcome.FOLLOW_UP if busy else EnqueueOutcome.CREATED
            result = EnqueueResult(slot.job_id, outcome.value)
        if key is not None:
            self.seen[key] = result.job_id
            self.deliveries.append({"key": key, "job_id": result.job_id})
        return result

    def _record(self, req: EnqueueRequest) -> str | None:
        """Record the repository at its first enqueue that names a source; the refusal's
        text when the recorded source is another one (the key never silently switches)."""
        decision = records.decide(self.records.get(req.repo_key), req, self.now)
        if isinstance(decision, str):
            return decision
        if decision is not None:
            self.records[req.repo_key] = RepoRecord.from_props(decision)
            self.record_writes[req.repo_key] = decision
        return None

    def _create(self, req: EnqueueRequest) -> Slot:
        now = self.now
        job_id = uuid.uuid4().hex
        props = {
            "id": job_id,
            "kind": req.kind,
            "args": req.args,
            "repo_key": req.repo_key,
            "ref": req.ref,
            "commit": req.commit,
            "pushed_at": now if req.commit is not None else None,
            "status": JobStatus.PENDING.value,
            "pending_key": req.repo_key,
            "claim_key": claim_key(req.priority, now, now, job_id),
            "priority": req.priority,
            "attempts": 0,
            "crash_count": 0,
            "max_attempts": self.settings.job_max_attempts,
            "max_crashes": self.settings.job_max_crashes,
            "run_after": now,
            "created_at": now,
            "updated_at": now,
            "errors": "[]",
            "coalesced_count": 0,
            "history": _history(None, req.note, now),
        }
        return Slot(props, new=True)


def write_batch(
    tx: neo4j.Transaction,
    settings: Settings,
    requests: list[EnqueueRequest],
    now: float,
    pause: Callable[[str], None],
) -> list[EnqueueResult]:
    """Read, plan and write one batch in ``tx``; :class:`Retry` when a pending job changed
    since the read (the caller runs the batch again). ``pause`` reaches the store's fault points."""
    keys = sorted({r.delivery_key for r in requests if r.delivery_key is not None})
    repo_keys = sorted({r.repo_key for r in requests})
    read = tx.run(q.ENQUEUE_READ, repo_keys=repo_keys, keys=keys).single(strict=True)
    pause("enqueue:after_read")
    seen = {row["key"]: row["job_id"] for row in read["seen"] if row["key"] is not None}
    slots: dict[str, Slot] = {}
    running: dict[str, int] = {}
    records: dict[str, RepoRecord] = {}
    for row in read["repos"]:
        running[row["repo_key"]] = int(row["running"])
        if row["pending"] is not None:
            slots[row["repo_key"]] = Slot.existing(Job.from_props(row["pending"]))
        if row["record"] is not None:
            records[row["repo_key"]] = RepoRecord.from_props(row["record"])
    plan = EnqueuePlan(settings, now, seen, slots, running, records)
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
    record_rows = [plan.record_writes[k] for k in sorted(plan.record_writes)]
    if updates or creates or plan.deliveries or record_rows:
        written = tx.run(
            q.ENQUEUE_WRITE,
            updates=updates,
            creates=creates,
            lock_keys=sorted({str(props["repo_key"]) for props in creates}),
            deliveries=plan.deliveries,
            records=record_rows,
            now=now,
        ).single(strict=True)
        if written["updated"] != len(updates):
            raise Retry()  # a pending job changed since the read: decide again
    pause("enqueue:before_commit")
    return results
