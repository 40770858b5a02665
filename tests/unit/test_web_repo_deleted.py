"""Repository-deleted events of the three hosts: parsed strictly into ``RepoDeleted``, and
turned by the receiver into a ``remove`` request only when the policy allows it, after the
same signature and allowlist checks as a push (the real queue: tests/integration/
test_web_repos.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from semgraph.config import load_settings
from semgraph.errors import PayloadError
from semgraph.web.fixtures import signed_delivery
from semgraph.web.payloads import Ignored, RepoDeleted, parse_event
from semgraph.web.policy import WebhookPolicy
from semgraph.web.webhooks import Accepted, Reply, WebhookReceiver

SECRET = "s3cret"
URL = "https://h.example/team/app.git"


def _payload(host: str, name: str = "team/app", url: str = URL) -> tuple[dict[str, Any], str]:
    if host == "gitlab":
        return {"event_name": "project_destroy", "path_with_namespace": name}, "System Hook"
    return {"action": "deleted", "repository": {"full_name": name, "clone_url": url}}, "repository"


@pytest.mark.parametrize("host", ["github", "gitea", "gitlab"])
def test_deleted_events_parse(host: str) -> None:
    payload, event = _payload(host)
    hook = parse_event(host, event, payload)
    assert isinstance(hook, RepoDeleted)
    assert (hook.host, hook.full_name) == (host, "team/app")
    assert hook.clone_url == (None if host == "gitlab" else URL)


@pytest.mark.parametrize(
    ("host", "event", "payload"),
    [
        ("github", "repository", {"action": "created", "repository": {"full_name": "a/b"}}),
        ("github", "repository", {"action": "renamed"}),
        ("gitea", "repository", {"action": "created"}),
        ("gitlab", "System Hook", {"event_name": "project_create"}),
        ("gitlab", "Push Hook", {"event_name": "project_destroy"}),
    ],
)
def test_other_repository_events_are_ignored(host: str, event: str, payload: Any) -> None:
    assert isinstance(parse_event(host, event, payload), Ignored)


@pytest.mark.parametrize(
    ("host", "payload"),
    [
        ("github", {"action": "deleted"}),
        ("github", {"action": "deleted", "repository": {"full_name": "a/b"}}),
        ("gitea", {"action": "deleted", "repository": {"full_name": 3, "clone_url": URL}}),
        ("github", {"action": "deleted", "repository": {"full_name": "a\nb", "clone_url": URL}}),
        ("gitlab", {"event_name": "project_destroy"}),
        ("gitlab", {"event_name": "project_destroy", "path_with_namespace": "x" * 600}),
    ],
)
def test_deleted_events_missing_what_we_act_on_are_refused(host: str, payload: Any) -> None:
    event = "System Hook" if host == "gitlab" else "repository"
    with pytest.raises(PayloadError):
        parse_event(host, event, payload)


def _receiver(**overrides: Any) -> WebhookReceiver:
    cfg = load_settings(webhook_secret=SECRET, **overrides)
    known = {"team/app": ["app-1234"], "team/twice": ["a-1", "b-2"]}
    return WebhookReceiver(
        WebhookPolicy.from_settings(cfg), lambda s: "key:" + s, lambda n: known.get(n, [])
    )


def _check(rx: WebhookReceiver, host: str, payload: Any, event: str, secret: str = SECRET) -> Any:
    headers, body = signed_delivery(host, payload, secret, event=event, delivery="d1")
    return rx.check(host, {k.lower(): v for k, v in headers.items()}, body)


@pytest.mark.parametrize("host", ["github", "gitea", "gitlab"])
def test_the_receiver_requests_a_removal_only_when_allowed(host: str) -> None:
    payload, event = _payload(host)
    off = _check(_receiver(), host, payload, event)
    assert isinstance(off, Reply) and (off.status, off.body["status"]) == (202, "ignored")
    forged = _check(_receiver(webhook_remove_on_delete=True), host, payload, event, "wrong")
    assert isinstance(forged, Reply) and forged.status == 401
    fenced = _check(
        _receiver(webhook_remove_on_delete=True, webhook_allowlist=["other/repo"]),
        host,
        payload,
        event,
    )
    assert isinstance(fenced, Reply) and fenced.status == 403
    on = _check(_receiver(webhook_remove_on_delete=True), host, payload, event)
    assert isinstance(on, Accepted), on
    expected = "app-1234" if host == "gitlab" else f"key:{URL}"
    assert (on.repo_key, on.request.kind, on.request.delivery_key) == (
        expected,
        "remove",
        f"{host}:d1",
    )
    assert json.loads(on.request.args)["requested_by"] == f"webhook:{host}"


def test_a_gitlab_name_that_is_unknown_or_ambiguous_is_ignored() -> None:
    rx = _receiver(webhook_remove_on_delete=True)
    for name, words in (("team/none", "no known repository"), ("team/twice", "2 known")):
        reply = _check(rx, "gitlab", *_payload("gitlab", name))
        assert isinstance(reply, Reply) and reply.body["status"] == "ignored"
        assert words in reply.body["reason"]


def test_a_local_or_option_like_clone_url_is_refused() -> None:
    rx = _receiver(webhook_remove_on_delete=True)
    for url in ("file:///etc", "-oProxyCommand=x", "/srv/git/app"):
        reply = _check(rx, "github", *_payload("github", url=url))
        assert isinstance(reply, Reply) and reply.status == 400, (url, reply)
