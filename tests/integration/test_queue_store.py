"""Every queue query against the real Bolt server: enqueue/coalesce/dedupe, claim order,
fenced transitions, recovery, operator transitions, retention, reads, hostile input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.errors import InvalidTransition, JobNotFound, QueueInputError
from semgraph.queue.models import FailureKind, JobStatus
from semgraph.queue.store import JobStore
from tests.optional import some

pytestmark = pytest.mark.integration

W = "worker-a"
KINDS = ["reindex"]


@pytest.fixture
def store(graph: Graph) -> JobStore:
    settings = load_settings(
        job_max_attempts=3, job_max_crashes=2, backoff_base_s=10, backoff_cap_s=100, lease_s=30
    )
    return JobStore(graph, settings)


def test_enqueue_creates_then_coalesces_latest_commit_wins(store: JobStore) -> None:
    first = store.enqueue("org/a", now=1.0, commit="c1", ref="main", priority=1)
    assert first.outcome == "created"
    second = store.enqueue("org/a", now=2.0, commit="c2", priority=5)
    third = store.enqueue("org/a", now=3.0, commit="c3", priority=0)
    assert (second.job_id, second.outcome) == (first.job_id, "coalesced")
    assert third.outcome == "coalesced"
    job = some(store.get(first.job_id))
    assert job.status is JobStatus.PENDING
    assert (job.commit, job.ref, job.priority, job.coalesced_count) == ("c3", "main", 5, 2)
    assert job.created_at == 1.0 and job.updated_at == 3.0
    assert len(store.list(status="pending")) == 1


def test_enqueue_while_running_creates_exactly_one_follow_up(store: JobStore) -> None:
    first = store.enqueue("org/a", now=1.0, commit="c1")
    claimed = some(store.claim(W, KINDS, now=2.0))
    assert claimed.id == first.job_id and claimed.commit == "c1"
    follow = store.enqueue("org/a", now=3.0, commit="c2")
    again = store.enqueue("org/a", now=4.0, commit="c3")
    assert follow.outcome == "follow_up" and follow.job_id != first.job_id
    assert (again.job_id, again.outcome) == (follow.job_id, "coalesced")
    assert some(store.get(follow.job_id)).commit == "c3"
    # the follow-up is not claimable while the repo runs
    assert store.claim("worker-b", KINDS, now=5.0) is None


def test_delivery_key_makes_redelivery_idempotent(store: JobStore) -> None:
    first = store.enqueue("org/a", now=1.0, commit="c1", delivery_key="github:abc")
    dup = store.enqueue("org/a", now=2.0, commit="c9", delivery_key="github:abc")
    assert (dup.job_id, dup.outcome) == (first.job_id, "duplicate")
    assert some(store.get(first.job_id)).commit == "c1"  # the duplicate changed nothing
    other = store.enqueue("org/a", now=3.0, commit="c2", delivery_key="github:def")
    assert other.outcome == "coalesced"


def test_claim_order_priority_then_run_after_then_created(store: JobStore) -> None:
    low = store.enqueue("r/low", now=1.0, priority=0)
    high = store.enqueue("r/high", now=5.0, priority=9)
    old = store.enqueue("r/old", now=2.0, priority=0)
    store.enqueue("r/other-kind", now=0.5, kind="something-else", priority=99)
    got = [some(store.claim(W, KINDS, now=10.0)).id for _ in range(3)]
    assert got == [high.job_id, low.job_id, old.job_id]
    assert store.claim(W, KINDS, now=10.0) is None  # other kinds are not claimed


def test_claim_by_id_takes_that_job_only_when_it_is_eligible(store: JobStore) -> None:
    older = store.enqueue("r/older", now=1.0, priority=9).job_id
    mine = store.enqueue("r/mine", now=2.0).job_id
    store.enqueue("r/kind", now=0.5, kind="something-else")
    assert some(store.claim(W, KINDS, now=10.0, job_id=mine)).id == mine  # not the older one
    assert (
        some(store.get(older)).status is JobStatus.PENDING and some(store.get(older)).attempts == 0
    )
    assert store.claim(W, KINDS, now=11.0, job_id=mine) is None  # already running
    follow = store.enqueue("r/mine", now=12.0).job_id  # its repository is busy
    assert store.claim(W, KINDS, now=13.0, job_id=follow) is None
    assert store.claim(W, ["other"], now=13.0, job_id=older) is None  # kind not served
    assert store.claim(W, KINDS, now=13.0, job_id="no-such-job") is None
    assert some(store.claim(W, KINDS, now=13.0)).id == older  # the rest of the queue is intact


def test_claim_charges_attempt_and_sets_lease_and_token(store: JobStore) -> None:
    jid = store.enqueue("org/a", now=1.0).job_id
    job = some(store.claim(W, KINDS, now=2.0))
    assert (job.id, job.status, job.attempts, job.worker_id) == (jid, JobStatus.RUNNING, 1, W)
    assert job.claim_token and job.lease_expires_at == 32.0 and job.claimed_at == 2.0
    cypher = "MATCH (j:JobQueue {id: $id}) RETURN j.pending_key AS pk"
    rows = store.graph.query("pk", cypher, id=jid)
    assert rows == [{"pk": None}]


def test_pending_job_not_claimable_before_run_after(store: JobStore) -> None:
    store.enqueue("org/a", now=1.0)
    job = some(store.claim(W, KINDS, now=2.0))
    back = some(store.fail(job.id, some(job.claim_token), now=3.0, message="boom"))
    assert back.status is JobStatus.PENDING and 3.0 + 5.0 <= back.run_after <= 3.0 + 10.0
    assert store.claim(W, KINDS, now=back.run_after - 0.001) is None
    assert some(store.claim(W, KINDS, now=back.run_after)).id == job.id


def test_transitions_are_fenced_by_status_and_token(store: JobStore) -> None:
    store.enqueue("org/a", now=1.0)
    job = some(store.claim(W, KINDS, now=2.0))
    assert not store.heartbeat(job.id, "stale-token", now=3.0).owned
    assert store.complete(job.id, "stale-token", now=3.0) is False
    assert store.fail(job.id, "stale-token", now=3.0, message="x") is None
    assert store.release(job.id, "stale-token", now=3.0) is None
    beat = store.heartbeat(job.id, some(job.claim_token), now=4.0)
    assert beat.owned and beat.cancel_reason is None
    assert some(store.get(job.id)).lease_expires_at == 34.0
    assert store.complete(job.id, some(job.claim_token), now=5.0) is True
    # a second completion (or anything else by the old owner) is refused
    assert store.complete(job.id, some(job.claim_token), now=6.0) is False
    assert not store.heartbeat(job.id, some(job.claim_token), now=6.0).owned
    final = some(store.get(job.id))
    assert (final.status, final.finished_at) == (JobStatus.SUCCEEDED, 5.0)


def test_fail_backs_off_then_fails_permanently_with_history(store: JobStore) -> None:
    store.enqueue("org/a", now=0.0)
    now = 1.0
    for attempt in (1, 2, 3):
        job = some(store.claim(W, KINDS, now=now))
        assert job.attempts == attempt
        kind = FailureKind.TIMEOUT if attempt == 2 else FailureKind.ERROR
        after = some(
            store.fail(job.id, some(job.claim_token), now=now, message=f"err {attempt}", kind=kind)
        )
        now = after.run_after + 1
    assert after.status is JobStatus.FAILED and after.finished_at is not None
    assert [(e.attempt, e.kind, e.message) for e in after.errors] == [
        (1, "error", "err 1"),
        (2, "timeout", "err 2"),
        (3, "error", "err 3"),
    ]
    assert after.last_error == "err 3"


def test_error_history_is_bounded(graph: Graph) -> None:
    settings = load_settings(job_max_attempts=20, job_error_history=3, backoff_base_s=0)
    store = JobStore(graph, settings)
    store.enqueue("org/a", now=0.0)
    for i in range(6):
        job = some(store.claim(W, KINDS, now=float(i + 1)))
        store.fail(job.id, some(job.claim_token), now=float(i + 1), message=f"e{i}")
    assert [e.message for e in some(store.get(job.id)).errors] == ["e3", "e4", "e5"]


def test_huge_error_message_is_truncated(store: JobStore) -> None:
    store.enqueue("org/a", now=0.0)
    job = some(store.claim(W, KINDS, now=1.0))
    after = some(store.fail(job.id, some(job.claim_token), now=1.0, message="x" * 1_000_000))
    assert len(some(after.last_error)) == 4000 and len(after.errors[0].message) == 4000


def test_release_does_not_charge_the_attempt(store: JobStore) -> None:
    store.enqueue("org/a", now=0.0)
    job = some(store.claim(W, KINDS, now=1.0))
    back = some(store.release(job.id, some(job.claim_token), now=2.0))
    assert (back.status, back.attempts, back.run_after, back.errors) == (
        JobStatus.PENDING,
        0,
        2.0,
        [],
    )
    assert some(store.claim(W, KINDS, now=2.0)).id == job.id


def test_return_to_pending_absorbs_the_follow_up(store: JobStore) -> None:
    store.enqueue("org/a", now=0.0, commit="c1", priority=1)
    job = some(store.claim(W, KINDS, now=1.0))
    follow = store.enqueue("org/a", now=2.0, commit="c2", priority=7, delivery_key="d:2")
    assert follow.outcome == "follow_up"
    back = some(store.release(job.id, some(job.claim_token), now=3.0))
    assert back.status is JobStatus.PENDING
    assert (back.commit, back.priority, back.coalesced_count) == ("c2", 7, 1)
    assert store.get(follow.job_id) is None
    assert [j.id for j in store.list(status="pending")] == [job.id]
    # the follow-up's delivery key now points at the surviving job
    dup = store.enqueue("org/a", now=4.0, delivery_key="d:2")
    assert (dup.job_id, dup.outcome) == (job.id, "duplicate")


def test_recover_charges_crash_then_quarantines(store: JobStore) -> None:
    store.enqueue("org/a", now=0.0)
    store.graph.query(
        "run",
        "CREATE (:IndexRun {id: 'run-1', repo: 'org/a', job_id: $j, status: 'running'})",
        j=store.list()[0].id,
    )
    job = some(store.claim(W, KINDS, now=1.0))
    back = some(store.recover(job.id, some(job.claim_token), now=2.0, reason="pid gone"))
    assert (back.status, back.attempts, back.crash_count) == (JobStatus.PENDING, 1, 1)
    assert back.errors[-1].kind == "crash" and "pid gone" in back.errors[-1].message
    runs = store.graph.query("r", "MATCH (r:IndexRun) RETURN r.status AS s, r.finished_at AS f")
    assert runs == [{"s": "abandoned", "f": 2.0}]
    job = some(store.claim(W, KINDS, now=back.run_after))
    again = some(store.recover(job.id, some(job.claim_token), now=100.0, reason="pid gone"))
    assert (again.status, again.crash_count) == (JobStatus.QUARANTINED, 2)
    # a stale recover of the same claim changes nothing
    assert store.recover(job.id, some(job.claim_token), now=101.0, reason="again") is None
    assert some(store.get(job.id)).crash_count == 2


def test_recover_quarantines_when_attempts_are_used_up(graph: Graph) -> None:
    store = JobStore(graph, load_settings(job_max_attempts=1, job_max_crashes=10))
    store.enqueue("org/a", now=0.0)
    job = some(store.claim(W, KINDS, now=1.0))
    assert some(store.recover(job.id, some(job.claim_token), now=2.0, reason="x")).status is (
        JobStatus.QUARANTINED
    )


def test_requeue_resets_counters_and_rejects_invalid_states(store: JobStore) -> None:
    jid = store.enqueue("org/a", now=0.0).job_id
    with pytest.raises(InvalidTransition, match="pending"):
        store.requeue(jid, now=1.0)
    job = some(store.claim(W, KINDS, now=1.0))
    with pytest.raises(InvalidTransition, match="running"):
        store.requeue(jid, now=1.0)
    store.recover(job.id, some(job.claim_token), now=2.0, reason="x")
    job = some(store.claim(W, KINDS, now=1000.0))
    quarantined = some(store.recover(job.id, some(job.claim_token), now=1001.0, reason="x"))
    assert quarantined.status is JobStatus.QUARANTINED
    back = store.requeue(jid, now=1002.0)
    assert (back.status, back.attempts, back.crash_count, back.claim_token) == (
        JobStatus.PENDING,
        0,
        0,
        None,
    )
    assert back.attempts < back.max_attempts
    assert len(back.errors) == 2  # history is kept
    with pytest.raises(JobNotFound):
        store.requeue("no-such-job", now=1.0)


def test_abandon_pending_at_once_and_running_via_owner(store: JobStore) -> None:
    a = store.enqueue("org/a", now=0.0).job_id
    gone = store.abandon(a, now=1.0, reason="not needed")
    assert gone.status is JobStatus.ABANDONED and gone.errors[-1].message == "not needed"
    # the repo may get a new pending job afterwards
    assert store.enqueue("org/a", now=2.0).outcome == "created"
    job = some(store.claim(W, KINDS, now=3.0))
    asked = store.abandon(job.id, now=4.0, reason="operator")
    assert asked.status is JobStatus.RUNNING and asked.cancel_reason == "operator"
    beat = store.heartbeat(job.id, some(job.claim_token), now=5.0)
    assert beat.owned and beat.cancel_reason == "operator"
    done = some(store.acknowledge_abandon(job.id, some(job.claim_token), now=6.0))
    assert done.status is JobStatus.ABANDONED and done.cancel_reason is None
    with pytest.raises(InvalidTransition):
        store.abandon(job.id, now=7.0, reason="again")
    with pytest.raises(JobNotFound):
        store.abandon("nope", now=7.0, reason="x")
    with pytest.raises(QueueInputError):
        store.abandon(a, now=7.0, reason="   ")


def test_purge_deletes_only_old_terminal_jobs(store: JobStore) -> None:
    old = store.enqueue("r/old", now=0.0, delivery_key="k-old").job_id
    store.abandon(old, now=10.0, reason="x")
    new = store.enqueue("r/new", now=0.0).job_id
    store.abandon(new, now=90.0, reason="x")
    pending = store.enqueue("r/pending", now=0.0).job_id
    assert store.purge(older_than_s=50, now=100.0) == 1
    assert store.get(old) is None and store.get(new) and store.get(pending)
    rows = store.graph.query("d", "MATCH (d:JobDelivery) RETURN count(d) AS n")
    assert rows == [{"n": 0}]


def test_list_filters_and_stats(store: JobStore) -> None:
    store.enqueue("r/a", now=10.0)
    store.enqueue("r/b", now=20.0)
    store.claim(W, KINDS, now=30.0)
    assert [j.repo_key for j in store.list()] == ["r/b", "r/a"]
    assert [j.repo_key for j in store.list(status="running")] == ["r/a"]
    assert [j.repo_key for j in store.list(repo="r/b")] == ["r/b"]
    with pytest.raises(QueueInputError, match="unknown status"):
        store.list(status="bogus")
    stats = store.stats(now=50.0)
    assert stats.counts["pending"] == 1 and stats.counts["running"] == 1
    assert stats.counts["failed"] == 0
    assert stats.oldest_pending_age_s == 30.0
    json.dumps(stats.to_json())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"repo_key": ""}, "repo_key"),
        ({"repo_key": "x" * 600}, "repo_key"),
        ({"repo_key": "a\nb"}, "control"),
        ({"repo_key": "ok", "commit": "c" * 500}, "commit"),
        ({"repo_key": "ok", "priority": 10**9}, "priority"),
        ({"repo_key": "ok", "priority": True}, "priority"),
        ({"repo_key": "ok", "args": {"blob": "x" * 70_000}}, "args"),
        ({"repo_key": "ok", "kind": ""}, "kind"),
    ],
)
def test_enqueue_rejects_bad_input_and_writes_nothing(
    store: JobStore, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(QueueInputError, match=match):
        store.enqueue(now=1.0, **kwargs)
    assert store.list() == []


def test_hostile_strings_are_stored_verbatim(store: JobStore) -> None:
    repo = "org/x' }) DETACH DELETE n //"
    jid = store.enqueue(repo, now=1.0, ref="refs/heads/ünïcødé", args={"k": "}{"}).job_id
    job = some(store.get(jid))
    assert (job.repo_key, job.ref, job.args) == (repo, "refs/heads/ünïcødé", {"k": "}{"})
