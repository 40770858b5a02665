"""Lanes and soft affinity against the real Bolt server (issue 26, :mod:`semgraph.queue.lanes`):
a small-lane worker never claims a large repository's job, an unknown repository is large, a
repository's class follows its last attempt, ``any`` claims both; a pending job waits for the
idle live host that last ran its repository, for a bounded time only."""

from __future__ import annotations

from typing import Any

import pytest

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.errors import ConfigError
from semgraph.faults import Faults
from semgraph.queue import queries as q
from semgraph.queue import registry
from semgraph.queue.lanes import ClaimScope, Lane, parse_lane
from semgraph.queue.models import Job
from semgraph.queue.records import size_class
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from tests.optional import some

pytestmark = pytest.mark.integration

KINDS = ["reindex"]
SMALL = ClaimScope(Lane.SMALL, "host-s")
LARGE = ClaimScope(Lane.LARGE, "host-l")
ANY = ClaimScope(Lane.ANY, "host-x")


@pytest.fixture
def store(graph: Graph) -> JobStore:
    settings = load_settings(
        lane_small_max_files=100,
        lane_small_max_job_s=60,
        claim_affinity_s=30,
        lease_s=30,
        backoff_base_s=10,
        backoff_cap_s=10,
    )
    return JobStore(graph, settings)


def enqueue(store: JobStore, repo: str, now: float) -> str:
    return store.enqueue(repo, now=now, source=f"file:///srv/{repo}").job_id


def record(graph: Graph, repo: str) -> dict[str, Any]:
    rows = graph.query("record", q.RECORD, key=repo)
    return dict(rows[0]["record"]) if rows else {}


def run_once(
    store: JobStore, repo: str, *, at: float, took_s: float, files: int | None, worker: str
) -> Job:
    """A job of ``repo`` claimed at ``at`` by ``worker`` (any lane) and completed ``took_s``
    later having found ``files`` files."""
    enqueue(store, repo, at)
    job = some(store.claim(worker, KINDS, now=at, scope=ANY))
    assert job.repo_key == repo
    assert store.complete(job.id, some(job.claim_token), now=at + took_s, files=files)
    return job


def test_an_unknown_repository_is_large(store: JobStore, graph: Graph) -> None:
    """A first index (a record without sizes), and a repository without a record."""
    enqueue(store, "org/new", 1.0)
    store.enqueue("org/no-record", now=2.0)
    assert store.claim("w-s", KINDS, now=10.0, scope=SMALL) is None
    first = some(store.claim("w-l", KINDS, now=10.0, scope=LARGE))
    second = some(store.claim("w-l2", KINDS, now=10.0, scope=LARGE))
    assert {first.repo_key, second.repo_key} == {"org/new", "org/no-record"}
    for repo in ("org/new", "org/no-record", "org/never-heard-of"):  # what `repos show` says
        assert size_class(graph, store.settings, repo) == "large"


def test_a_small_lane_worker_never_claims_a_large_repository(store: JobStore, graph: Graph) -> None:
    run_once(store, "org/small", at=1.0, took_s=5.0, files=10, worker="w0")
    run_once(store, "org/many-files", at=1.0, took_s=5.0, files=101, worker="w0")
    run_once(store, "org/slow", at=1.0, took_s=61.0, files=10, worker="w0")
    assert record(graph, "org/small")["files"] == 10
    assert record(graph, "org/slow")["last_job_s"] == 61.0
    classes = {r: size_class(graph, store.settings, r) for r in ("org/small", "org/many-files")}
    assert classes == {"org/small": "small", "org/many-files": "large"}
    assert size_class(graph, store.settings, "org/slow") == "large"
    for repo in ("org/many-files", "org/slow", "org/small"):
        enqueue(store, repo, 100.0)
    got = some(store.claim("w-s", KINDS, now=200.0, scope=SMALL))
    assert got.repo_key == "org/small"
    assert store.claim("w-s", KINDS, now=200.0, scope=SMALL) is None
    large = {some(store.claim(f"w-l{i}", KINDS, now=200.0, scope=LARGE)).repo_key for i in (1, 2)}
    assert large == {"org/many-files", "org/slow"}
    assert store.claim("w-l3", KINDS, now=200.0, scope=LARGE) is None


def test_the_any_lane_claims_both_in_claim_order(store: JobStore) -> None:
    run_once(store, "org/small", at=1.0, took_s=5.0, files=10, worker="w0")
    big = enqueue(store, "org/big", 100.0)
    small = enqueue(store, "org/small", 101.0)
    assert some(store.claim("w1", KINDS, now=200.0, scope=ANY)).id == big
    assert some(store.claim("w2", KINDS, now=200.0, scope=ANY)).id == small


def test_a_repository_changes_class_with_its_last_attempt(store: JobStore, graph: Graph) -> None:
    """First index (large) -> a fast push (small) -> a push that timed out (large again)."""
    run_once(store, "org/r", at=1.0, took_s=300.0, files=50, worker="w0")  # the first index
    enqueue(store, "org/r", 400.0)
    assert store.claim("w-s", KINDS, now=400.0, scope=SMALL) is None  # 300 s: large
    push = some(store.claim("w-l", KINDS, now=400.0, scope=LARGE))
    assert store.complete(push.id, some(push.claim_token), now=402.0, files=None)
    assert record(graph, "org/r")["files"] == 50  # a job that did not count keeps the count
    enqueue(store, "org/r", 500.0)
    slow = some(store.claim("w-s", KINDS, now=500.0, scope=SMALL))  # 2 s: small now
    failed = some(store.fail(slow.id, some(slow.claim_token), now=590.0, message="timeout"))
    assert record(graph, "org/r")["last_job_s"] == 90.0
    assert store.claim("w-s", KINDS, now=failed.run_after, scope=SMALL) is None
    assert some(store.claim("w-l", KINDS, now=failed.run_after, scope=LARGE)).id == slow.id


def test_the_claim_rechecks_the_class_after_the_repository_lock(
    store: JobStore, graph: Graph
) -> None:
    """CLAIM_ONE decides again: a class that changed after the candidates were read (here:
    written between the two statements) is not claimed by the wrong lane."""
    run_once(store, "org/r", at=1.0, took_s=5.0, files=10, worker="w0")
    enqueue(store, "org/r", 100.0)
    racing = JobStore(graph, store.settings, faults=Faults())

    def grow(**_: object) -> None:
        graph.query("grow", "MATCH (r:RepoRecord {key: 'org/r'}) SET r.files = 1000")

    with racing.faults.armed("queue.claim:after_read", grow):
        assert racing.claim("w-s", KINDS, now=200.0, scope=SMALL) is None
    assert some(store.claim("w-l", KINDS, now=200.0, scope=LARGE)).repo_key == "org/r"


def test_one_running_job_per_repository_holds_across_lanes(store: JobStore) -> None:
    run_once(store, "org/r", at=1.0, took_s=5.0, files=10, worker="w0")
    enqueue(store, "org/r", 100.0)
    running = some(store.claim("w-s", KINDS, now=100.0, scope=SMALL))
    enqueue(store, "org/r", 101.0)  # the follow-up
    for scope in (SMALL, LARGE, ANY):
        assert store.claim("w-other", KINDS, now=102.0, scope=scope) is None
    assert store.complete(running.id, some(running.claim_token), now=103.0, files=10)
    assert store.claim("w-other", KINDS, now=104.0, scope=SMALL) is not None


def test_a_claim_by_id_ignores_the_lane(store: JobStore) -> None:
    job_id = enqueue(store, "org/new", 1.0)
    assert some(store.claim("w-s", KINDS, now=2.0, job_id=job_id, scope=SMALL)).id == job_id


def test_an_unknown_lane_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="unknown lane 'tiny': one of small, large, any"):
        parse_lane("tiny")
    with pytest.raises(ConfigError, match=r"SEMGRAPH_WORKER_LANE.*unknown lane 'huge'"):
        load_settings(worker_lane="huge")
    assert parse_lane(" Small ") is Lane.SMALL


# -- soft affinity ---------------------------------------------------------------------------


def register(store: JobStore, worker_id: str, name: str, now: float, lane: str = "any") -> None:
    store.register_worker(worker_id, {"name": name, "lane": lane}, now=now)


def test_a_job_waits_for_the_idle_live_host_that_last_ran_it_then_anyone_takes_it(
    store: JobStore, graph: Graph
) -> None:
    register(store, "wa", "host-a", now=0.0)
    run_once(store, "org/r", at=1.0, took_s=5.0, files=10, worker="wa")
    assert record(graph, "org/r")["last_worker"] == "host-a"
    register(store, "wa", "host-a", now=100.0)  # alive (lease 30 s)
    job_id = enqueue(store, "org/r", 100.0)
    b = ClaimScope(Lane.ANY, "host-b")
    assert store.claim("wb", KINDS, now=110.0, scope=b) is None  # left to host-a
    a = ClaimScope(Lane.ANY, "host-a")
    assert some(store.claim("wa2", KINDS, now=110.0, scope=a)).id == job_id  # same host: yes
    # the window is bounded: 30 s after the job became due, anyone takes it
    store.release(job_id, some(some(store.get(job_id)).claim_token), now=111.0)
    register(store, "wa", "host-a", now=125.0)
    assert store.claim("wb", KINDS, now=140.0, scope=b) is None  # due at 111: 29 s
    assert some(store.claim("wb", KINDS, now=141.5, scope=b)).id == job_id


def test_no_affinity_to_a_dead_busy_or_wrong_lane_host_or_when_off(
    store: JobStore, graph: Graph
) -> None:
    register(store, "wa", "host-a", now=0.0)
    run_once(store, "org/r", at=1.0, took_s=5.0, files=10, worker="wa")
    b = ClaimScope(Lane.ANY, "host-b")
    # dead: its lease (30 s from its last heartbeat at 0) expired
    job_id = enqueue(store, "org/r", 100.0)
    got = some(store.claim("wb", KINDS, now=101.0, scope=b))
    assert got.id == job_id
    store.release(job_id, some(got.claim_token), now=102.0)
    # busy: alive but running another repository's job
    register(store, "wa", "host-a", now=102.0)
    store.enqueue("org/other", now=102.0, priority=5)  # claimed first
    other = some(store.claim("wa", KINDS, now=102.0, scope=ClaimScope(Lane.ANY, "host-a")))
    assert other.repo_key == "org/other"
    assert some(store.claim("wb", KINDS, now=103.0, scope=b)).id == job_id
    store.release(job_id, some(some(store.get(job_id)).claim_token), now=104.0)
    store.complete(other.id, some(other.claim_token), now=104.0)
    # a lane that does not take the repository (host-a now only runs large ones)
    register(store, "wa", "host-a", now=104.0, lane="large")
    assert some(store.claim("wb", KINDS, now=105.0, scope=b)).id == job_id
    store.release(job_id, some(some(store.get(job_id)).claim_token), now=106.0)
    # turned off
    register(store, "wa", "host-a", now=106.0)
    assert store.claim("wb", KINDS, now=107.0, scope=b) is None
    off = JobStore(graph, store.settings.model_copy(update={"claim_affinity_s": 0.0}))
    assert some(off.claim("wb", KINDS, now=107.0, scope=b)).id == job_id


# -- the worker ------------------------------------------------------------------------------


def test_a_worker_records_its_lane_and_what_the_job_found(graph: Graph) -> None:
    """The Worker claims in its lane, registers it, and a completed job leaves on the record
    what the job reported (``ctx.files``), its duration and the worker's name."""
    clock = iter(float(t) for t in range(1000, 2000))
    settings = load_settings(worker_name="host-w", worker_lane="small", poll_interval_s=0.01)

    def counts(ctx: JobContext) -> None:
        ctx.files = 42

    registry.register("wl_count", counts)
    try:
        store = JobStore(graph, settings)
        store.enqueue("org/w", now=1.0, kind="wl_count", source="file:///srv/org/w")
        small = Worker(settings, graph, clock=lambda: next(clock), tick_s=0.01)
        assert small.run(once=True) == 0
        assert store.list(repo="org/w")[0].status.value == "pending"  # unknown: large
        wide = settings.model_copy(update={"worker_lane": "any"})
        assert Worker(wide, graph, clock=lambda: next(clock), tick_s=0.01).run(once=True) == 0
        rec = record(graph, "org/w")
        assert (rec["files"], rec["last_worker"]) == (42, "host-w")
        assert 0 < rec["last_job_s"] < 120
        lanes = graph.query("lanes", "MATCH (w:Worker) RETURN collect(w.lane) AS lanes")
        assert sorted(lanes[0]["lanes"]) == ["any", "small"]
        store.enqueue("org/w", now=next(clock), kind="wl_count")  # now small
        assert Worker(settings, graph, clock=lambda: next(clock), tick_s=0.01).run(once=True) == 0
        assert [j.status.value for j in store.list(repo="org/w")] == ["succeeded", "succeeded"]
    finally:
        registry.unregister("wl_count")
