from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.errors import PayloadError
from semgraph.web.fixtures import ZERO, push_payload
from semgraph.web.payloads import (
    Ignored,
    Ping,
    PushEvent,
    decode_json,
    parse_event,
    repo_identity,
)

SHA = "a" * 40
EVENTS = {"github": "push", "gitlab": "Push Hook", "gitea": "push"}


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_push_of_each_host_parses_to_one_shape(host: str) -> None:
    data = push_payload(host, "org/repo", "https://git.example/org/repo.git", after=SHA)
    hook = parse_event(host, EVENTS[host], data)
    assert isinstance(hook, PushEvent)
    assert (hook.full_name, hook.clone_url, hook.ref, hook.commit) == (
        "org/repo",
        "https://git.example/org/repo.git",
        "refs/heads/main",
        SHA,
    )
    assert hook.branch == "main" and hook.tag is None and not hook.deleted
    assert hook.default_branch == "main"
    ident = repo_identity(host, data)
    assert ident.full_name == "org/repo" and "https://git.example/org/repo.git" in ident.urls


@pytest.mark.parametrize("host", ["github", "gitlab", "gitea"])
def test_deletion_and_tags_are_recognised(host: str) -> None:
    deleted = parse_event(
        host, EVENTS[host], push_payload(host, "o/r", "https://h/o/r.git", after=ZERO)
    )
    assert isinstance(deleted, PushEvent) and deleted.deleted
    event = "Tag Push Hook" if host == "gitlab" else EVENTS[host]
    tag = parse_event(
        host, event, push_payload(host, "o/r", "https://h/o/r.git", after=SHA, ref="refs/tags/v1")
    )
    assert isinstance(tag, PushEvent) and tag.tag == "v1" and tag.branch is None


def test_ping_and_other_events() -> None:
    assert parse_event("github", "ping", {"zen": "hi"}) == Ping("github")
    assert isinstance(parse_event("github", "issues", {}), Ignored)
    assert isinstance(parse_event("gitea", "create", {}), Ignored)
    assert isinstance(parse_event("gitlab", "Merge Request Hook", {}), Ignored)
    assert isinstance(parse_event("gitlab", "Push Hook", {"object_kind": "build"}), Ignored)
    assert isinstance(parse_event("github", None, {}), Ignored)


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: d.pop("ref"), "ref"),
        (lambda d: d.update(ref="main"), "full ref"),
        (lambda d: d.update(ref=["refs/heads/main"]), "ref"),
        (lambda d: d.update(after="xyz"), "commit"),
        (lambda d: d.update(after=12), "after"),
        (lambda d: d.pop("repository"), "repository"),
        (lambda d: d["repository"].pop("clone_url"), "clone_url"),
        (lambda d: d["repository"].update(full_name=None), "full_name"),
        (lambda d: d["repository"].update(full_name="o/r\n"), "control"),
        (lambda d: d["repository"].update(full_name="x" * 600), "too long"),
    ],
)
def test_missing_or_wrong_fields_are_payload_errors(
    mutate: Callable[[dict[str, Any]], object], fragment: str
) -> None:
    data = push_payload("github", "o/r", "https://h/o/r.git", after=SHA)
    mutate(data)
    with pytest.raises(PayloadError, match=fragment):
        parse_event("github", "push", data)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b'{"ref": "refs/heads/main"',
        b"[1, 2]",
        b'"text"',
        b"null",
        b"\xff\xfe{}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a": NaN',
    ],
)
def test_decode_json_rejects_non_objects(body: bytes) -> None:
    with pytest.raises(PayloadError):
        decode_json(body)


@settings(max_examples=300, deadline=None)
@given(
    data=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
        max_leaves=20,
    )
)
def test_arbitrary_json_either_parses_or_is_a_payload_error(data: object) -> None:
    body = json.dumps(data).encode()
    for host, event in EVENTS.items():
        try:
            obj = decode_json(body)
            repo_identity(host, obj)
            parse_event(host, event, obj)
        except PayloadError:
            pass
