"""Planning a batch of enqueues in memory (group commit).

:class:`EnqueuePlan` decides each request of a batch in order, from what the batch's
transaction read (known delivery keys, the pending job and the running count of each
repository), exactly as the requests would have been decided one after the other; the
store then writes the plan with a few ``UNWIND`` statements (:mod:`semgraph.queue.store`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.queue.models import (
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    Job,
    JobStatus,
    claim_key,
)


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
        """Merge a push: latest commit wins, highest priority kept, args and ref replaced
        when given."""
        priority = max(int(self.props["priority"]), req.priority)
        change: dict[str, Any] = {
            "commit": req.commit,
            "ref": req.ref if req.ref is not None else self.props["ref"],
            "args": req.args if req.args != "{}" else self.props["args"],
            "priority": priority,
            "claim_key": claim_key(
                priority, self.props["run_after"], self.props["created_at"], self.job_id
            ),
            "coalesced_count": int(self.props["coalesced_count"]) + 1,
            "updated_at": now,
        }
        if self.props["kind"] != req.kind:
            change["kind"] = req.kind
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
    ) -> None:
        self.settings = settings
        self.now = now
        self.seen = dict(seen)
        self.slots = slots
        self.running = running
        self.deliveries: list[dict[str, str]] = []

    def add(self, req: EnqueueRequest) -> EnqueueResult:
        key = req.delivery_key
        if key is not None and key in self.seen:
            return EnqueueResult(self.seen[key], EnqueueOutcome.DUPLICATE.value)
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
        }
        return Slot(props, new=True)
