"""Model-based test: random sequences of enqueue, coalesce, claim, complete, fail, release,
crash, sweep, requeue and abandon against the real queue and an in-memory model, compared
after every step (Hypothesis stateful testing, bounded to run in well under a minute)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.errors import InvalidTransition
from semgraph.queue.store import JobStore
from semgraph.queue.sweep import Identity, sweep

pytestmark = pytest.mark.integration

REPOS = ["org/a", "org/b", "org/c"]
MAX_ATTEMPTS = 3
MAX_CRASHES = 2


@dataclass
class MJob:
    id: str
    repo: str
    commit: str
    priority: int
    created_at: float
    run_after: float
    status: str = "pending"
    attempts: int = 0
    crash_count: int = 0
    coalesced: int = 0
    cancel: bool = False
    token: str | None = None
    claimed_at: float = 0.0


class QueueModel:
    """What the queue should look like, computed without a database."""

    def __init__(self) -> None:
        self.jobs: dict[str, MJob] = {}

    def of(self, status: str, repo: str | None = None) -> list[MJob]:
        return [
            j for j in self.jobs.values() if j.status == status and (repo is None or j.repo == repo)
        ]

    def to_pending(self, job: MJob, now: float) -> None:
        job.status, job.token, job.run_after = "pending", None, now
        for other in self.of("pending", job.repo):
            if other.id != job.id:
                job.commit = other.commit
                job.priority = max(job.priority, other.priority)
                job.coalesced += other.coalesced + 1
                del self.jobs[other.id]

    def best_claimable(self, now: float) -> MJob | None:
        busy = {j.repo for j in self.of("running")}
        ready = [j for j in self.of("pending") if j.run_after <= now and j.repo not in busy]
        ready.sort(key=lambda j: (-j.priority, j.run_after, j.created_at, j.id))
        return ready[0] if ready else None

    def fail(self, job: MJob, now: float) -> None:
        if job.cancel:
            job.status, job.cancel = "abandoned", False
        elif job.attempts >= MAX_ATTEMPTS:
            job.status = "failed"
        else:
            self.to_pending(job, now)

    def crash(self, job: MJob, now: float) -> None:
        job.crash_count += 1
        if job.cancel:
            job.status, job.cancel = "abandoned", False
        elif job.crash_count >= MAX_CRASHES or job.attempts >= MAX_ATTEMPTS:
            job.status = "quarantined"
        else:
            self.to_pending(job, now)


QSETTINGS = load_settings(
    job_max_attempts=MAX_ATTEMPTS,
    job_max_crashes=MAX_CRASHES,
    backoff_base_s=0,
    backoff_cap_s=0,
    lease_s=30,
)


class Machine(RuleBasedStateMachine):
    graph: Any = None
    steps = 0

    def __init__(self) -> None:
        super().__init__()
        self.graph.query("reset", "MATCH (n) DETACH DELETE n")
        self.store = JobStore(self.graph, QSETTINGS)
        self.model = QueueModel()
        self.now = 1000.0

    def tick(self) -> float:
        Machine.steps += 1
        self.now += 1.0
        return self.now

    def pick(self, data: Any, status: str | None) -> MJob | None:
        pool = sorted(
            (j for j in self.model.jobs.values() if status is None or j.status == status),
            key=lambda j: j.created_at,
        )
        return data.draw(st.sampled_from(pool)) if pool else None

    @rule(
        repo=st.sampled_from(REPOS),
        commit=st.sampled_from(["c1", "c2", "c3", "c4"]),
        priority=st.integers(0, 2),
    )
    def enqueue(self, repo: str, commit: str, priority: int) -> None:
        now = self.tick()
        res = self.store.enqueue(repo, now=now, commit=commit, priority=priority)
        pending = self.model.of("pending", repo)
        if pending:
            p = pending[0]
            assert (res.outcome, res.job_id) == ("coalesced", p.id)
            p.commit, p.priority, p.coalesced = (
                commit,
                max(p.priority, priority),
                p.coalesced + 1,
            )
            return
        expected = "follow_up" if self.model.of("running", repo) else "created"
        assert res.outcome == expected
        self.model.jobs[res.job_id] = MJob(res.job_id, repo, commit, priority, now, now)

    @rule()
    def claim(self) -> None:
        now = self.tick()
        want = self.model.best_claimable(now)
        got = self.store.claim("w-dead", ["reindex"], now=now)
        assert (got.id if got else None) == (want.id if want else None)
        if want is not None and got is not None:
            want.status, want.token, want.claimed_at = "running", got.claim_token, now
            want.attempts += 1
            assert got.commit == want.commit

    @precondition(lambda self: bool(self.model.of("running")))
    @rule(data=st.data())
    def complete(self, data: Any) -> None:
        job = self.pick(data, "running")
        assert job is not None
        assert self.store.complete(job.id, job.token or "", now=self.tick())
        job.status, job.cancel = "succeeded", False

    @precondition(lambda self: bool(self.model.of("running")))
    @rule(data=st.data())
    def fail(self, data: Any) -> None:
        job = self.pick(data, "running")
        assert job is not None
        now = self.tick()
        assert self.store.fail(job.id, job.token or "", now=now, message="boom") is not None
        self.model.fail(job, now)

    @precondition(lambda self: bool(self.model.of("running")))
    @rule(data=st.data())
    def release(self, data: Any) -> None:
        job = self.pick(data, "running")
        assert job is not None
        now = self.tick()
        assert self.store.release(job.id, job.token or "", now=now) is not None
        if job.cancel:
            job.status, job.cancel = "abandoned", False
        else:
            job.attempts -= 1
            self.model.to_pending(job, now)

    @precondition(lambda self: bool(self.model.of("running")))
    @rule(data=st.data())
    def crash(self, data: Any) -> None:
        job = self.pick(data, "running")
        assert job is not None
        now = self.tick()
        assert self.store.recover(job.id, job.token or "", now=now, reason="kill") is not None
        self.model.crash(job, now)

    @rule()
    def sweep_all(self) -> None:
        now = self.tick()
        changed = sweep(self.store, now=now, me=Identity.current(), my_worker_id="sweeper")
        running = sorted(self.model.of("running"), key=lambda j: j.claimed_at)
        assert sorted(j.id for j in changed) == sorted(j.id for j in running)
        for job in running:
            self.model.crash(job, now)

    @precondition(lambda self: bool(self.model.jobs))
    @rule(data=st.data())
    def requeue(self, data: Any) -> None:
        job = self.pick(data, None)
        assert job is not None
        now = self.tick()
        if job.status not in {"failed", "quarantined", "abandoned"}:
            with pytest.raises(InvalidTransition):
                self.store.requeue(job.id, now=now)
            return
        self.store.requeue(job.id, now=now)
        job.attempts = job.crash_count = 0
        self.model.to_pending(job, now)

    @precondition(lambda self: bool(self.model.jobs))
    @rule(data=st.data())
    def abandon(self, data: Any) -> None:
        job = self.pick(data, None)
        assert job is not None
        now = self.tick()
        if job.status not in {"pending", "running"}:
            with pytest.raises(InvalidTransition):
                self.store.abandon(job.id, now=now, reason="op")
            return
        self.store.abandon(job.id, now=now, reason="op")
        if job.status == "pending":
            job.status = "abandoned"
        else:
            job.cancel = True

    @invariant()
    def matches(self) -> None:
        real = {j.id: j for j in self.store.list(limit=10_000)}
        assert set(real) == set(self.model.jobs)
        for jid, m in self.model.jobs.items():
            r = real[jid]
            got = (r.status.value, r.attempts, r.crash_count, r.commit, r.priority)
            assert got == (m.status, m.attempts, m.crash_count, m.commit, m.priority), jid
            assert r.coalesced_count == m.coalesced
            assert (r.cancel_reason is not None) == m.cancel
        for repo in REPOS:
            assert len(self.model.of("pending", repo)) <= 1
            assert len(self.model.of("running", repo)) <= 1
        assert all(j.attempts < MAX_ATTEMPTS for j in self.model.of("pending"))


def test_queue_matches_model(graph: Graph) -> None:
    Machine.graph = graph
    Machine.steps = 0
    Machine.TestCase.settings = settings(
        max_examples=25,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    Machine.TestCase().runTest()
    assert Machine.steps >= 200  # the sequences really ran against the server
