"""Elasticsearch stopped while a job embeds and bulk-loads its staging index.

Invariants: the attempt fails with the outage recorded and the job is retried with backoff
(``run_after`` pushed past the failure); the graph and the live alias are untouched (they
still name the previous run); the staging index the failed attempt could not delete while
Elasticsearch was down is garbage-collected by the next worker's maintenance after
recovery; the retry publishes and nothing else is left behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.chaos.conftest import Chaos, wait_for
from tests.chaos.state import (
    SMALL,
    assert_consistent,
    enqueue_paused_reindex,
    first_index,
    graph_repo,
    index_names,
    live_run,
    run_status,
)
from tests.repos import commit, make_repo

pytestmark = pytest.mark.chaos

BACKOFF = {"SEMGRAPH_BACKOFF_BASE_S": "2", "SEMGRAPH_BACKOFF_CAP_S": "4"}


def test_elasticsearch_stopped_during_embedding_and_bulk(chaos: Chaos, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", SMALL)
    key = repo_key_for(str(repo))
    old_run = first_index(chaos, repo)
    old_index = index_names(chaos)
    new_commit = commit(repo, {"pkg/es.py": "def after_the_outage():\n    return 4\n"})
    signals = tmp_path / "signals"
    store = JobStore(chaos.graph, chaos.settings)
    jid = enqueue_paused_reindex(store, repo, new_commit, "during_staging", signals)

    worker = chaos.start_worker("--once", env=BACKOFF)
    wait_for("the staging index", (signals / "during_staging.reached").exists, worker)
    staging = [n for n in index_names(chaos) if n not in old_index]
    assert len(staging) == 1
    assert chaos.es_service.stop()
    (signals / "during_staging.go").touch()  # embed + bulk now meet the outage
    code, out = chaos.finish(worker)
    assert code == 0, out

    job = store.get(jid)
    assert job is not None
    assert (job.status, job.attempts) == (JobStatus.PENDING, 1), out
    error = job.errors[0]
    assert error.kind == "error" and "Elasticsearch unreachable" in error.message, error
    assert job.run_after >= error.at + 1.0  # backoff: base 2 s, equal jitter -> [1 s, 2 s]
    assert graph_repo(chaos, key)["run_id"] == old_run  # the graph is untouched
    failed_runs = chaos.graph.query(
        "runs", "MATCH (r:IndexRun {job_id: $id}) RETURN r.id AS id", id=jid
    )
    assert [run_status(chaos, r["id"]) for r in failed_runs] == ["failed"]

    chaos.restart(chaos.es_service)
    assert live_run(chaos, key) == old_run  # the live alias is untouched
    assert staging[0] in index_names(chaos)  # could not be deleted during the outage

    code, out = chaos.finish(
        chaos.start_worker("--max-jobs", "1", "--idle-exit-s", "30", env=BACKOFF, log="retry")
    )
    assert code == 0, out
    job = store.get(jid)
    assert job is not None and (job.status, job.attempts) == (JobStatus.SUCCEEDED, 2), out
    assert "search_orphans_deleted" in out
    assert staging[0] not in index_names(chaos)
    assert assert_consistent(chaos, key, new_commit, "after_the_outage") != old_run
