"""The repository lifecycle over HTTP against the real servers: ``GET /repos/{key}`` and
``DELETE /repos/{key}`` (admin scope), ``GET /repos`` hiding a repository being removed, and
the hosts' repository-deleted webhooks (signed like pushes; acted on only when
``webhook_remove_on_delete`` allows it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.store import JobStore
from semgraph.repos import graph as gr
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread, signed_delivery

pytestmark = pytest.mark.integration

ADMIN, READER = "repos-admin-token-0123456789", "repos-read-token-0123456789"
TOKENS = f"""
[[tokens]]
name = "admin"
token = "{ADMIN}"
scopes = ["read", "enqueue", "admin"]

[[tokens]]
name = "reader"
token = "{READER}"
scopes = ["read", "enqueue"]
"""
AS_ADMIN = {"Authorization": f"Bearer {ADMIN}"}
AS_READER = {"Authorization": f"Bearer {READER}"}
SECRET = "repos-webhook-secret"


def _repository(graph: Graph, key: str, url: str) -> None:
    graph.query(
        "test repository",
        "CREATE (:Repository {key: $key, url: $url, commit: 'c1', run_id: 'r1'})"
        "-[:CONTAINS]->(:File {key: $key + ':a.py', repo: $key, path: 'a.py'})",
        key=key,
        url=url,
    )


def _serve(graph: Graph, es: Elasticsearch, settings: Settings, tmp: Path, **extra: Any) -> Any:
    tokens = tmp / "tokens.toml"
    tokens.write_text(TOKENS)
    configured = settings.model_copy(
        update={"api_tokens_file": tokens, "webhook_secret": SECRET, **extra}
    )
    return serve_in_thread(create_app(configured, graph=graph, search=es))


@pytest.fixture
def base(graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path) -> Iterator[str]:
    with _serve(graph, es, settings, tmp_path, webhook_remove_on_delete=True) as url:
        yield url


def test_show_and_delete_a_repository_need_the_admin_scope(
    base: str, graph: Graph, settings: Settings
) -> None:
    _repository(graph, "shop-1", "https://git.example/o/shop")
    _repository(graph, "other-2", "https://git.example/o/other")
    store = JobStore(graph, settings)
    for headers, status in (({}, 401), (AS_READER, 403)):
        assert httpx.get(f"{base}/repos/shop-1", headers=headers).status_code == status
        assert httpx.delete(f"{base}/repos/shop-1", headers=headers).status_code == status
    assert store.list() == []

    shown = httpx.get(f"{base}/repos/shop-1", headers=AS_ADMIN)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert (body["key"], body["state"], body["counts"]["files"]) == ("shop-1", "live", 1)
    assert body["live_index"] is None and body["jobs"] == []

    deleted = httpx.delete(f"{base}/repos/shop-1", headers=AS_ADMIN)
    assert deleted.status_code == 202, deleted.text
    answer = deleted.json()
    assert answer["status"] == "queued" and answer["outcome"] == "created"
    job = store.get(answer["job_id"])
    assert job is not None and (job.kind, job.repo_key) == ("remove", "shop-1")
    assert httpx.get(f"{base}/repos/shop-1", headers=AS_ADMIN).json()["jobs"] == [
        {"id": job.id, "kind": "remove", "status": "pending", "commit": None}
    ]
    # once its removal started the repository is not listed as live
    gr.GraphRemoval(graph, "shop-1").mark_removing(job.id, time.time())
    listed = httpx.get(f"{base}/repos", headers=AS_READER).json()
    assert [r["key"] for r in listed] == ["other-2"]
    assert httpx.get(f"{base}/repos/shop-1", headers=AS_ADMIN).json()["state"] == "removing"


def test_unknown_and_hostile_keys_queue_nothing(
    base: str, graph: Graph, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    for key, status in (
        ("nope", 404),
        ("x" * 513, 422),
        ("a%01b", 422),
        ("%20", 404),
        ("' }) MATCH (n) DETACH DELETE n", 404),
        ("..%2F..%2Fetc", 404),
        ("\u00e9\u6f22\U0001f600", 404),
    ):
        for method in ("GET", "DELETE"):
            answer = httpx.request(method, f"{base}/repos/{key}", headers=AS_ADMIN)
            assert answer.status_code == status, (key, method, answer.text)
            assert "detail" in answer.json()
    assert store.list() == []


def _deleted(host: str, full_name: str, clone_url: str) -> tuple[dict[str, Any], str]:
    if host == "gitlab":
        payload = {
            "event_name": "project_destroy",
            "name": full_name.rsplit("/", 1)[-1],
            "path": full_name.rsplit("/", 1)[-1],
            "path_with_namespace": full_name,
            "project_id": 74,
            "owner_name": "Dev",
            "project_visibility": "private",
        }
        return payload, "System Hook"
    repo = {
        "full_name": full_name,
        "name": full_name.rsplit("/", 1)[-1],
        "clone_url": clone_url,
        "html_url": clone_url.removesuffix(".git"),
    }
    return {"action": "deleted", "repository": repo, "sender": {"login": "dev"}}, "repository"


@pytest.mark.parametrize("host", ["github", "gitea", "gitlab"])
def test_repository_deleted_events_queue_the_removal(
    host: str,
    graph: Graph,
    es: Elasticsearch,
    settings: Settings,
    tmp_path: Path,
) -> None:
    clone_url = f"https://{host}.example/team/{host}-app.git"
    key = repo_key_for(clone_url)
    _repository(graph, key, clone_url.removesuffix(".git"))
    _repository(graph, "unrelated-1", f"https://{host}.example/team/other")
    store = JobStore(graph, settings)
    payload, event = _deleted(host, f"team/{host}-app", clone_url)
    with _serve(graph, es, settings, tmp_path) as off:  # the policy's default: off
        headers, body = signed_delivery(host, payload, SECRET, event=event)
        answer = httpx.post(f"{off}/webhooks/{host}", headers=headers, content=body)
        assert answer.status_code == 202 and answer.json()["status"] == "ignored"
        assert "SEMGRAPH_WEBHOOK_REMOVE_ON_DELETE" in answer.json()["reason"]
    with _serve(graph, es, settings, tmp_path, webhook_remove_on_delete=True) as on:
        forged, body = signed_delivery(host, payload, "not-the-secret", event=event)
        assert httpx.post(f"{on}/webhooks/{host}", headers=forged, content=body).status_code == 401
        unsigned = {k: v for k, v in forged.items() if "Signature" not in k and "Token" not in k}
        assert (
            httpx.post(f"{on}/webhooks/{host}", headers=unsigned, content=body).status_code == 401
        )
        assert store.list() == []
        headers, body = signed_delivery(host, payload, SECRET, event=event, delivery="d-1")
        answer = httpx.post(f"{on}/webhooks/{host}", headers=headers, content=body)
        assert answer.status_code == 202, answer.text
        assert (answer.json()["status"], answer.json()["repo"]) == ("queued", key)
        again = httpx.post(f"{on}/webhooks/{host}", headers=headers, content=body)
        assert again.json()["outcome"] == "duplicate"
        # a deletion of a repository of another name
        other, event = _deleted(host, "team/never-indexed", f"https://{host}.example/x/y.git")
        headers, body = signed_delivery(host, other, SECRET, event=event)
        unknown = httpx.post(f"{on}/webhooks/{host}", headers=headers, content=body)
    jobs = store.list()
    assert [(j.kind, j.repo_key) for j in jobs if j.repo_key == key] == [("remove", key)]
    if host == "gitlab":  # resolved by name among the known repositories only
        assert unknown.json()["status"] == "ignored" and len(jobs) == 1
    else:  # the clone URL names the key; removing a repository never indexed is a no-op
        assert unknown.status_code == 202 and unknown.json()["status"] == "queued"
