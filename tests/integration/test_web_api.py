"""The HTTP API over real servers: health, metrics, auth, jobs, runs, graph, search."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import push_payload, serve_in_thread, signed_delivery

pytestmark = pytest.mark.integration

TOKEN = "api-token-for-tests"
SECRET = "s"


def serve(graph: Any, es: Any, settings: Settings, **extra: Any) -> Any:
    configured = settings.model_copy(update={"webhook_secret": SECRET, **extra})
    return serve_in_thread(create_app(configured, graph=graph, search=es))


@pytest.fixture
def base(graph: Graph, es: Elasticsearch, settings: Settings) -> Iterator[str]:
    with serve(graph, es, settings, api_token=TOKEN) as url:
        yield url


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def get(url: str, **kw: Any) -> httpx.Response:
    """A read with the token: reads are closed once a token is configured (issue 18)."""
    return httpx.get(url, headers=AUTH, **kw)


def test_health_ready_and_metrics(base: str) -> None:
    assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{base}/readyz")
    assert ready.status_code == 200 and ready.json() == {
        "status": "ready",
        "graph": "ok",
        "search": "ok",
    }
    headers, body = signed_delivery(
        "github", push_payload("github", "o/r", "https://h/o/r.git", after="c" * 40), SECRET
    )
    assert httpx.post(f"{base}/webhooks/github", headers=headers, content=body).status_code == 202
    assert httpx.get(f"{base}/metrics").status_code == 401  # a token is configured
    text = httpx.get(f"{base}/metrics", headers=AUTH).text
    assert 'semgraph_queue_jobs{status="pending"} 1.0' in text
    assert "semgraph_workers_alive 0.0" in text
    assert 'semgraph_webhook_deliveries_total{host="github",outcome="created"}' in text
    assert "semgraph_webhook_ack_seconds_bucket" in text
    assert 'semgraph_http_requests_total{route="/healthz",status="200"}' in text
    assert 'semgraph_http_requests_total{route="/webhooks/github",status="202"}' in text
    assert "semgraph_alerts_total" in text or "semgraph_queue_transitions_total" in text


def test_post_jobs_needs_the_bearer_token(base: str, graph: Graph, settings: Settings) -> None:
    body = {"source": "https://git.example/o/manual.git", "ref": "refs/heads/main"}
    assert httpx.post(f"{base}/jobs", json=body).status_code == 401
    wrong = httpx.post(f"{base}/jobs", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and TOKEN not in wrong.text
    assert wrong.headers["WWW-Authenticate"] == "Bearer"
    assert JobStore(graph, settings).list() == []
    ok = httpx.post(f"{base}/jobs", json=body, headers=AUTH)
    assert ok.status_code == 202, ok.text
    job = JobStore(graph, settings).get(ok.json()["job_id"])
    assert job is not None and job.args["source"] == body["source"] and job.ref == body["ref"]
    for bad in (
        {"source": "-oProxyCommand=x"},
        {"source": "a\nb"},
        {"source": "x" * 5000},
        {"source": "https://h/o/r.git", "commit": "zz"},
        {"source": "https://h/o/r.git", "priority": 10**9},
        {"nope": 1},
    ):
        resp = httpx.post(f"{base}/jobs", json=bad, headers=AUTH)
        assert resp.status_code in {400, 422}, (bad, resp.text)
    bad_json = httpx.post(
        f"{base}/jobs", content=b"{", headers=AUTH | {"Content-Type": "application/json"}
    )
    assert bad_json.status_code == 422
    assert len(JobStore(graph, settings).list()) == 1


def test_mutations_disabled_without_a_configured_token(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    with serve(graph, es, settings) as url:
        resp = httpx.post(f"{url}/jobs", json={"source": "https://h/o/r.git"}, headers=AUTH)
        assert resp.status_code == 403
    assert JobStore(graph, settings).list() == []


def test_read_endpoints_need_the_token_unless_opened_explicitly(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    reads = ("/jobs", "/runs", "/repos", "/graph/def?name=main", "/search?q=x&mode=bm25")
    with serve(graph, es, settings, api_token=TOKEN) as url:  # the default: closed
        for path in reads:
            assert httpx.get(f"{url}{path}").status_code == 401, path
        assert httpx.get(f"{url}/jobs", headers=AUTH).status_code == 200
        assert httpx.get(f"{url}/healthz").status_code == 200
    with serve(graph, es, settings, api_token=TOKEN, api_read_open=True) as url:
        assert httpx.get(f"{url}/jobs").status_code == 200
        assert httpx.get(f"{url}/jobs", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert httpx.post(f"{url}/jobs", json={"source": "https://h/o/r.git"}).status_code == 401


def test_jobs_list_filter_and_get(base: str) -> None:
    for n in range(3):
        body = {"source": f"https://git.example/o/r{n}.git"}
        assert httpx.post(f"{base}/jobs", json=body, headers=AUTH).status_code == 202
    jobs = get(f"{base}/jobs", params={"status": "pending", "limit": 2}).json()
    assert len(jobs) == 2 and {j["status"] for j in jobs} == {"pending"}
    assert get(f"{base}/jobs", params={"status": "running"}).json() == []
    assert get(f"{base}/jobs", params={"status": "bogus"}).status_code == 422
    one = get(f"{base}/jobs/{jobs[0]['id']}").json()
    assert one["id"] == jobs[0]["id"] and one["args"]["source"].startswith("https://")
    assert get(f"{base}/jobs/does-not-exist").status_code == 404


def test_graph_runs_and_search_on_an_empty_store(base: str) -> None:
    answer = get(f"{base}/graph/def", params={"name": "main"}).json()
    assert answer["matches"] == [] and answer["query"] == "definitions"
    callers = get(f"{base}/graph/callers", params={"name": "a.b", "depth": 2})
    assert callers.status_code == 200 and callers.json()["edges"] == []
    for blank in ("   ", "::", "a\nb"):
        resp = get(f"{base}/graph/callees", params={"name": blank})
        assert resp.status_code == 422, blank
    assert get(f"{base}/graph/callers", params={"name": "x", "depth": 99}).status_code == 422
    assert get(f"{base}/runs").json() == []
    assert get(f"{base}/repos").json() == []
    assert get(f"{base}/runs/nope").status_code == 404
    nothing = get(f"{base}/search", params={"q": "parse config", "mode": "bm25"})
    assert nothing.status_code == 404 and "indexed" in nothing.json()["detail"]
    assert get(f"{base}/search", params={"q": "   ", "mode": "bm25"}).status_code == 422
    long = get(f"{base}/search", params={"q": "x " * 5000, "mode": "bm25"})
    assert long.status_code == 404 and "x x" not in long.text  # searched, not refused
