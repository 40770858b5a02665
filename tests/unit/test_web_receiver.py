"""The webhook decision logic, with an in-memory enqueuer (the integration tests use the
real queue)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.config import load_settings
from semgraph.errors import ConfigError, GraphUnavailable
from semgraph.web.fixtures import ZERO, push_payload, signed_delivery
from semgraph.web.webhooks import Accepted, Reply, WebhookPolicy, WebhookReceiver

SHA = "b" * 40
SECRET = "default-secret"
OWN = "own-secret-of-org-special"


@dataclass
class Result:
    job_id: str
    outcome: str


@dataclass
class FakeStore:
    calls: list[dict[str, Any]] = field(default_factory=list)
    fail: Exception | None = None

    def enqueue(self, repo_key: str, **kw: Any) -> Result:
        if self.fail is not None:
            raise self.fail
        self.calls.append({"repo_key": repo_key, **kw})
        return Result(f"job-{len(self.calls)}", "created")


def receiver(store: FakeStore, **overrides: Any) -> WebhookReceiver:
    settings = load_settings(
        webhook_secret=SECRET, webhook_secrets={"org/special": OWN}, **overrides
    )
    return WebhookReceiver(WebhookPolicy.from_settings(settings), store, lambda s: "key:" + s)


def lower(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def deliver(rx: WebhookReceiver, host: str, payload: Any, secret: str = SECRET, **kw: Any):  # type: ignore[no-untyped-def]
    headers, body = signed_delivery(host, payload, secret, **kw)
    return rx.receive(host, lower(headers), body, now=1000.0)


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_signed_push_enqueues_one_reindex(host: str) -> None:
    store = FakeStore()
    rx = receiver(store)
    reply = deliver(
        rx, host, push_payload(host, "org/a", "https://h/org/a.git", after=SHA), delivery="d1"
    )
    assert reply.status == 202 and reply.body["status"] == "queued"
    assert reply.body["job_id"] == "job-1"
    (call,) = store.calls
    assert call["repo_key"] == "key:https://h/org/a.git"
    assert call["args"] == {
        "source": "https://h/org/a.git",
        "ref": "refs/heads/main",
        "commit": SHA,
    }
    assert call["delivery_key"] == f"{host}:d1" and call["now"] == 1000.0


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_wrong_or_missing_secret_is_401_and_enqueues_nothing(host: str) -> None:
    store = FakeStore()
    rx = receiver(store)
    payload = push_payload(host, "org/a", "https://h/org/a.git", after=SHA)
    assert deliver(rx, host, payload, secret="wrong").status == 401
    # a repository with its own secret does not accept the default one
    special = push_payload(host, "org/special", "https://h/org/special.git", after=SHA)
    assert deliver(rx, host, special, secret=SECRET).status == 401
    assert deliver(rx, host, special, secret=OWN).status == 202
    headers, body = signed_delivery(host, payload, SECRET)
    auth = {
        "github": "x-hub-signature-256",
        "gitlab": "x-gitlab-token",
        "gitea": "x-gitea-signature",
    }
    stripped = {k: v for k, v in lower(headers).items() if k != auth[host]}
    reply = rx.receive(host, stripped, body, now=1.0)
    assert reply.status == 401
    assert SECRET not in json.dumps(reply.body) and "secret" not in json.dumps(reply.body)
    assert len(store.calls) == 1


def test_no_secret_configured_means_nothing_is_accepted() -> None:
    store = FakeStore()
    rx = WebhookReceiver(WebhookPolicy.from_settings(load_settings()), store, lambda s: s)
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    for secret in ("", "anything"):
        headers, body = signed_delivery("github", payload, secret or "x")
        assert rx.receive("github", lower(headers), body, now=1.0).status == 401
    assert store.calls == []


def test_policy_ignores_deletions_other_branches_and_tags() -> None:
    store = FakeStore()
    rx = receiver(store)
    url = "https://h/o/r.git"
    cases = [
        push_payload("github", "o/r", url, after=ZERO),
        push_payload("github", "o/r", url, after=SHA, ref="refs/heads/feature"),
        push_payload("github", "o/r", url, after=SHA, ref="refs/tags/v1"),
        push_payload("github", "o/r", url, after=SHA, ref="refs/notes/commits"),
    ]
    for payload in cases:
        reply = deliver(rx, "github", payload)
        assert reply.status == 202 and reply.body["status"] == "ignored", reply
        assert reply.body["reason"]
    assert deliver(rx, "github", {"zen": "x"}, event="ping").body == {"status": "pong"}
    assert deliver(rx, "github", {"action": "opened"}, event="issues").body["status"] == "ignored"
    assert store.calls == []


def test_branch_patterns_and_tag_flag() -> None:
    store = FakeStore()
    rx = receiver(store, webhook_branches=["release/*", "main"], webhook_tag_pushes=True)
    url = "https://h/o/r.git"
    for ref in ("refs/heads/release/1.2", "refs/heads/main", "refs/tags/v2"):
        assert (
            deliver(rx, "gitea", push_payload("gitea", "o/r", url, after=SHA, ref=ref)).status
            == 202
        )
    ignored = deliver(
        rx, "gitea", push_payload("gitea", "o/r", url, after=SHA, ref="refs/heads/dev")
    )
    assert ignored.body["status"] == "ignored"
    assert [c["ref"] for c in store.calls] == [
        "refs/heads/release/1.2",
        "refs/heads/main",
        "refs/tags/v2",
    ]


def test_allowlist_is_403_for_other_repositories() -> None:
    store = FakeStore()
    rx = receiver(store, webhook_allowlist=["Org/Allowed"])
    ok = push_payload("github", "org/allowed", "https://h/org/allowed.git", after=SHA)
    other = push_payload("github", "org/other", "https://h/org/other.git", after=SHA)
    assert deliver(rx, "github", ok).status == 202
    assert deliver(rx, "github", other).status == 403
    assert len(store.calls) == 1


@pytest.mark.parametrize(
    "clone_url", ["/srv/repo", "file:///srv/repo", "--upload-pack=touch /tmp/x", "ext::sh -c x"]
)
def test_local_and_hostile_clone_urls_are_refused(clone_url: str) -> None:
    store = FakeStore()
    reply = deliver(receiver(store), "github", push_payload("github", "o/r", clone_url, after=SHA))
    assert reply.status == 400 and store.calls == []


def test_local_sources_when_allowed() -> None:
    store = FakeStore()
    rx = receiver(store, webhook_allow_local_sources=True)
    assert deliver(rx, "github", push_payload("github", "o/r", "/srv/r", after=SHA)).status == 202
    assert deliver(rx, "github", push_payload("github", "o/r", "-x", after=SHA)).status == 400


def test_content_type_and_malformed_bodies() -> None:
    store = FakeStore()
    rx = receiver(store)
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    headers, body = signed_delivery("github", payload, SECRET)
    for ctype in ("application/x-www-form-urlencoded", "text/plain", ""):
        h = lower(headers) | {"content-type": ctype}
        assert rx.receive("github", h, body, now=1.0).status == 415
    h = lower(headers) | {"content-type": "application/json; charset=utf-8"}
    assert rx.receive("github", h, body, now=1.0).status == 202
    for bad in (body[:-5], b"[]", b"\xff", b"{}"):
        headers, _ = signed_delivery("github", bad, SECRET)
        reply = rx.receive("github", lower(headers), bad, now=1.0)
        # {} names no repository: its secret is the default one, then the push lacks fields
        assert reply.status == (400), (bad, reply)
    assert len(store.calls) == 1


def test_hostile_delivery_id_is_400() -> None:
    store = FakeStore()
    payload = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    for delivery in ("x" * 500, "a\nb"):
        assert deliver(receiver(store), "github", payload, delivery=delivery).status == 400
    assert store.calls == []


def test_store_outage_is_503_with_retry_after() -> None:
    store = FakeStore(fail=GraphUnavailable("down"))
    reply = deliver(
        receiver(store), "github", push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    )
    assert reply.status == 503 and reply.headers["Retry-After"]


def test_empty_secrets_are_a_config_error() -> None:
    with pytest.raises(ConfigError):
        WebhookPolicy.from_settings(load_settings(webhook_secrets={"o/r": " "}))
    with pytest.raises(ConfigError):
        WebhookPolicy.from_settings(load_settings(webhook_secret=""))


@settings(max_examples=200, deadline=None)
@given(
    body=st.binary(max_size=512)
    | st.builds(
        lambda d: json.dumps(d).encode(), st.dictionaries(st.text(max_size=8), st.text(max_size=8))
    ),
    signature=st.text(max_size=80),
    host=st.sampled_from(["github", "gitlab", "gitea"]),
)
def test_generated_bodies_and_signatures_never_enqueue(
    body: bytes, signature: str, host: str
) -> None:
    store = FakeStore()
    rx = receiver(store)
    auth = {
        "github": "x-hub-signature-256",
        "gitlab": "x-gitlab-token",
        "gitea": "x-gitea-signature",
    }
    headers = {"content-type": "application/json", auth[host]: signature}
    reply = rx.receive(host, headers, body, now=1.0)
    assert store.calls == []
    assert reply.status in {400, 401}


def test_check_refuses_fields_the_queue_would_refuse_before_any_enqueue() -> None:
    """The web server enqueues in batches: a field the queue refuses must be a 400 of its
    own delivery at check time, never an error for a whole batch."""
    store = FakeStore()
    rx = receiver(store, webhook_branches=["*"])
    url = "https://h/o/r.git"
    long_ref = "refs/heads/" + "b" * 1100
    payload = push_payload("github", "o/r", url, after=SHA, ref=long_ref)
    headers, body = signed_delivery("github", payload, SECRET)
    refused = rx.check("github", lower(headers), body)
    assert isinstance(refused, Reply) and refused.status == 400, refused
    assert "ref" in refused.body["detail"] and store.calls == []
    payload = push_payload("github", "o/r", url, after=SHA)
    headers, body = signed_delivery("github", payload, SECRET, delivery="d9")
    accepted = rx.check("github", lower(headers), body)
    assert isinstance(accepted, Accepted) and store.calls == []  # checked, not yet enqueued
    req = accepted.request
    assert (req.repo_key, req.commit, req.delivery_key) == (f"key:{url}", SHA, "github:d9")
    assert json.loads(req.args) == {"source": url, "ref": "refs/heads/main", "commit": SHA}
