"""Webhooks against the real queue in the real graph server, over real HTTP (uvicorn)."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import hypothesis
import pytest
from elasticsearch import Elasticsearch
from hypothesis import strategies as st

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import push_payload, serve_in_thread, signed_delivery

pytestmark = pytest.mark.integration

SECRET = "integration-secret"
HOSTS = ("github", "gitlab", "gitea")
PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)  # legal in a header value
EVENT = {"github": "push", "gitlab": "Push Hook", "gitea": "push"}


def sha(n: int) -> str:
    return f"{n:040x}"


def web_settings(settings: Settings, **extra: Any) -> Settings:
    return settings.model_copy(
        update={"webhook_secret": SECRET, "webhook_max_body_bytes": 64 * 1024, **extra}
    )


@pytest.fixture
def store(graph: Graph, settings: Settings) -> JobStore:
    return JobStore(graph, settings)


@pytest.fixture
def base_url(graph: Graph, es: Elasticsearch, settings: Settings) -> Iterator[str]:
    app = create_app(web_settings(settings), graph=graph, search=es)
    with serve_in_thread(app) as url:
        yield url


def post(base: str, host: str, headers: dict[str, str], body: bytes) -> httpx.Response:
    return httpx.post(f"{base}/webhooks/{host}", headers=headers, content=body, timeout=30)


def all_jobs(store: JobStore) -> list[Any]:
    return store.list(limit=10_000)


@pytest.mark.parametrize("host", HOSTS)
def test_signed_push_is_committed_before_202(base_url: str, store: JobStore, host: str) -> None:
    url = f"https://git.example/org/{host}-repo.git"
    headers, body = signed_delivery(
        host, push_payload(host, f"org/{host}-repo", url, after=sha(1)), SECRET
    )
    resp = post(base_url, host, headers, body)
    assert resp.status_code == 202, resp.text
    data = resp.json()
    assert data["status"] == "queued" and data["outcome"] == "created"
    job = store.get(data["job_id"])  # a fresh session: the job is committed
    assert job is not None and job.status.value == "pending"
    assert job.repo_key == repo_key_for(url) and job.commit == sha(1) and job.kind == "reindex"
    assert job.args == {"source": url, "ref": "refs/heads/main", "commit": sha(1)}


def test_replayed_delivery_enqueues_once(base_url: str, store: JobStore) -> None:
    payload = push_payload("github", "o/r", "https://git.example/o/r.git", after=sha(7))
    headers, body = signed_delivery("github", payload, SECRET, delivery="delivery-1")
    first = post(base_url, "github", headers, body).json()
    again = [post(base_url, "github", headers, body).json() for _ in range(3)]
    assert {a["job_id"] for a in again} == {first["job_id"]}
    assert {a["outcome"] for a in again} == {"duplicate"}
    (job,) = all_jobs(store)
    assert job.coalesced_count == 0


def test_bad_deliveries_get_their_status_and_leave_the_queue_as_it_was(
    base_url: str, store: JobStore
) -> None:
    url = "https://git.example/o/r.git"
    good = push_payload("github", "o/r", url, after=sha(2))
    headers, body = signed_delivery("github", good, SECRET)
    assert post(base_url, "github", headers, body).status_code == 202
    before = [(j.id, j.commit, j.coalesced_count, j.updated_at) for j in all_jobs(store)]

    cases: list[tuple[str, dict[str, str], bytes, int]] = []
    h, b = signed_delivery("github", good | {"after": sha(3)}, "wrong-secret")
    cases.append(("wrong secret", h, b, 401))
    h, b = signed_delivery("github", good | {"after": sha(3)}, SECRET)
    cases.append(("no signature", {k: v for k, v in h.items() if "Signature" not in k}, b, 401))
    cases.append(("tampered body", h, b.replace(sha(3).encode(), sha(4).encode()), 401))
    big = json.dumps(good | {"padding": "x" * 70_000}).encode()
    h, b = signed_delivery("github", big, SECRET)
    cases.append(("oversized", h, b, 413))
    truncated = json.dumps(good).encode()[:-10]
    h, b = signed_delivery("github", truncated, SECRET)
    cases.append(("truncated", h, b, 400))
    h, b = signed_delivery("github", good | {"after": sha(3)}, SECRET)
    cases.append(
        ("form encoded", h | {"Content-Type": "application/x-www-form-urlencoded"}, b, 415)
    )
    h, b = signed_delivery("github", b"[" * 60_000, SECRET)
    cases.append(("deeply nested", h, b, 400))
    hostile = good | {
        "after": sha(3),
        "repository": good["repository"] | {"clone_url": "--upload-pack=x"},
    }
    h, b = signed_delivery("github", hostile, SECRET)
    cases.append(("option-like clone url", h, b, 400))
    h, b = signed_delivery("github", good | {"after": "not-a-sha"}, SECRET)
    cases.append(("bad commit", h, b, 400))
    h, b = signed_delivery("github", good | {"after": sha(3)}, SECRET, delivery="x" * 1000)
    cases.append(("huge delivery id", h, b, 400))
    for name, h, b, status in cases:
        resp = post(base_url, "github", h, b)
        assert resp.status_code == status, (name, resp.status_code, resp.text)
        assert SECRET not in resp.text
    # chunked upload without Content-Length is cut off at the limit as well
    h, b = signed_delivery("github", big, SECRET)
    h.pop("Content-Length", None)
    chunked = httpx.post(
        f"{base_url}/webhooks/github", headers=h, content=iter([b[:40_000], b[40_000:]]), timeout=30
    )
    assert chunked.status_code == 413
    after = [(j.id, j.commit, j.coalesced_count, j.updated_at) for j in all_jobs(store)]
    assert after == before


def test_concurrent_deliveries_coalesce_per_repository_and_lose_no_push(
    base_url: str, store: JobStore
) -> None:
    repos = [f"https://git.example/team/repo{i}.git" for i in range(5)]
    deliveries = []
    for n in range(200):
        url = repos[n % 5]
        host = HOSTS[n % 3]
        payload = push_payload(host, f"team/repo{n % 5}", url, after=sha(1000 + n))
        deliveries.append((host, url, *signed_delivery(host, payload, SECRET)))

    def send(item: tuple[str, str, dict[str, str], bytes]) -> tuple[str, httpx.Response]:
        host, url, headers, body = item
        return url, post(base_url, host, headers, body)

    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(send, deliveries))
    assert all(r.status_code == 202 for _, r in results), [r.text for _, r in results][:3]
    pending = [j for j in all_jobs(store) if j.status.value == "pending"]
    by_repo = Counter(j.repo_key for j in pending)
    assert sorted(by_repo) == sorted(repo_key_for(u) for u in repos)
    assert set(by_repo.values()) == {1}
    for job in pending:
        answered = {r.json()["job_id"] for u, r in results if repo_key_for(u) == job.repo_key}
        assert answered == {job.id}  # every push of the repo landed in its one pending job
        assert job.coalesced_count + 1 == 40
        pushed = {sha(1000 + n) for n in range(200) if repo_key_for(repos[n % 5]) == job.repo_key}
        assert job.commit in pushed
    assert len(all_jobs(store)) == 5


def test_push_during_a_run_yields_exactly_one_follow_up(base_url: str, store: JobStore) -> None:
    url = "https://git.example/o/busy.git"
    h, b = signed_delivery("gitea", push_payload("gitea", "o/busy", url, after=sha(1)), SECRET)
    first = post(base_url, "gitea", h, b).json()
    queued = store.get(first["job_id"])
    assert queued is not None
    claimed = store.claim("test-worker", ["reindex"], now=queued.run_after + 1)
    assert claimed is not None and claimed.id == first["job_id"]
    outcomes = []
    for n in range(2, 12):
        h, b = signed_delivery("gitea", push_payload("gitea", "o/busy", url, after=sha(n)), SECRET)
        outcomes.append(post(base_url, "gitea", h, b).json())
    assert [o["outcome"] for o in outcomes] == ["follow_up"] + ["coalesced"] * 9
    assert len({o["job_id"] for o in outcomes}) == 1
    jobs = {j.id: j for j in all_jobs(store)}
    assert len(jobs) == 2
    assert jobs[first["job_id"]].status.value == "running"
    follow = jobs[outcomes[0]["job_id"]]
    assert follow.status.value == "pending" and follow.commit == sha(11)


def test_graph_unreachable_is_503_never_2xx(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    from semgraph.db import connect_graph

    down = web_settings(settings, bolt_uri="bolt://127.0.0.1:9", bolt_connect_timeout_s=1.0)
    dead = connect_graph(down)
    app = create_app(down, graph=dead, search=es)
    try:
        with serve_in_thread(app) as url:
            payload = push_payload("github", "o/r", "https://git.example/o/r.git", after=sha(5))
            h, b = signed_delivery("github", payload, SECRET)
            resp = post(url, "github", h, b)
            assert resp.status_code == 503 and resp.headers["Retry-After"]
            assert httpx.get(f"{url}/readyz").status_code == 503
            assert httpx.get(f"{url}/healthz").status_code == 200
    finally:
        dead.close()
    assert JobStore(graph, settings).list() == []


def test_unique_delivery_keys_per_host(base_url: str, store: JobStore) -> None:
    # the same delivery id from two hosts is two deliveries
    delivery = str(uuid.uuid4())
    for host in ("github", "gitea"):
        url = f"https://git.example/o/{host}.git"
        h, b = signed_delivery(
            host, push_payload(host, f"o/{host}", url, after=sha(9)), SECRET, delivery=delivery
        )
        assert post(base_url, host, h, b).json()["outcome"] == "created"
    assert len(all_jobs(store)) == 2


@hypothesis.settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(
    host=st.sampled_from(HOSTS),
    after=st.from_regex(r"\A[0-9a-f]{40}\Z"),
    signature=st.text(PRINTABLE, max_size=80).map(str.strip),
    wrong_secret=st.text(PRINTABLE, min_size=1, max_size=30)
    .map(str.strip)
    .filter(lambda s: s and s != SECRET),
)
def test_generated_forgeries_never_reach_the_queue(
    base_url: str, store: JobStore, host: str, after: str, signature: str, wrong_secret: str
) -> None:
    payload = push_payload(host, "o/forged", "https://git.example/o/forged.git", after=after)
    headers, body = signed_delivery(host, payload, wrong_secret)
    assert post(base_url, host, headers, body).status_code == 401
    auth = {
        "github": "X-Hub-Signature-256",
        "gitlab": "X-Gitlab-Token",
        "gitea": "X-Gitea-Signature",
    }
    status = post(base_url, host, headers | {auth[host]: signature}, body).status_code
    assert status == 401 or (host == "gitlab" and signature == SECRET)
    assert all_jobs(store) == []
