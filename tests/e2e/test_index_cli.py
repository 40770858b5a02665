"""The main job as a user runs it: ``semgraph index`` then ``search``, ``graph`` and
``check`` in subprocesses, and bad input to ``index``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.db import Graph
from tests.optional import some
from tests.repos import POLYGLOT, make_repo

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]


def semgraph(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", *args],
        cwd=REPO_ROOT,
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_index_then_search_graph_and_check(graph: Graph, es: Elasticsearch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "polyglot", POLYGLOT)
    done = semgraph("index", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["job"]["status"] == "succeeded"
    assert body["run"]["status"] == "succeeded"
    repo_key = body["run"]["repo"]

    found = semgraph("search", "compute_checksum", "--repo", repo_key, "-k", "3", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["symbol"] == "app.models.compute_checksum"

    callers = semgraph("graph", "callers", "compute_checksum", "--repo", repo_key, "--json")
    assert callers.returncode == 0, callers.stderr
    names = {e["qualified_name"] for e in json.loads(callers.stdout)["edges"]}
    assert names == {"app.models.Repository.save", "app.service.fingerprint"}

    check = semgraph("check", "--json")
    assert check.returncode == 0, check.stderr
    assert {(c["repo"], c["status"]) for c in json.loads(check.stdout)} == {(repo_key, "ok")}

    again = semgraph("index", str(repo), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["run"]["status"] == "noop"


def test_index_runs_its_own_job_and_leaves_older_ones_queued(graph: Graph, tmp_path: Path) -> None:
    """An older pending job (here one no worker could run: it has no source) stays queued,
    untouched; ``index`` runs only the job it enqueued."""
    from semgraph.config import load_settings
    from semgraph.queue.models import JobStatus
    from semgraph.queue.store import JobStore

    store = JobStore(graph, load_settings())
    older = store.enqueue("queued/elsewhere", now=1.0, priority=9).job_id
    repo = make_repo(tmp_path / "mine", {"mine.py": "def mine():\n    return 1\n"})
    done = semgraph("index", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["job"]["status"] == "succeeded"
    job = some(store.get(older))
    assert (job.status, job.attempts, job.last_error) == (JobStatus.PENDING, 0, None)
    store.abandon(older, now=2.0, reason="test")


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("/no/such/repository", "no repository at"),
        ("--upload-pack=touch /tmp/pwned", "starts with '-'"),
        ("ext::sh -c touch% /tmp/pwned", "unsupported repository URL"),
        ("https://", "no host"),
        ("x" * 5000, "invalid repository source"),
    ],
)
def test_index_rejects_bad_sources_before_enqueueing(
    graph: Graph, source: str, needle: str
) -> None:
    proc = semgraph("index", "--", source, timeout=120)
    assert proc.returncode == 1
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    jobs = graph.query("jobs", "MATCH (j:JobQueue) RETURN count(j) AS n")
    assert jobs == [{"n": 0}], "nothing may be enqueued for a bad source"
