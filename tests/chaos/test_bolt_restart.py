"""The Bolt graph server stopped and restarted while a worker runs a job.

Invariants: the worker process survives the outage and reconnects (it is never restarted
here); the job hit by the outage returns to pending with the failure recorded and then
completes; every queue record committed before the stop survives the restart unchanged;
the attempt's index run is closed, not left ``running``; graph and alias end consistent.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from semgraph.db import connect_graph
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.chaos.conftest import Chaos, log_of, wait_for
from tests.chaos.state import SMALL, assert_consistent, first_index
from tests.repos import commit, make_repo

pytestmark = pytest.mark.chaos


def test_bolt_server_restarted_mid_job(chaos: Chaos, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", SMALL)
    key = repo_key_for(str(repo))
    first_index(chaos, repo)
    new_commit = commit(repo, {"pkg/restart.py": "def after_the_restart():\n    return 3\n"})
    signals, started = tmp_path / "signals", tmp_path / "started"
    signals.mkdir()
    started.mkdir()
    tally = tmp_path / "tally"
    store = JobStore(chaos.graph, chaos.settings)
    now = time.time()
    # committed queue state the restart must not lose: a finished job, a failed one, and a
    # pending one that runs after the outage
    done = store.enqueue("keep/done", now=now, kind="chaos_record")
    claimed = store.claim("w-earlier", ["chaos_record"], now=now)
    assert claimed is not None and claimed.id == done.job_id
    assert store.complete(claimed.id, claimed.claim_token or "", now=now)
    one_try = JobStore(chaos.graph, chaos.settings.model_copy(update={"job_max_attempts": 1}))
    failed = one_try.enqueue("keep/failed", now=now, kind="chaos_record")
    claimed = store.claim("w-earlier", ["chaos_record"], now=now)
    assert claimed is not None and claimed.id == failed.job_id
    store.fail(claimed.id, claimed.claim_token or "", now=now, message="earlier")
    later = store.enqueue(
        "keep/later",
        now=now,
        kind="chaos_record",
        args={"tally": str(tally), "started_dir": str(started)},
    )
    jid = store.enqueue(
        key,
        now=now,
        kind="chaos_reindex",
        commit=new_commit,
        priority=10,
        args={"source": str(repo), "pause_at": "after_staging", "signal_dir": str(signals)},
    ).job_id
    kept = {j.id: (j.status, j.attempts) for j in store.list() if j.id != jid}
    assert kept[failed.job_id][0] is JobStatus.FAILED

    # three runs: the attempt hit by the outage, its retry (priority 10), the pending job
    worker = chaos.start_worker("--max-jobs", "3")
    wait_for("the job to reach after_staging", (signals / "after_staging.reached").exists, worker)
    assert chaos.bolt_service.stop()
    (signals / "after_staging.go").touch()  # the job now publishes into the outage
    wait_for("the worker to meet the outage", lambda: "graph_unavailable" in log_of(worker), worker)
    chaos.restart(chaos.bolt_service)
    code, out = chaos.finish(worker)
    assert code == 0, out  # the same worker process reconnected and carried on

    with connect_graph(chaos.settings) as graph:
        store = JobStore(graph, chaos.settings)
        job = store.get(jid)
        assert job is not None
        assert (job.status, job.attempts, job.crash_count) == (JobStatus.SUCCEEDED, 2, 0), out
        assert job.errors[0].kind == "error" and "unreachable" in job.errors[0].message
        after = {j.id: (j.status, j.attempts) for j in store.list() if j.id != jid}
        assert after[done.job_id] == kept[done.job_id]
        assert after[failed.job_id] == kept[failed.job_id]
        assert after[later.job_id] == (JobStatus.SUCCEEDED, 1)
        assert tally.read_text().split()[:2] == [later.job_id, "1"]
        runs = graph.query(
            "runs",
            "MATCH (r:IndexRun {job_id: $id}) RETURN r.status AS s ORDER BY r.started_at",
            id=jid,
        )
        assert [r["s"] for r in runs] == ["abandoned", "succeeded"], runs
        chaos.graph.close()
        chaos.graph = graph
        assert_consistent(chaos, key, new_commit, "after_the_restart")
