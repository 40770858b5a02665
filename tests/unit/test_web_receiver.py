"""The webhook decision logic through the app's webhook routes (an in-process HTTP client,
the real check, batcher and answers) with an in-memory job store; the integration tests
use the real queue."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2  # what starlette's TestClient answers with
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.config import load_settings
from semgraph.errors import ConfigError, GraphUnavailable
from semgraph.queue.models import EnqueueRequest, EnqueueResult
from semgraph.web.app import create_app
from semgraph.web.fixtures import ZERO, push_payload, signed_delivery
from semgraph.web.policy import WebhookPolicy
from semgraph.web.webhooks import Accepted, Reply, WebhookReceiver

SHA = "b" * 40
SECRET = "default-secret"
OWN = "own-secret-of-org-special"
AUTH = {"github": "x-hub-signature-256", "gitlab": "x-gitlab-token", "gitea": "x-gitea-signature"}
# what a header value can carry over HTTP (the route never sees anything else)
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)


@dataclass
class FakeStore:
    """What the app's batcher commits to: every request it was handed, one result each."""

    requests: list[EnqueueRequest] = field(default_factory=list)
    fail: Exception | None = None

    def enqueue_many(
        self, requests: Sequence[EnqueueRequest], *, now: float
    ) -> list[EnqueueResult]:
        if self.fail is not None:
            raise self.fail
        results = []
        for request in requests:
            self.requests.append(request)
            results.append(EnqueueResult(f"job-{len(self.requests)}", "created"))
        return results


@contextmanager
def client(store: FakeStore, **overrides: Any) -> Iterator[TestClient]:
    """The web app (lifespan included) with ``store`` as its job store; the graph and search
    clients are never used by a webhook, so no server is contacted."""
    cfg = load_settings(webhook_secret=SECRET, webhook_secrets={"org/special": OWN}, **overrides)
    app = create_app(cfg, store=store, repo_key_for=lambda s: "key:" + s)  # type: ignore[arg-type]
    with TestClient(app) as http:
        yield http


def post(http: TestClient, host: str, headers: dict[str, str], body: bytes) -> httpx2.Response:
    return http.post(f"/webhooks/{host}", headers=headers, content=body)


def deliver(
    http: TestClient, host: str, payload: Any, secret: str = SECRET, **kw: Any
) -> httpx2.Response:
    headers, body = signed_delivery(host, payload, secret, **kw)
    return post(http, host, headers, body)


def args_of(request: EnqueueRequest) -> Any:
    return json.loads(request.args)


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_signed_push_enqueues_one_reindex(host: str) -> None:
    store = FakeStore()
    with client(store) as http:
        reply = deliver(
            http,
            host,
            push_payload(host, "org/a", "https://h/org/a.git", after=SHA),
            delivery="d1",
        )
    assert reply.status_code == 202 and reply.json()["status"] == "queued"
    assert reply.json()["job_id"] == "job-1"
    (request,) = store.requests
    assert request.repo_key == "key:https://h/org/a.git" and request.kind == "reindex"
    assert args_of(request) == {
        "source": "https://h/org/a.git",
        "ref": "refs/heads/main",
        "commit": SHA,
    }
    assert request.delivery_key == f"{host}:d1"


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_wrong_or_missing_secret_is_401_and_enqueues_nothing(host: str) -> None:
    store = FakeStore()
    payload = push_payload(host, "org/a", "https://h/org/a.git", after=SHA)
    special = push_payload(host, "org/special", "https://h/org/special.git", after=SHA)
    with client(store) as http:
        assert deliver(http, host, payload, secret="wrong").status_code == 401
        # a repository with its own secret does not accept the default one
        assert deliver(http, host, special, secret=SECRET).status_code == 401
        assert deliver(http, host, special, secret=OWN).status_code == 202
        headers, body = signed_delivery(host, payload, SECRET)
        stripped = {k: v for k, v in headers.items() if k.lower() != AUTH[host]}
        reply = post(http, host, stripped, body)
    assert reply.status_code == 401
    assert SECRET not in reply.text and "secret" not in reply.text
    assert len(store.requests) == 1


def test_no_secret_configured_means_nothing_is_accepted() -> None:
    store = FakeStore()
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    cfg = load_settings()
    with TestClient(create_app(cfg, store=store, repo_key_for=str)) as http:  # type: ignore[arg-type]
        for secret in ("", "anything"):
            headers, body = signed_delivery("github", payload, secret or "x")
            assert post(http, "github", headers, body).status_code == 401
    assert store.requests == []


def test_policy_ignores_deletions_other_branches_and_tags() -> None:
    store = FakeStore()
    url = "https://h/o/r.git"
    cases = [
        push_payload("github", "o/r", url, after=ZERO),
        push_payload("github", "o/r", url, after=SHA, ref="refs/heads/feature"),
        push_payload("github", "o/r", url, after=SHA, ref="refs/tags/v1"),
        push_payload("github", "o/r", url, after=SHA, ref="refs/notes/commits"),
    ]
    with client(store) as http:
        for payload in cases:
            reply = deliver(http, "github", payload)
            assert reply.status_code == 202 and reply.json()["status"] == "ignored", reply.text
            assert reply.json()["reason"]
        assert deliver(http, "github", {"zen": "x"}, event="ping").json() == {"status": "pong"}
        issue = deliver(http, "github", {"action": "opened"}, event="issues")
        assert issue.json()["status"] == "ignored"
    assert store.requests == []


def test_branch_patterns_and_tag_flag() -> None:
    store = FakeStore()
    url = "https://h/o/r.git"
    with client(store, webhook_branches=["release/*", "main"], webhook_tag_pushes=True) as http:
        for ref in ("refs/heads/release/1.2", "refs/heads/main", "refs/tags/v2"):
            payload = push_payload("gitea", "o/r", url, after=SHA, ref=ref)
            assert deliver(http, "gitea", payload).status_code == 202
        dev = push_payload("gitea", "o/r", url, after=SHA, ref="refs/heads/dev")
        assert deliver(http, "gitea", dev).json()["status"] == "ignored"
    assert [r.ref for r in store.requests] == [
        "refs/heads/release/1.2",
        "refs/heads/main",
        "refs/tags/v2",
    ]


def test_allowlist_is_403_for_other_repositories() -> None:
    store = FakeStore()
    ok = push_payload("github", "org/allowed", "https://h/org/allowed.git", after=SHA)
    other = push_payload("github", "org/other", "https://h/org/other.git", after=SHA)
    with client(store, webhook_allowlist=["Org/Allowed"]) as http:
        assert deliver(http, "github", ok).status_code == 202
        assert deliver(http, "github", other).status_code == 403
    assert len(store.requests) == 1


@pytest.mark.parametrize(
    "clone_url", ["/srv/repo", "file:///srv/repo", "--upload-pack=touch /tmp/x", "ext::sh -c x"]
)
def test_local_and_hostile_clone_urls_are_refused(clone_url: str) -> None:
    store = FakeStore()
    with client(store) as http:
        reply = deliver(http, "github", push_payload("github", "o/r", clone_url, after=SHA))
    assert reply.status_code == 400 and store.requests == []


def test_local_sources_when_allowed() -> None:
    store = FakeStore()
    with client(store, webhook_allow_local_sources=True) as http:
        local = push_payload("github", "o/r", "/srv/r", after=SHA)
        assert deliver(http, "github", local).status_code == 202
        option = push_payload("github", "o/r", "-x", after=SHA)
        assert deliver(http, "github", option).status_code == 400


def test_content_type_and_malformed_bodies() -> None:
    store = FakeStore()
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    headers, body = signed_delivery("github", payload, SECRET)
    with client(store) as http:
        for ctype in ("application/x-www-form-urlencoded", "text/plain", ""):
            assert post(http, "github", headers | {"Content-Type": ctype}, body).status_code == 415
        typed = headers | {"Content-Type": "application/json; charset=utf-8"}
        assert post(http, "github", typed, body).status_code == 202
        for bad in (body[:-5], b"[]", b"\xff", b"{}"):
            bad_headers, _ = signed_delivery("github", bad, SECRET)
            reply = post(http, "github", bad_headers, bad)
            # {} names no repository: its secret is the default one, then the push lacks fields
            assert reply.status_code == 400, (bad, reply.text)
    assert len(store.requests) == 1


def test_hostile_delivery_id_is_400() -> None:
    store = FakeStore()
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    with client(store) as http:
        for delivery in ("x" * 500, "a\x7fb"):
            assert deliver(http, "github", payload, delivery=delivery).status_code == 400
    assert store.requests == []


def test_store_outage_is_503_with_retry_after() -> None:
    store = FakeStore(fail=GraphUnavailable("down"))
    with client(store) as http:
        reply = deliver(
            http, "github", push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
        )
    assert reply.status_code == 503 and reply.headers["Retry-After"]


def test_empty_secrets_are_a_config_error() -> None:
    with pytest.raises(ConfigError):
        WebhookPolicy.from_settings(load_settings(webhook_secrets={"o/r": " "}))
    with pytest.raises(ConfigError):
        WebhookPolicy.from_settings(load_settings(webhook_secret=""))


@pytest.fixture(scope="module")
def forgery_target() -> Iterator[tuple[TestClient, FakeStore]]:
    store = FakeStore()
    with client(store) as http:
        yield http, store


@settings(max_examples=200, deadline=None)
@given(
    body=st.binary(max_size=512)
    | st.builds(
        lambda d: json.dumps(d).encode(), st.dictionaries(st.text(max_size=8), st.text(max_size=8))
    ),
    signature=HEADER_TEXT,
    host=st.sampled_from(["github", "gitlab", "gitea"]),
)
def test_generated_bodies_and_signatures_never_enqueue(
    forgery_target: tuple[TestClient, FakeStore], body: bytes, signature: str, host: str
) -> None:
    http, store = forgery_target
    headers = {"content-type": "application/json", AUTH[host]: signature}
    reply = post(http, host, headers, body)
    assert store.requests == []
    assert reply.status_code in {400, 401}


def test_check_refuses_fields_the_queue_would_refuse_before_any_enqueue() -> None:
    """The web server enqueues in batches: a field the queue refuses must be a 400 of its
    own delivery at check time, never an error for a whole batch."""
    cfg = load_settings(webhook_secret=SECRET, webhook_branches=["*"])
    rx = WebhookReceiver(WebhookPolicy.from_settings(cfg), lambda s: "key:" + s)
    url = "https://h/o/r.git"
    long_ref = "refs/heads/" + "b" * 1100
    payload = push_payload("github", "o/r", url, after=SHA, ref=long_ref)
    headers, body = signed_delivery("github", payload, SECRET)
    lower = {k.lower(): v for k, v in headers.items()}
    refused = rx.check("github", lower, body)
    assert isinstance(refused, Reply) and refused.status == 400, refused
    assert "ref" in refused.body["detail"]
    payload = push_payload("github", "o/r", url, after=SHA)
    headers, body = signed_delivery("github", payload, SECRET, delivery="d9")
    accepted = rx.check("github", {k.lower(): v for k, v in headers.items()}, body)
    assert isinstance(accepted, Accepted)  # checked, not yet enqueued
    req = accepted.request
    assert (req.repo_key, req.commit, req.delivery_key) == (f"key:{url}", SHA, "github:d9")
    assert json.loads(req.args) == {"source": url, "ref": "refs/heads/main", "commit": SHA}
