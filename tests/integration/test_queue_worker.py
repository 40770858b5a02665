"""The worker in-process against the real Bolt server, with an injected clock: the time limit
(cooperative and stuck jobs), a stale owner that lost its job, retention, metrics."""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from semgraph.config import Settings, load_settings
from semgraph.db import Graph
from semgraph.queue import registry
from semgraph.queue.models import JobStatus
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore
from semgraph.queue.worker import EXIT_STUCK, Worker
from tests.optional import some

pytestmark = pytest.mark.integration


class FakeClock:
    """Seconds that pass only when a test (or the job under test) says so."""

    def __init__(self, start: float = 1_000.0, step: float = 0.0) -> None:
        self.t = start
        self.step = step
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            self.t += self.step
            return self.t

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.t += seconds


@pytest.fixture
def wsettings() -> Settings:
    return load_settings(
        job_timeout_s=100,
        job_cancel_grace_s=5,
        heartbeat_s=1,
        lease_s=30,
        backoff_base_s=0,
        job_max_attempts=3,
        poll_interval_s=0.01,
    )


@pytest.fixture
def kinds() -> Iterator[dict[str, object]]:
    made: dict[str, object] = {}
    yield made
    for kind in made:
        registry.unregister(kind)


def test_time_limit_stops_a_cooperative_job_and_counts_as_timeout(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    clock = FakeClock()

    def slow(ctx: JobContext) -> None:
        clock.advance(wsettings.job_timeout_s + 1)  # "two hours later"
        while True:
            ctx.checkpoint("loop")
            time.sleep(0.005)

    registry.register("wt_slow", slow)
    kinds["wt_slow"] = slow
    store = JobStore(graph, wsettings)
    jid = store.enqueue("r/slow", now=clock(), kind="wt_slow").job_id
    exits: list[int] = []
    worker = Worker(wsettings, graph, clock=clock, hard_exit=exits.append, tick_s=0.01)
    assert worker.run(once=True) == 0
    job = some(store.get(jid))
    assert exits == []
    assert (job.status, job.attempts) == (JobStatus.PENDING, 1)
    assert job.errors[-1].kind == "timeout" and "timeout" in (job.last_error or "")


def test_stuck_job_is_recorded_then_the_worker_exits(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    clock = FakeClock(step=0.5)  # time moves on every look at the clock
    release = threading.Event()

    def stuck(ctx: JobContext) -> None:
        release.wait(60)  # never reaches a checkpoint

    registry.register("wt_stuck", stuck)
    kinds["wt_stuck"] = stuck
    store = JobStore(graph, wsettings)
    jid = store.enqueue("r/stuck", now=clock(), kind="wt_stuck").job_id
    exits: list[int] = []
    worker = Worker(wsettings, graph, clock=clock, hard_exit=exits.append, tick_s=0.001)
    try:
        worker.run(once=True)
    finally:
        release.set()
    assert exits == [EXIT_STUCK]
    job = some(store.get(jid))
    assert job.status is JobStatus.PENDING and job.errors[-1].kind == "timeout"


def test_owner_that_lost_the_job_stops_and_writes_nothing(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    clock = FakeClock()
    other = JobStore(graph, wsettings)

    def robbed(ctx: JobContext) -> None:
        token = graph.query(
            "token", "MATCH (j:JobQueue {id: $id}) RETURN j.claim_token AS t", id=ctx.job.id
        )[0]["t"]
        other.recover(ctx.job.id, token, now=clock(), reason="presumed dead")  # a sweep
        clock.advance(wsettings.heartbeat_s + 1)
        while True:
            ctx.checkpoint("loop")
            time.sleep(0.005)

    registry.register("wt_robbed", robbed)
    kinds["wt_robbed"] = robbed
    jid = other.enqueue("r/robbed", now=clock(), kind="wt_robbed").job_id
    exits: list[int] = []
    worker = Worker(wsettings, graph, clock=clock, hard_exit=exits.append, tick_s=0.01)
    worker.run(once=True)
    job = some(other.get(jid))
    assert exits == []
    assert (job.status, job.crash_count, job.attempts) == (JobStatus.PENDING, 1, 1)
    assert [e.kind for e in job.errors] == ["crash"]  # the stale owner recorded nothing


def test_job_error_retries_with_backoff_then_fails_and_alerts(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    clock = FakeClock()

    def broken(ctx: JobContext) -> None:
        raise ValueError(f"bad input on attempt {ctx.job.attempts}")

    registry.register("wt_broken", broken)
    kinds["wt_broken"] = broken
    store = JobStore(graph, wsettings)
    jid = store.enqueue("r/broken", now=clock(), kind="wt_broken").job_id
    before = REGISTRY.get_sample_value("semgraph_alerts_total", {"action": "job_failed"}) or 0
    worker = Worker(wsettings, graph, clock=clock, hard_exit=lambda code: None, tick_s=0.01)
    worker.run(max_jobs=3, idle_exit_s=0)
    job = some(store.get(jid))
    assert (job.status, job.attempts) == (JobStatus.FAILED, 3)
    assert [e.message for e in job.errors] == [
        f"ValueError: bad input on attempt {n}" for n in (1, 2, 3)
    ]
    after = REGISTRY.get_sample_value("semgraph_alerts_total", {"action": "job_failed"})
    assert after == before + 1
    retries = REGISTRY.get_sample_value("semgraph_queue_retries_total", {"reason": "error"})
    assert retries is not None and retries >= 2


def test_an_idle_worker_with_only_jobs_in_backoff_says_when_the_next_may_run(
    graph: Graph, wsettings: Settings, kinds: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()

    def broken(ctx: JobContext) -> None:
        raise ValueError("transient")

    registry.register("wt_backoff", broken)
    kinds["wt_backoff"] = broken
    backing_off = wsettings.model_copy(update={"backoff_base_s": 30.0, "backoff_cap_s": 60.0})
    store = JobStore(graph, backing_off)
    jid = store.enqueue("r/backoff", now=clock(), kind="wt_backoff").job_id
    worker = Worker(backing_off, graph, clock=clock, hard_exit=lambda code: None, tick_s=0.01)
    with caplog.at_level(logging.INFO, logger="semgraph"):
        worker.run(max_jobs=1)  # attempt 1 fails: the job waits in backoff
        job = some(store.get(jid))
        assert job.status is JobStatus.PENDING and job.run_after > clock.t
        worker.run(idle_exit_s=0)  # idle: nothing eligible
    waiting = [r for r in caplog.records if getattr(r, "action", "") == "worker_waiting"]
    assert len(waiting) == 1
    assert waiting[0].next_eligible_at == job.run_after  # type: ignore[attr-defined]
    stats = store.stats(now=clock.t)
    assert stats.next_eligible_at == job.run_after
    assert stats.next_eligible_in_s == pytest.approx(job.run_after - clock.t)
    assert store.stats(now=job.run_after + 1).next_eligible_in_s == 0.0


def test_once_right_after_a_crash_runs_the_recovered_job(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    clock = FakeClock(step=1.0)  # every reading a second later, as real time moves on
    ran: list[str] = []

    def record(ctx: JobContext) -> None:
        ran.append(ctx.job.id)

    registry.register("wt_recovered", record)
    kinds["wt_recovered"] = record
    store = JobStore(graph, wsettings)
    jid = store.enqueue("r/recovered", now=clock(), kind="wt_recovered").job_id
    assert store.claim("w-gone", ["wt_recovered"], now=clock()) is not None  # then it died
    worker = Worker(wsettings, graph, clock=clock, hard_exit=lambda code: None, tick_s=0.01)
    assert worker.run(once=True) == 0  # the start's sweep recovers it; the claim takes it
    assert ran == [jid]
    job = some(store.get(jid))
    assert job.status is JobStatus.SUCCEEDED and job.crash_count == 1


def test_maintenance_prunes_old_jobs_and_publishes_gauges(
    graph: Graph, wsettings: Settings
) -> None:
    clock = FakeClock(start=10.0)
    store = JobStore(graph, wsettings)
    old = store.enqueue("r/old", now=1.0).job_id
    store.abandon(old, now=2.0, reason="x")
    store.enqueue("r/keep", now=5.0)
    clock.t = 2.0 + wsettings.job_retention_s + 1
    worker = Worker(wsettings, graph, clock=clock)
    worker.register()
    worker.maintain()
    assert store.get(old) is None
    assert REGISTRY.get_sample_value("semgraph_queue_jobs", {"status": "pending"}) == 1
    age = REGISTRY.get_sample_value("semgraph_queue_oldest_pending_age_seconds")
    assert age == pytest.approx(clock.t - 5.0)


def test_an_idle_worker_claims_a_local_enqueue_at_once_not_at_its_next_poll(
    graph: Graph, wsettings: Settings, kinds: dict[str, object]
) -> None:
    """A 60 s poll, and the job still starts within a second of its enqueue: the enqueue
    nudged the worker's socket (semgraph.queue.wake)."""
    started: list[float] = []

    def record(ctx: JobContext) -> None:
        started.append(time.monotonic())

    registry.register("wt_woken", record)
    kinds["wt_woken"] = record
    state = Path(tempfile.mkdtemp(prefix="wk", dir="/tmp"))  # a short socket path
    slow_poll = wsettings.model_copy(update={"poll_interval_s": 60.0, "state_dir": state})
    worker = Worker(slow_poll, graph, hard_exit=lambda code: None, tick_s=0.01)
    runner = threading.Thread(target=worker.run, kwargs={"max_jobs": 1}, daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 30
        while not list((state / "run" / "wake").glob("*.sock")):  # idle and listening
            assert time.monotonic() < deadline, "the worker never listened"
            time.sleep(0.05)
        time.sleep(0.3)  # inside its 60 s wait now
        queued = time.monotonic()
        JobStore(graph, slow_poll).enqueue("r/woken", now=time.time(), kind="wt_woken")
        runner.join(timeout=30)
        assert not runner.is_alive()
        assert started and started[0] - queued < 5.0
        assert not list((state / "run" / "wake").glob("*.sock"))  # removed at its stop
    finally:
        worker.request_stop()
        runner.join(timeout=10)
        shutil.rmtree(state, ignore_errors=True)
