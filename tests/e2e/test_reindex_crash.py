"""A worker SIGKILLed between the graph commit and the alias flip: the next worker start
detects the divergence (run id on :Repository vs. the index behind the alias, no except block
involved) and repairs it; the job is recovered and completes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.cli import run_cli
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import shared_embedder, shared_search

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_ENV = {
    "SEMGRAPH_JOB_MODULES": "tests.pipeline_kinds",
    "SEMGRAPH_HEARTBEAT_S": "0.2",
    "SEMGRAPH_LEASE_S": "30",
    "SEMGRAPH_POLL_INTERVAL_S": "0.1",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
}


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={**WORKER_ENV, "PYTHONPATH": str(REPO_ROOT)}, timeout=timeout)


def test_sigkill_between_graph_commit_and_alias_flip_is_repaired_at_next_start(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "polyglot", POLYGLOT)
    embedder = shared_embedder(settings)
    first = Reindex(
        settings,
        graph,
        shared_search(settings),
        ReindexRequest(source=str(repo)),
        embedder=embedder,
    ).run()
    key = repo_key_for(str(repo))
    assert first.repo_key == key
    commit(repo, {"app/extra.py": "def survives_the_crash():\n    return 1\n"})

    store = JobStore(graph, settings)
    job_id = store.enqueue(
        key,
        now=time.time(),
        kind="reindex_killed",
        args={"source": str(repo), "kill_at": "after_graph_commit"},
    ).job_id

    crashed = _cli("worker", "--once")
    assert crashed.returncode == -9, crashed.stdout + crashed.stderr

    # the graph committed the new run; the alias still names the old one
    graph_run = {r["key"]: r for r in GraphReader(graph).repositories()}[key]["run_id"]
    index = SearchIndex(es, settings)
    assert graph_run != first.run_id
    assert index.index_run_id(index.live_index(key) or "") == first.run_id
    check = _cli("check", "--json")
    assert check.returncode == 1
    assert [(c["repo"], c["status"]) for c in json.loads(check.stdout)] == [(key, "diverged")]

    # the next worker start sweeps the dead worker's job and repairs the divergence first
    restarted = _cli("worker", "--max-jobs", "1", "--idle-exit-s", "20")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert index.index_run_id(index.live_index(key) or "") == graph_run
    assert json.loads(_cli("check", "--json").stdout)[0]["status"] == "ok"
    job = store.get(job_id)
    assert job is not None and job.status is JobStatus.SUCCEEDED
    assert job.crash_count == 1 and job.attempts == 2
    hits = search(es, settings, embedder, "survives_the_crash", repo=key, k=3)
    assert hits and hits[0].symbol == "app.extra.survives_the_crash"
