"""Group commit in the web server, over real HTTP against the real graph server: concurrent
deliveries share one transaction, each answered with its own result; a failed commit is a 503
for every delivery of the batch and stores nothing."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphUnavailable
from semgraph.faults import Faults
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import push_payload, serve_in_thread, signed_delivery

pytestmark = pytest.mark.integration

SECRET = "batch-secret"
Delivery = tuple[str, dict[str, str], bytes]


def sha(n: int) -> str:
    return f"{n:040x}"


@contextmanager
def server(
    graph: Graph, es: Any, settings: Settings, batch: int, store: JobStore | None = None
) -> Iterator[tuple[str, Any]]:
    """A server whose batches close when ``batch`` deliveries arrived (the window is long
    enough never to end one first), so which deliveries share a commit is deterministic."""
    web = settings.model_copy(
        update={
            "webhook_secret": SECRET,
            "webhook_batch_window_s": 1.0,
            "webhook_batch_max_requests": batch,
            "claim_conflict_retries": 3,
        }
    )
    app = create_app(web, graph=graph, search=es, store=store)
    with serve_in_thread(app) as url:
        yield url, app.state.ctx.batcher


def delivery(host: str, repo: str, n: int, delivery_id: str | None = None) -> Delivery:
    url = f"https://git.example/{repo}.git"
    headers, body = signed_delivery(
        host, push_payload(host, repo, url, after=sha(n)), SECRET, delivery=delivery_id
    )
    return host, headers, body


def send_all(base: str, items: list[Delivery]) -> list[httpx.Response]:
    def send(item: Delivery) -> httpx.Response:
        host, headers, body = item
        return httpx.post(f"{base}/webhooks/{host}", headers=headers, content=body, timeout=60)

    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        return list(pool.map(send, items))


def count(graph: Graph, label: str) -> int:
    return int(graph.query("count", f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"])


def test_one_batch_with_replays_and_several_repositories(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    running = store.enqueue(repo_key_for("https://git.example/o/busy.git"), now=1.0)
    assert store.claim("w", ["reindex"], now=2.0) is not None
    items = [
        delivery("github", "o/a", 1, "d-1"),
        delivery("github", "o/a", 1, "d-1"),  # the host redelivers while the first is queued
        delivery("github", "o/a", 2, "d-2"),
        delivery("gitlab", "o/b", 3, "d-1"),  # another host: another delivery
        delivery("gitea", "o/busy", 4, "d-4"),
        delivery("gitea", "o/busy", 5, "d-5"),
    ]
    with server(graph, es, settings, batch=len(items)) as (url, batcher):
        answers = send_all(url, items)
        assert batcher.batches == 1
    assert [r.status_code for r in answers] == [202] * 6, [r.text for r in answers]
    body = [r.json() for r in answers]
    outcomes = sorted(b["outcome"] for b in body)
    assert outcomes == sorted(
        ["created", "duplicate", "coalesced", "created", "follow_up", "coalesced"]
    )
    jobs = {b["repo"]: b["job_id"] for b in body}
    for b in body:
        assert b["job_id"] == jobs[b["repo"]]  # every push of a repository: one pending job
    assert jobs[repo_key_for("https://git.example/o/busy.git")] != running.job_id
    pending = {j.repo_key: j for j in store.list(status="pending")}
    # latest arrival wins (the threads race, so either push may have come last)
    assert pending[repo_key_for("https://git.example/o/a.git")].commit in {sha(1), sha(2)}
    assert pending[repo_key_for("https://git.example/o/busy.git")].commit in {sha(4), sha(5)}
    assert count(graph, "JobDelivery") == 5 and count(graph, "JobQueue") == 4


def test_a_failed_commit_answers_503_to_the_whole_batch_and_stores_nothing(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    armed = [True]
    reached: list[str] = []

    def cut(**_: object) -> None:  # the Bolt connection drops just before COMMIT
        if armed[0]:
            reached.append("enqueue:before_commit")
            raise GraphUnavailable("bolt connection lost")

    faults = Faults()
    faults.arm("queue.enqueue:before_commit", cut)
    retrying = settings.model_copy(update={"claim_conflict_retries": 3})
    store = JobStore(graph, retrying, faults=faults)
    items = [delivery("github", f"o/r{i % 2}", i + 1, f"f-{i}") for i in range(4)]
    with server(graph, es, settings, batch=4, store=store) as (url, batcher):
        answers = send_all(url, items)
        assert batcher.batches == 1 and reached  # one batch; its writes ran, then the cut
        assert [r.status_code for r in answers] == [503] * 4, [r.text for r in answers]
        assert all(r.headers["Retry-After"] and "job_id" not in r.json() for r in answers)
        assert count(graph, "JobQueue") == 0 and count(graph, "JobDelivery") == 0
        armed[0] = False  # the host retries the same deliveries: each is stored once
        again = send_all(url, items)
    assert [r.status_code for r in again] == [202] * 4
    assert sorted(r.json()["outcome"] for r in again) == [
        "coalesced",
        "coalesced",
        "created",
        "created",
    ]
    assert count(graph, "JobQueue") == 2 and count(graph, "JobDelivery") == 4


def test_refusals_in_a_burst_do_not_touch_the_batch(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    good = [delivery("github", "o/g", i + 1, f"g-{i}") for i in range(3)]
    host, headers, body = delivery("github", "o/bad", 9)
    forged = (host, headers | {"X-Hub-Signature-256": "sha256=" + "0" * 64}, body)
    with server(graph, es, settings, batch=3) as (url, batcher):
        answers = send_all(url, [*good, forged])
        assert batcher.batches == 1
    assert sorted(r.status_code for r in answers) == [202, 202, 202, 401]
    store = JobStore(graph, settings)
    (job,) = store.list()
    assert job.repo_key == repo_key_for("https://git.example/o/g.git")
    assert job.coalesced_count == 2
