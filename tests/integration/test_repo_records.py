"""Repository records against the real graph server (issue 19): a repository's source is
recorded at its first enqueue, whoever enqueues it; an enqueue naming another source for a
recorded key is refused by the queue, the webhooks and the API and stores nothing; merges
never drop a pushed commit or source."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.commands.enqueue import enqueue_repository
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import SourceConflict
from semgraph.indexer.request import ReindexArgs
from semgraph.queue.enqueue import enqueue_request
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import push_payload, serve_in_thread, signed_delivery
from tests.optional import some

pytestmark = pytest.mark.integration

SOURCE = "https://git.example/org/app"
OTHER = "https://elsewhere.example/org/app"
KEY = "app-0123456789"
SECRET = "records-secret"
TOKEN = "records-token"


def push(store: JobStore, commit: str, *, source: str = SOURCE, now: float = 1.0) -> Any:
    args = ReindexArgs(source, ref="refs/heads/main", commit=commit).to_json()
    return store.enqueue(
        KEY,
        now=now,
        args=args,
        commit=commit,
        source=source,
        host="github",
        default_branch="main",
    )


def test_the_first_enqueue_records_the_repository(graph: Graph, settings: Settings) -> None:
    store = JobStore(graph, settings)
    assert store.record(KEY) is None
    push(store, "c" * 40, now=5.0)
    record = some(store.record(KEY))
    assert (record.source, record.host, record.default_branch) == (SOURCE, "github", "main")
    assert record.created_at == 5.0
    assert [r.key for r in store.records()] == [KEY]
    # the record stays as it was: a later push neither moves it nor writes it again
    push(store, "d" * 40, now=9.0)
    assert some(store.record(KEY)).updated_at == 5.0


def test_another_source_for_a_recorded_key_is_refused_and_nothing_changes(
    graph: Graph, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    job_id = push(store, "c" * 40).job_id
    before = some(store.get(job_id))
    with pytest.raises(SourceConflict, match="recorded with source"):
        push(store, "e" * 40, source=OTHER, now=2.0)
    after = some(store.get(job_id))
    assert (after.args, after.commit, after.coalesced_count) == (
        before.args,
        before.commit,
        before.coalesced_count,
    )
    assert some(store.record(KEY)).source == SOURCE
    # in a batch the refusal is one request's answer; the others are stored
    refused, created = store.enqueue_many(
        [
            enqueue_request(KEY, args=ReindexArgs(OTHER).to_json(), source=OTHER),
            enqueue_request(
                "other-1", args=ReindexArgs(SOURCE + "2").to_json(), source=SOURCE + "2"
            ),
        ],
        now=3.0,
    )
    assert (
        refused.refused and refused.job_id == "" and "recorded with source" in str(refused.detail)
    )
    assert created.outcome == "created"
    assert {j.repo_key for j in store.list()} == {KEY, "other-1"}


def test_an_enqueue_naming_no_commit_keeps_the_pushed_one(graph: Graph, settings: Settings) -> None:
    store = JobStore(graph, settings)
    job_id = push(store, "c" * 40).job_id
    result = enqueue_repository(store, KEY, now=2.0)  # `semgraph enqueue KEY`
    assert (result.job_id, result.outcome) == (job_id, "coalesced")
    job = some(store.get(job_id))
    assert job.commit == "c" * 40 and job.args["commit"] == "c" * 40
    assert job.args["source"] == SOURCE


def test_a_requeued_old_job_keeps_the_newer_pending_push(graph: Graph, settings: Settings) -> None:
    store = JobStore(graph, settings)
    old = push(store, "a" * 40, now=1.0).job_id
    store.abandon(old, now=2.0, reason="op")
    new = push(store, "b" * 40, now=3.0).job_id
    store.requeue(old, now=4.0)  # merges the pending newer push into the old job
    (pending,) = store.list(status="pending")
    assert pending.id == old and new != old
    assert pending.commit == "b" * 40 and pending.args["commit"] == "b" * 40


@pytest.fixture
def base(graph: Graph, es: Elasticsearch, settings: Settings) -> Iterator[str]:
    """A web app whose repository key ignores the URL: two URLs name one repository."""
    configured = settings.model_copy(update={"webhook_secret": SECRET, "api_token": TOKEN})
    app = create_app(configured, graph=graph, search=es, repo_key_for=lambda _source: KEY)
    with serve_in_thread(app) as url:
        yield url


def test_webhooks_and_the_api_answer_409_for_another_source(
    base: str, graph: Graph, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    first = signed_delivery(
        "github", push_payload("github", "org/app", SOURCE + ".git", after="c" * 40), SECRET
    )
    resp = httpx.post(f"{base}/webhooks/github", headers=first[0], content=first[1], timeout=30)
    assert resp.status_code == 202, resp.text
    assert some(store.record(KEY)).source == SOURCE  # canonical: no .git
    moved = signed_delivery(
        "github", push_payload("github", "org/app", OTHER + ".git", after="d" * 40), SECRET
    )
    resp = httpx.post(f"{base}/webhooks/github", headers=moved[0], content=moved[1], timeout=30)
    assert resp.status_code == 409 and resp.json()["status"] == "refused", resp.text
    api = httpx.post(
        f"{base}/jobs",
        json={"source": OTHER},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    assert api.status_code == 409 and "recorded with source" in api.json()["detail"], api.text
    (job,) = store.list()
    assert job.commit == "c" * 40 and job.args["source"] == SOURCE + ".git"
