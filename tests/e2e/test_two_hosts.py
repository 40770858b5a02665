"""Two workers as two hosts (issue 26, item 5): separate state directories, their own
hostnames and, where this machine allows it, their own network namespaces and addresses
(:mod:`tests.hosts`), against one graph server and one Elasticsearch. Pushes to one
repository alternate between the hosts; each publishes a delta, the cold host too (the
delta's state lives in the graph). Host A is SIGKILLed inside the publish transaction of the
last push; host B sees host A's job as another host's (its lease runs out), rescues it and
publishes the change as a delta. Nothing is lost, ``check`` is clean and the graph equals a
full publish of the indexed commit (``check --graph-parity``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStore
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from semgraph.search.index import SearchIndex
from tests.hosts import Host, hosts, isolation
from tests.repos import commit, make_repo

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]
FILES = 40
WORKER_ENV = {
    "SEMGRAPH_JOB_MODULES": "tests.pipeline_kinds",
    "SEMGRAPH_HEARTBEAT_S": "0.2",
    "SEMGRAPH_LEASE_S": "3",
    "SEMGRAPH_POLL_INTERVAL_S": "0.1",
    "SEMGRAPH_SWEEP_INTERVAL_S": "0.5",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
    "SEMGRAPH_POOL_SIZE": "1",
    "SEMGRAPH_EMBEDDING_DEVICE": "cpu",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def _module(i: int, body: str = "return x + {i}") -> str:
    nxt = (i + 1) % FILES
    return (
        f"from pkg.m{nxt} import f{nxt}\n\n\n"
        f"def f{i}(x):\n    {body.format(i=i)}\n\n\n"
        f"def g{i}(x):\n    return f{nxt}(x) + f{i}(x)\n"
    )


def _source() -> dict[str, str]:
    return {"pkg/__init__.py": "", **{f"pkg/m{i}.py": _module(i) for i in range(FILES)}}


def _run(host: Host, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = host.command(sys.executable, "-m", "semgraph.cli", *args)
    return subprocess.run(
        cmd,
        cwd=REPO_ROOT,
        env={**os.environ, **host.env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _publish(graph: Graph, job_id: str) -> dict[str, Any]:
    """The graph publish of the job's succeeded run, and the worker that ran it."""
    runs = [r for r in RunStore(graph).list(limit=50) if r.get("job_id") == job_id]
    done = [r for r in runs if r["status"] == "succeeded"]
    assert len(done) == 1, runs
    stats = done[0]["stats"]
    publish = dict((json.loads(stats) if isinstance(stats, str) else stats)["publish"])
    publish["rows"] = sum(publish["nodes"].values()) + sum(publish["edges"].values())
    publish["rows"] += publish["deleted_nodes"] + publish["deleted_edges"]
    return publish


def test_pushes_alternate_between_two_hosts_and_a_killed_publish_is_rescued(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    mode = isolation()
    repo = make_repo(tmp_path / "repo", _source())
    key = repo_key_for(str(repo))
    store = JobStore(graph, settings)
    inherited = os.environ.get("PYTHONPATH", "")
    path = os.pathsep.join(p for p in (str(REPO_ROOT / "src"), str(REPO_ROOT), inherited) if p)
    base = {
        **WORKER_ENV,
        "PYTHONPATH": path,
        "SEMGRAPH_BOLT_URI": settings.bolt_uri,
        "SEMGRAPH_ES_URL": settings.es_url,
        "SEMGRAPH_MODELS_DIR": str(settings.models_path),
    }
    started = time.monotonic()

    def push(i: int, body: str, kind: str = "reindex", **args: str) -> str:
        sha = commit(repo, {f"pkg/m{i}.py": _module(i, body)}, f"push {i}")
        args["source"] = str(repo)
        return store.enqueue(
            key, now=time.time(), kind=kind, commit=sha, source=str(repo), args=args
        ).job_id

    with hosts(["semgraph-host-a", "semgraph-host-b"], base, mode) as (a, b):
        a.env["SEMGRAPH_STATE_DIR"] = str(tmp_path / "host-a")
        b.env["SEMGRAPH_STATE_DIR"] = str(tmp_path / "host-b")
        first = store.enqueue(key, now=time.time(), source=str(repo), args={"source": str(repo)})
        ran = _run(a, "worker", "--once")
        assert ran.returncode == 0, ran.stderr
        full = _publish(graph, first.job_id)
        assert full["mode"] == "first" and full["files_changed"] == FILES, full

        # the pushes alternate: host B has never seen the repository, and publishes a delta
        for host, i, body in ((b, 3, "return x * 3"), (a, 7, "return x - 7")):
            job_id = push(i, body)
            ran = _run(host, "worker", "--once")
            assert ran.returncode == 0, ran.stderr
            delta = _publish(graph, job_id)
            assert delta["mode"] == "delta" and not delta["delta_fallback"], delta
            assert delta["files_changed"] == 1 and delta["rows"] * 10 < full["rows"], delta

        # host A dies inside the publish transaction of the next push
        before = GraphReader(graph).repository(key)
        assert before is not None
        killed = push(11, "return x ** 2", "reindex_killed", kill_at="publish.before_commit")
        ran = _run(a, "worker", "--once")
        assert ran.returncode == -9, ran.stdout + ran.stderr
        after = GraphReader(graph).repository(key)
        assert after is not None and after["run_id"] == before["run_id"]  # rolled back
        job = store.get(killed)
        assert job is not None and (job.status, job.attempts) == (JobStatus.RUNNING, 1)
        assert job.worker_id is not None

        # host B: not its host's process, so only the lease tells it host A is gone
        ran = _run(b, "worker", "--max-jobs", "1", "--idle-exit-s", "30")
        assert ran.returncode == 0, ran.stderr
        job = store.get(killed)
        assert job is not None and job.status is JobStatus.SUCCEEDED, job
        assert (job.attempts, job.crash_count) == (2, 1)
        recovered = [line for line in ran.stderr.splitlines() if "job_recovered" in line]
        if mode != "none":
            assert recovered and "lease expired" in recovered[0], ran.stderr
        rescued = _publish(graph, killed)
        assert rescued["mode"] == "delta" and not rescued["delta_fallback"], rescued
        assert rescued["files_changed"] == 1 and rescued["rows"] * 10 < full["rows"], rescued

        # nothing lost: the last push is published, on both stores; check and parity clean
        published = GraphReader(graph).repository(key)
        assert published is not None and published["commit"] == job.commit
        index = SearchIndex(es, settings)
        assert index.index_run_id(index.live_index(key) or "") == published["run_id"]
        jobs = store.list(repo=key, limit=10)
        assert [j.status for j in jobs] == [JobStatus.SUCCEEDED] * 4
        check = _run(b, "check", "--json")
        assert check.returncode == 0, check.stdout + check.stderr
        assert [(c["repo"], c["status"]) for c in json.loads(check.stdout)] == [(key, "ok")]
        parity = _run(a, "check", "--graph-parity", key, "--json", timeout=180)
        assert parity.returncode == 0, parity.stdout + parity.stderr
    print(f"two hosts ({mode}): {time.monotonic() - started:.1f} s")
