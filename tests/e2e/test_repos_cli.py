"""``semgraph repos list|show|remove`` and the ``remove`` job in real worker processes: a
worker SIGKILLed in the middle of a removal (after the graph is deleted, before the indexes
and the disk) leaves the repository ``removing``, never live; the restarted worker resumes
the job and completes it; the other repository is untouched; a later push indexes the
removed repository afresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from semgraph.repos import graph as gr
from semgraph.repos import removal
from semgraph.search.index import SearchIndex
from tests.optional import some
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_ENV = {
    "SEMGRAPH_HEARTBEAT_S": "0.2",
    "SEMGRAPH_LEASE_S": "30",
    "SEMGRAPH_POLL_INTERVAL_S": "0.1",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
}
FILES = {
    "pkg/core.py": "def core():\n    return helper()\n\ndef helper():\n    return 1\n",
    "pkg/api.py": "from pkg.core import core\n\ndef serve():\n    return core()\n",
}


def _cli(*args: str, faults: str = "", timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **WORKER_ENV, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("SEMGRAPH_FAULTS", None)
    if faults:
        env["SEMGRAPH_FAULTS"] = faults
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _index(settings: Settings, graph: Graph, es: Elasticsearch, repo: Path) -> str:
    request = ReindexRequest(source=str(repo))
    return Reindex(settings, graph, es, request, embedder=shared_embedder(settings)).run().repo_key


def test_unknown_and_hostile_keys_exit_2_and_queue_nothing(
    graph: Graph, settings: Settings
) -> None:
    for args in (
        ("repos", "show", "nope"),
        ("repos", "remove", "nope"),
        ("repos", "remove", "../../etc/passwd"),
        ("repos", "remove", "x" * 5000),
        ("repos", "show", "a\x01b"),
        ("repos", "remove", "   "),
        ("repos", "remove", "' }) MATCH (n) DETACH DELETE n //"),
    ):
        done = _cli(*args)
        assert done.returncode == 2, (args[:2], done.stdout, done.stderr)
        assert done.stdout == "" and done.stderr.startswith("error: ")
        assert done.stderr.count("\n") == 1, done.stderr  # one line
    unknown = _cli("repos", "remove", "nope").stderr
    assert unknown == "error: no repository 'nope' is known (see `semgraph repos list`)\n"
    assert JobStore(graph, settings).list() == []
    listed = _cli("repos", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    assert _cli("repos", "list").stdout.strip() == "no repositories"


def test_a_removal_killed_mid_way_resumes_and_leaves_nothing(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    gone = _index(settings, graph, es, make_repo(tmp_path / "gone", FILES))
    kept = _index(settings, graph, es, make_repo(tmp_path / "kept", FILES))
    index = SearchIndex(es, settings)
    kept_before = (gr.GraphRemoval(graph, kept).counts(), index.repository_indexes(kept))

    listed = json.loads(_cli("repos", "list", "--json").stdout)
    assert [(r["key"], r["state"]) for r in listed] == sorted([(gone, "live"), (kept, "live")])
    shown = _cli("repos", "show", gone)
    assert shown.returncode == 0 and "state:       live" in shown.stdout
    # indexed outside the queue: no job recorded its size, so its next job is large's
    assert "lane:        large  (no finished job recorded yet" in shown.stdout, shown.stdout
    assert json.loads(_cli("repos", "show", gone, "--json").stdout)["counts"]["files"] == 2

    queued = _cli("repos", "remove", gone, "--json")
    assert queued.returncode == 0, queued.stderr
    job_id = json.loads(queued.stdout)["job_id"]
    assert graph.query("n", "MATCH (f:File {repo: $r}) RETURN count(f) AS n", r=gone)[0]["n"]

    killed = _cli("worker", "--once", faults="remove.after_graph=sigkill")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    # part-way: the graph is gone, the node marked, indexes and disk still there
    counts = gr.GraphRemoval(graph, gone).counts()
    assert (counts["files"], counts["symbols"], counts["repository"]) == (0, 0, 1)
    assert index.repository_indexes(gone) and index.live_index(gone) is None
    assert any(p.exists() for p in removal.paths_of(settings, gone))
    assert [r["key"] for r in GraphReader(graph).repositories()] == [kept]
    states = {r["key"]: r["state"] for r in json.loads(_cli("repos", "list", "--json").stdout)}
    assert states == {gone: "removing", kept: "live"}
    assert some(JobStore(graph, settings).get(job_id)).status is JobStatus.RUNNING

    restarted = _cli("worker", "--max-jobs", "1", "--idle-exit-s", "20")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    job = some(JobStore(graph, settings).get(job_id))
    assert job.status is JobStatus.SUCCEEDED, job.last_error
    assert (job.crash_count, job.attempts) == (1, 2)
    assert gr.GraphRemoval(graph, gone).counts() == dict.fromkeys(
        ("files", "symbols", "externals", "runs", "repository", "record"), 0
    )
    assert index.repository_indexes(gone) == []
    assert [p for p in removal.paths_of(settings, gone) if p.exists()] == []
    assert (gr.GraphRemoval(graph, kept).counts(), index.repository_indexes(kept)) == kept_before
    assert _cli("repos", "show", gone).returncode == 2
    assert [r["key"] for r in json.loads(_cli("repos", "list", "--json").stdout)] == [kept]

    # a push after the removal completed is a fresh reindex
    again = _cli("enqueue", str(tmp_path / "gone"), "--json")
    assert again.returncode == 0, again.stderr
    fresh = json.loads(again.stdout)
    assert fresh["outcome"] == "created" and fresh["job_id"] != job_id
    assert some(JobStore(graph, settings).get(fresh["job_id"])).kind == "reindex"


def test_a_removal_killed_at_every_step_in_turn_still_completes(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    gone = _index(settings, graph, es, make_repo(tmp_path / "gone", FILES))
    graph.query("record", "CREATE (:RepoRecord {key: $k, source: 'x'})", k=gone)
    limits = {"SEMGRAPH_JOB_MAX_CRASHES": "20", "SEMGRAPH_JOB_MAX_ATTEMPTS": "20"}
    queued = subprocess.run(
        [sys.executable, "-m", "semgraph.cli", "repos", "remove", gone, "--json"],
        cwd=REPO_ROOT,
        env={**os.environ, **limits, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    job_id = json.loads(queued.stdout)["job_id"]
    for crashes, point in enumerate(removal.POINTS, start=1):
        killed = _cli("worker", "--max-jobs", "1", "--idle-exit-s", "20", faults=f"{point}=sigkill")
        assert killed.returncode == -9, (point, killed.stdout + killed.stderr)
        job = some(JobStore(graph, settings).get(job_id))
        assert job.status is JobStatus.RUNNING and job.crash_count == crashes - 1, point
        if point == "remove.after_abandon":
            continue  # nothing is deleted before the mark: still live
        assert gone not in {r["key"] for r in GraphReader(graph).repositories()}, point
        listed = {r["key"]: r["state"] for r in json.loads(_cli("repos", "list", "--json").stdout)}
        assert listed.get(gone, "gone") != "live", (point, listed)
    left = gr.GraphRemoval(graph, gone).counts()
    assert (left["files"], left["repository"], left["record"]) == (0, 0, 1)  # killed before it
    done = _cli("worker", "--max-jobs", "1", "--idle-exit-s", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    job = some(JobStore(graph, settings).get(job_id))
    assert job.status is JobStatus.SUCCEEDED and job.crash_count == len(removal.POINTS)
    assert gr.GraphRemoval(graph, gone).counts()["record"] == 0
    assert SearchIndex(es, settings).repository_indexes(gone) == []
    assert [p for p in removal.paths_of(settings, gone) if p.exists()] == []
