"""Group commit (``JobStore.enqueue_many``) against the real Bolt server: a batch decides
exactly as its requests would have one after the other, in one all-or-nothing transaction."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from semgraph.config import Settings, load_settings
from semgraph.db import Graph, connect_graph
from semgraph.errors import GraphUnavailable, QueueInputError
from semgraph.faults import Faults
from semgraph.queue.enqueue import enqueue_request
from semgraph.queue.models import EnqueueRequest, JobStatus
from semgraph.queue.store import JobStore

pytestmark = pytest.mark.integration

KINDS = ["reindex"]
REPOS = ("org/r0", "org/r1", "org/r2")
STATES = ("none", "pending", "running", "running+pending")
OP = {"op": "enqueue"}


@pytest.fixture
def qsettings() -> Settings:
    return load_settings(job_max_attempts=3, job_max_crashes=2, claim_conflict_retries=5)


@pytest.fixture
def store(graph: Graph, qsettings: Settings) -> JobStore:
    return JobStore(graph, qsettings)


def count(graph: Graph, label: str) -> int:
    return int(graph.query("count", f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"])


def test_a_batch_with_duplicates_of_one_delivery_id(store: JobStore, graph: Graph) -> None:
    reqs = [
        enqueue_request("org/a", commit="c1", delivery_key="github:d1"),
        enqueue_request("org/a", commit="c1", delivery_key="github:d1"),  # replay
        enqueue_request("org/a", commit="c2", delivery_key="github:d2"),
        enqueue_request("org/a", commit="c1", delivery_key="github:d1"),  # replay after d2
        enqueue_request("org/b", commit="b1", delivery_key="github:d3"),
    ]
    results = store.enqueue_many(reqs, now=5.0)
    a, b = results[0].job_id, results[4].job_id
    assert [(r.job_id, r.outcome) for r in results] == [
        (a, "created"),
        (a, "duplicate"),
        (a, "coalesced"),
        (a, "duplicate"),  # a replay never rolls the commit back
        (b, "created"),
    ]
    job = store.get(a)
    assert job is not None and job.commit == "c2" and job.coalesced_count == 1
    assert count(graph, "JobDelivery") == 3 and count(graph, "JobQueue") == 2
    # a later batch replaying a committed delivery id is a duplicate too
    again = store.enqueue_many([reqs[0], reqs[2]], now=6.0)
    assert [(r.job_id, r.outcome) for r in again] == [(a, "duplicate"), (a, "duplicate")]
    assert count(graph, "JobDelivery") == 3


def test_a_batch_spanning_repositories_in_every_state(store: JobStore, graph: Graph) -> None:
    store.enqueue("org/running", now=1.0, commit="r0")
    running = store.claim("w", KINDS, now=1.5)
    assert running is not None and running.repo_key == "org/running"
    pending = store.enqueue("org/pending", now=1.0, commit="p0", priority=2)
    reqs = [
        enqueue_request("org/pending", commit="p1", ref="refs/heads/main"),
        enqueue_request("org/running", commit="r1"),
        enqueue_request("org/new", commit="n1", priority=3, args={"source": "x"}),
        enqueue_request("org/running", commit="r2", priority=7),
        enqueue_request("org/new", commit="n2"),
        enqueue_request("org/pending", commit="p2", kind="other"),
    ]
    out = store.enqueue_many(reqs, now=2.0)
    assert [r.outcome for r in out] == [
        "coalesced",
        "follow_up",
        "created",
        "coalesced",
        "coalesced",
        "coalesced",
    ]
    assert out[0].job_id == out[5].job_id == pending.job_id
    assert out[1].job_id == out[3].job_id != running.id
    assert out[2].job_id == out[4].job_id
    p = store.get(pending.job_id)
    assert p is not None
    assert (p.commit, p.ref, p.priority, p.kind, p.coalesced_count) == (
        "p2",
        "refs/heads/main",
        2,
        "other",
        2,
    )
    follow = store.get(out[1].job_id)
    assert follow is not None and follow.status is JobStatus.PENDING
    assert (follow.commit, follow.priority, follow.coalesced_count) == ("r2", 7, 1)
    new = store.get(out[2].job_id)
    assert new is not None and (new.commit, new.priority, new.args) == ("n2", 3, {"source": "x"})
    statuses = Counter((j.repo_key, j.status.value) for j in store.list())
    assert statuses == Counter(
        {
            ("org/pending", "pending"): 1,
            ("org/running", "running"): 1,
            ("org/running", "pending"): 1,
            ("org/new", "pending"): 1,
        }
    )
    # the claim order of the merged jobs follows their merged priority
    claimed = store.claim("w2", KINDS, now=3.0)
    assert claimed is not None and claimed.id == out[2].job_id  # priority 3 > 2; r2 is busy


def test_a_failed_batch_stores_nothing(graph: Graph, qsettings: Settings) -> None:
    store = JobStore(graph, qsettings)
    store.enqueue("org/a", now=1.0, commit="a0", delivery_key="k0")
    before = [(j.id, j.commit, j.coalesced_count) for j in store.list()]
    armed = [True]

    def cut(**_: object) -> None:  # the connection drops just before COMMIT
        if armed[0]:
            raise GraphUnavailable("bolt connection lost")

    faults = Faults()
    faults.arm("queue.enqueue:before_commit", cut)
    failing = JobStore(graph, qsettings, faults=faults)
    reqs = [
        enqueue_request("org/a", commit="a1", delivery_key="k1"),
        enqueue_request("org/b", commit="b1", delivery_key="k2"),
        enqueue_request("org/b", commit="b2"),
    ]
    with pytest.raises(GraphUnavailable):
        failing.enqueue_many(reqs, now=2.0)
    assert [(j.id, j.commit, j.coalesced_count) for j in store.list()] == before
    assert count(graph, "JobDelivery") == 1
    armed[0] = False  # the host's retry of the same deliveries goes through, once
    assert [r.outcome for r in failing.enqueue_many(reqs, now=3.0)] == [
        "coalesced",
        "created",
        "coalesced",
    ]
    assert count(graph, "JobDelivery") == 3 and count(graph, "JobQueue") == 2


def test_a_push_merged_between_read_and_write_makes_the_batch_decide_again(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    """The batch's read is unlocked: another writer coalescing into the same pending job
    before the batch writes must not be overwritten (its coalesce count, its commit)."""
    first = store.enqueue("org/a", now=1.0, commit="c1")
    other = JobStore(graph, qsettings)
    fired: list[str] = []

    def meanwhile(**_: object) -> None:
        if not fired:
            fired.append("enqueue:after_read")
            other.enqueue("org/a", now=2.0, commit="c2", priority=4)

    faults = Faults()
    faults.arm("queue.enqueue:after_read", meanwhile)
    pusher = JobStore(graph, qsettings, faults=faults)
    retries = REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", OP) or 0
    out = pusher.enqueue_many([enqueue_request("org/a", commit="c3")], now=3.0)
    assert fired and [(r.job_id, r.outcome) for r in out] == [(first.job_id, "coalesced")]
    assert REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", OP) == retries + 1
    job = store.get(first.job_id)
    assert job is not None
    assert (job.commit, job.priority, job.coalesced_count) == ("c3", 4, 2)


def test_bad_fields_are_refused_before_any_batch(store: JobStore) -> None:
    for bad in (
        {"repo_key": ""},
        {"repo_key": "org/a", "commit": "c\n1"},
        {"repo_key": "org/a", "delivery_key": "k" * 600},
        {"repo_key": "org/a", "args": {"x": "y" * 70_000}},
        {"repo_key": "org/a", "priority": True},
    ):
        with pytest.raises(QueueInputError):
            enqueue_request(**bad)
    assert store.enqueue_many([], now=1.0) == []
    assert store.list() == []


def test_concurrent_batches_keep_one_pending_job_per_repository(
    graph: Graph, qsettings: Settings
) -> None:
    """Four writers (own drivers, as four web replicas would be) commit overlapping batches;
    every delivery lands, once, in its repository's one pending job."""
    qsettings = qsettings.model_copy(update={"claim_conflict_retries": 30})
    repos = [f"org/c{i}" for i in range(5)]
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        g = connect_graph(qsettings)
        try:
            store = JobStore(g, qsettings)
            for b in range(5):
                reqs = [
                    enqueue_request(
                        repos[(w + b + i) % 5],
                        commit=f"{w}-{b}-{i}",
                        delivery_key=f"d-{(w * 50 + b * 10 + i) % 120}",  # some shared
                    )
                    for i in range(10)
                ]
                res = store.enqueue_many(reqs, now=float(b))
                with lock:
                    outcomes.extend(
                        (str(r.delivery_key), o.job_id) for r, o in zip(reqs, res, strict=True)
                    )
        except BaseException as exc:
            errors.append(exc)
        finally:
            g.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    store = JobStore(graph, qsettings)
    pending = store.list(status="pending")
    assert sorted(j.repo_key for j in pending) == repos
    by_repo = {j.repo_key: j.id for j in pending}
    by_key: dict[str, set[str]] = {}
    for key, job_id in outcomes:
        # a first delivery answers its repository's job; a replay answers the job of the
        # delivery it repeats (possibly another repository's in this synthetic mix)
        by_key.setdefault(key, set()).add(job_id)
    assert all(len(ids) == 1 for ids in by_key.values())  # one answer per delivery id
    assert set().union(*by_key.values()) <= set(by_repo.values())
    assert count(graph, "JobDelivery") == len(by_key)
    total = sum(j.coalesced_count + 1 for j in pending)
    assert total == len(by_key)  # every distinct delivery is one push in some pending job


# -- a batch decides like its requests one after the other ----------------------------------


def setup_state(store: JobStore, graph: Graph, states: list[str]) -> None:
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    for i, state in enumerate(states):
        if state.startswith("running"):
            store.enqueue(REPOS[i], now=1.0, commit=f"run{i}")
            claimed = store.claim("w", KINDS, now=1.0)
            assert claimed is not None and claimed.repo_key == REPOS[i]
    for i, state in enumerate(states):
        if state.endswith("pending"):
            store.enqueue(REPOS[i], now=1.0, commit=f"seed{i}", ref="main", delivery_key=f"s{i}")


def snapshot(graph: Graph) -> tuple[list[dict[str, Any]], list[tuple[str, str]], dict[str, str]]:
    jobs = graph.query("jobs", "MATCH (j:JobQueue) RETURN properties(j) AS p")
    names = {j["p"]["id"]: f"{j['p']['repo_key']}/{j['p']['status']}" for j in jobs}
    normal = []
    for j in jobs:
        p = dict(j["p"])
        p.pop("claim_token", None)
        p["id"] = names[p["id"]]
        if p.get("claim_key"):
            p["claim_key"] = p["claim_key"].rsplit("|", 1)[0]
        normal.append(p)
    rows = graph.query("deliveries", "MATCH (d:JobDelivery) RETURN d.key AS k, d.job_id AS j")
    deliveries = sorted((r["k"], names[r["j"]]) for r in rows)
    return sorted(normal, key=lambda p: p["id"]), deliveries, names


REQUESTS = st.lists(
    st.builds(
        EnqueueRequest,
        repo_key=st.sampled_from(REPOS),
        kind=st.sampled_from(["reindex", "other"]),
        args=st.sampled_from(["{}", '{"x":1}', '{"x":2}']),
        ref=st.sampled_from([None, "main", "dev"]),
        commit=st.sampled_from([None, "c1", "c2", "c3"]),
        priority=st.integers(0, 3),
        delivery_key=st.sampled_from([None, "s0", "s1", "d1", "d2", "d3"]),
    ),
    min_size=1,
    max_size=10,
)


@hypothesis.settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(
    states=st.lists(st.sampled_from(STATES), min_size=3, max_size=3), requests=REQUESTS
)
def test_a_batch_decides_like_its_requests_one_after_the_other(
    store: JobStore, graph: Graph, states: list[str], requests: list[EnqueueRequest]
) -> None:
    setup_state(store, graph, states)
    one_by_one = [store.enqueue_many([r], now=10.0)[0] for r in requests]
    jobs_seq, deliveries_seq, names_seq = snapshot(graph)
    setup_state(store, graph, states)
    batched = store.enqueue_many(requests, now=10.0)
    jobs_batch, deliveries_batch, names_batch = snapshot(graph)
    assert [(names_batch[r.job_id], r.outcome) for r in batched] == [
        (names_seq[r.job_id], r.outcome) for r in one_by_one
    ]
    assert jobs_batch == jobs_seq
    assert deliveries_batch == deliveries_seq
