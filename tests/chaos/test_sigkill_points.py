"""SIGKILL of the worker at each named point of a reindex job.

Invariant: whatever the point, nothing is lost or run twice and the stores end consistent.
Right after the kill the live state is either the old run on both stores or, when the kill
fell after the graph commit, a divergence that ``check`` reports; the next worker start
sweeps the dead worker's job (a crash is charged, the run is closed as ``abandoned``),
repairs any divergence, deletes orphan staging indexes and stale job workdirs, and the job
then succeeds: graph and alias name the same run of the pushed commit, and it is searchable.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.chaos.conftest import Chaos
from tests.chaos.state import (
    SMALL,
    assert_consistent,
    check_statuses,
    first_index,
    graph_repo,
    index_names,
    job_dirs,
    live_run,
)
from tests.repos import commit, make_repo

pytestmark = pytest.mark.chaos

POINTS = [
    "after_claim",
    "mid_parse",
    "after_spill",
    "after_staging",
    "after_graph_commit",
    "after_alias_flip",
]


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_named_point(chaos: Chaos, tmp_path: Path, point: str) -> None:
    repo = make_repo(tmp_path / "repo", SMALL)
    key = repo_key_for(str(repo))
    old_run = first_index(chaos, repo)
    new_commit = commit(repo, {"pkg/extra.py": "def survives_sigkill():\n    return 1\n"})
    store = JobStore(chaos.graph, chaos.settings)
    job_id = store.enqueue(
        key,
        now=time.time(),
        kind="chaos_reindex",
        commit=new_commit,
        args={"source": str(repo), "kill_at": point},
    ).job_id

    code, out = chaos.finish(chaos.start_worker("--once", log="killed"))
    assert code == -9, out

    # just after the kill: nobody recorded anything; the live state is whole
    job = store.get(job_id)
    assert job is not None and (job.status, job.attempts) == (JobStatus.RUNNING, 1)
    repo_node = graph_repo(chaos, key)
    before_commit = point in {"after_claim", "mid_parse", "after_spill", "after_staging"}
    if before_commit:
        assert repo_node["run_id"] == old_run and live_run(chaos, key) == old_run
        assert check_statuses(chaos) == {key: "ok"}
    elif point == "after_graph_commit":
        assert repo_node["run_id"] != old_run and live_run(chaos, key) == old_run
        assert check_statuses(chaos) == {key: "diverged"}
    else:  # after_alias_flip: both stores already name the new run
        assert repo_node["run_id"] != old_run and live_run(chaos, key) == repo_node["run_id"]
    if point == "after_staging":
        assert len(index_names(chaos)) == 2  # the orphan staging index of the killed run
    if point in {"mid_parse", "after_spill"}:
        assert job_dirs(chaos), "the killed run's workdir (with its spill) is left on disk"

    code, out = chaos.finish(chaos.start_worker("--max-jobs", "1", "--idle-exit-s", "30"))
    assert code == 0, out
    job = store.get(job_id)
    assert job is not None
    assert (job.status, job.attempts, job.crash_count) == (JobStatus.SUCCEEDED, 2, 1), out
    assert [e.kind for e in job.errors] == ["crash"]
    if point == "after_graph_commit":  # the divergence was alerted on and repaired
        assert "index_diverged" in out and "index_repaired" in out, out
    runs = chaos.graph.query(
        "runs",
        "MATCH (r:IndexRun {job_id: $id}) RETURN r.status AS s ORDER BY r.started_at",
        id=job_id,
    )
    if point != "after_claim":  # the killed attempt's run is closed, never left running
        assert runs[0]["s"] == "abandoned", runs
    assert all(r["s"] != "running" for r in runs), runs
    assert_consistent(chaos, key, new_commit, "survives_sigkill")
