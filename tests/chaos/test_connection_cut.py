"""The graph server's connection cut for real (a loopback TCP proxy closes the sockets)
during the claim and during the publishing transaction.

Invariants: a cut before COMMIT changes nothing and the operation runs again on a new
connection; a cut that loses the answer to COMMIT (the server committed, the client never
learns it) neither loses the job nor runs it twice, and never leaves graph and alias
disagreeing without a ``diverged`` record.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import connect_graph
from semgraph.faults import Faults
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from tests.chaos.conftest import Chaos, wait_for
from tests.chaos.proxy import CutProxy
from tests.chaos.state import (
    SMALL,
    assert_consistent,
    enqueue_paused_reindex,
    first_index,
    run_status,
)
from tests.repos import commit, make_repo

pytestmark = pytest.mark.chaos


@pytest.fixture
def proxy(chaos: Chaos) -> Iterator[CutProxy]:
    p = CutProxy((chaos.settings.bolt_host, chaos.settings.bolt_port))
    yield p
    p.close()


def test_cut_during_the_claim_the_worker_claims_again_once(
    chaos: Chaos, proxy: CutProxy, tmp_path: Path
) -> None:
    """The claim transaction's connection dies after it read its candidates: nothing was
    committed; the worker (in this process, its graph driver behind the proxy) outlives the
    error, claims again on a new connection, and the job runs once with one attempt."""
    import tests.chaos.kinds  # noqa: F401  (registers chaos_record in this process)

    settings: Settings = chaos.settings.model_copy(
        update={"poll_interval_s": 0.05, "heartbeat_s": 0.2, "lease_s": 30.0}
    )
    tally, started = tmp_path / "tally", tmp_path / "started"
    started.mkdir()
    jid = (
        JobStore(chaos.graph, settings)
        .enqueue(
            "cut/claim",
            now=time.time(),
            kind="chaos_record",
            args={"tally": str(tally), "started_dir": str(started), "work_s": 0},
        )
        .job_id
    )

    def cut(**_: object) -> None:
        if proxy.cuts == 0:
            assert proxy.cut() >= 1

    faults = Faults()
    faults.arm("queue.claim:after_read", cut)

    with connect_graph(settings.model_copy(update={"bolt_uri": proxy.uri})) as via_proxy:
        worker = Worker(settings, via_proxy, store=JobStore(via_proxy, settings, faults=faults))
        assert worker.run(once=True) == 0
    assert proxy.cuts == 1
    job = JobStore(chaos.graph, settings).get(jid)
    assert job is not None
    assert (job.status, job.attempts, job.crash_count) == (JobStatus.SUCCEEDED, 1, 0)
    assert [line.split()[:2] for line in tally.read_text().splitlines()] == [[jid, "1"]]


def test_claim_commit_answer_lost_the_worker_hands_it_back(
    chaos: Chaos, proxy: CutProxy, tmp_path: Path
) -> None:
    """The worker's claim COMMIT reaches the server but the answer is cut: the job is
    committed as running under a worker that does not know it. The worker (same process)
    reconnects, hands the claim back, claims it again and runs it exactly once."""
    store = JobStore(chaos.graph, chaos.settings)
    tally, started = tmp_path / "tally", tmp_path / "started"
    started.mkdir()
    jid = store.enqueue(
        "cut/commit",
        now=time.time(),
        kind="chaos_record",
        args={"tally": str(tally), "started_dir": str(started)},
    ).job_id
    proxy.cut_after_commit()  # the worker's first explicit transaction is its claim
    worker = chaos.start_worker("--max-jobs", "1", env={"SEMGRAPH_BOLT_URI": proxy.uri})
    code, out = chaos.finish(worker)
    assert code == 0, out
    assert proxy.commit_cuts == 1
    assert "claim_released" in out and "graph_unavailable" in out, out
    job = store.get(jid)
    assert job is not None
    assert (job.status, job.attempts, job.crash_count) == (JobStatus.SUCCEEDED, 1, 0)
    assert [line.split()[:2] for line in tally.read_text().splitlines()] == [[jid, "1"]]


@pytest.mark.parametrize("cut", ["before_commit", "commit_answer_lost"])
def test_cut_during_the_publishing_transaction(
    chaos: Chaos, proxy: CutProxy, tmp_path: Path, cut: str
) -> None:
    """``before_commit``: the publish transaction's connection dies with every batch
    written but not committed: nothing is published, the staging index is deleted, the
    failure is recorded and the retry publishes. ``commit_answer_lost``: the server
    committed but the worker never heard: the pipeline reads the run id back from the
    graph, knows it committed, and flips the alias in the same attempt."""
    repo = make_repo(tmp_path / "repo", SMALL)
    key = repo_key_for(str(repo))
    old_run = first_index(chaos, repo)
    new_commit = commit(repo, {"pkg/cut.py": "def after_the_cut():\n    return 2\n"})
    signals = tmp_path / "signals"
    store = JobStore(chaos.graph, chaos.settings)
    jid = enqueue_paused_reindex(store, repo, new_commit, "before_graph_commit", signals)
    jobs = "2" if cut == "before_commit" else "1"  # attempts the worker runs
    worker = chaos.start_worker("--max-jobs", jobs, env={"SEMGRAPH_BOLT_URI": proxy.uri})
    wait_for("the publish transaction", (signals / "before_graph_commit.reached").exists, worker)
    if cut == "before_commit":
        assert proxy.cut() >= 1
    else:
        # the paused publish is the connection idle in a transaction, not a heartbeat's:
        # arming waits until the proxy sees it quiet in its open transaction
        proxy.cut_after_commit(idle_tx=True)
    (signals / "before_graph_commit.go").touch()
    code, out = chaos.finish(worker)
    assert code == 0, out
    job = store.get(jid)
    assert job is not None
    runs = chaos.graph.query(
        "runs",
        "MATCH (r:IndexRun {job_id: $id}) RETURN r.id AS id, r.status AS s ORDER BY r.started_at",
        id=jid,
    )
    final = assert_consistent(chaos, key, new_commit, "after_the_cut")
    assert final != old_run
    if cut == "before_commit":
        assert (job.status, job.attempts) == (JobStatus.SUCCEEDED, 2), out
        assert "unreachable" in job.errors[0].message, job.errors
        assert [r["s"] for r in runs] == ["failed", "succeeded"]
        assert final == runs[1]["id"]
    else:
        assert proxy.commit_cuts == 1
        assert (job.status, job.attempts, job.errors) == (JobStatus.SUCCEEDED, 1, []), out
        assert "publish_commit_confirmed" in out
        assert [r["s"] for r in runs] == ["succeeded"] and final == runs[0]["id"]
        assert run_status(chaos, final) == "succeeded"
