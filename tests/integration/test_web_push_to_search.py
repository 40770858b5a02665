"""End to end: a signed push for a real local git repository -> 202 -> the worker runs the
reindex job -> the pushed content is searchable over the HTTP API (and the graph knows it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.sources import repo_key_for
from semgraph.jobs import register_job_kinds
from semgraph.queue.queries import RECORD
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from semgraph.web.app import create_app
from semgraph.web.fixtures import push_payload, serve_in_thread, signed_delivery
from tests.repos import commit, make_repo
from tests.shared_kinds import KINDS

pytestmark = pytest.mark.integration

SECRET = "e2e-secret"


def push(base: str, repo: Path, sha: str, host: str = "github") -> dict[str, Any]:
    payload = push_payload(host, "local/e2e", str(repo), after=sha)
    headers, body = signed_delivery(host, payload, SECRET)
    resp = httpx.post(f"{base}/webhooks/{host}", headers=headers, content=body, timeout=30)
    assert resp.status_code == 202, resp.text
    data: dict[str, Any] = resp.json()
    return data


def bm25(base: str, query: str, repo_key: str) -> list[dict[str, Any]]:
    resp = httpx.get(
        f"{base}/search", params={"q": query, "repo": repo_key, "mode": "bm25"}, timeout=60
    )
    if resp.status_code == 404:
        return []
    assert resp.status_code == 200, resp.text
    hits: list[dict[str, Any]] = resp.json()["hits"]
    return hits


def lanes_record(graph: Graph, key: str) -> dict[str, Any]:
    return dict(graph.query("record", RECORD, key=key)[0]["record"])


def test_signed_push_becomes_searchable(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "e2e",
        {
            "pkg/__init__.py": "",
            "pkg/first.py": "def zebra_quokka_total(xs):\n    return sum(xs)\n",
        },
    )
    sha1 = commit(repo, {"README.md": "# e2e\n"})
    configured = settings.model_copy(
        update={"webhook_secret": SECRET, "webhook_allow_local_sources": True}
    )
    register_job_kinds(KINDS)
    worker = Worker(configured, graph)
    key = repo_key_for(str(repo))
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as base:
        started = time.perf_counter()
        first = push(base, repo, sha1)
        assert worker.run(once=True) == 0
        job = JobStore(graph, configured).get(first["job_id"])
        assert job is not None and job.status.value == "succeeded", job
        hits = bm25(base, "zebra_quokka_total", key)
        first_latency = time.perf_counter() - started
        assert any(h["path"] == "pkg/first.py" for h in hits), hits
        # the lanes' size class: what the job indexed, on the repository's record
        first_files = lanes_record(graph, key)["files"]
        assert first_files >= 2 and lanes_record(graph, key)["last_worker"] == worker.name

        # a one-file change: the new function becomes searchable, the old one stays
        sha2 = commit(
            repo,
            {"pkg/second.py": "def walrus_tangerine_mean(xs):\n    return sum(xs) / len(xs)\n"},
        )
        assert bm25(base, "walrus_tangerine_mean", key) == []
        started = time.perf_counter()
        second = push(base, repo, sha2, host="gitea")
        assert second["repo"] == key and second["commit"] == sha2
        assert worker.run(once=True) == 0
        hits = bm25(base, "walrus_tangerine_mean", key)
        second_latency = time.perf_counter() - started
        assert [h["path"] for h in hits][:1] == ["pkg/second.py"], hits
        assert any(h["path"] == "pkg/first.py" for h in bm25(base, "zebra_quokka_total", key))
        assert lanes_record(graph, key)["files"] == first_files + 1
        defs = httpx.get(f"{base}/graph/def", params={"name": "walrus_tangerine_mean"}).json()
        assert [m["repo"] for m in defs["matches"]] == [key]
        runs = httpx.get(f"{base}/runs", params={"repo": key}).json()
        assert {r["commit"] for r in runs} >= {sha1, sha2}
    print(f"push-to-searchable: first {first_latency:.1f}s, one-file change {second_latency:.1f}s")
