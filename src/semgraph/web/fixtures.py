"""Realistic push deliveries of the three hosts, for tests, benchmarks and smoke checks.

Each builder returns ``(headers, body)`` exactly as the host would send them, signed with
``secret`` (the real signing code, so a test that uses a wrong secret really fails).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from semgraph.web.server import server_config
from semgraph.web.signatures import sign_gitea, sign_github

ZERO = "0" * 40


def push_payload(
    host: str,
    full_name: str,
    clone_url: str,
    *,
    after: str,
    ref: str = "refs/heads/main",
    default_branch: str = "main",
    before: str = ZERO,
) -> dict[str, Any]:
    """The fields each host really sends in a push (trimmed to what matters plus noise)."""
    if host == "gitlab":
        return {
            "object_kind": "tag_push" if ref.startswith("refs/tags/") else "push",
            "event_name": "push",
            "before": before,
            "after": after,
            "ref": ref,
            "checkout_sha": None if after == ZERO else after,
            "user_name": "Dev",
            "project": {
                "path_with_namespace": full_name,
                "git_http_url": clone_url,
                "git_ssh_url": f"git@gitlab.example:{full_name}.git",
                "web_url": f"https://gitlab.example/{full_name}",
                "default_branch": default_branch,
            },
            "commits": [{"id": after, "message": "change"}],
            "total_commits_count": 1,
        }
    repo = {
        "full_name": full_name,
        "name": full_name.rsplit("/", 1)[-1],
        "clone_url": clone_url,
        "ssh_url": f"git@{host}.example:{full_name}.git",
        "html_url": f"https://{host}.example/{full_name}",
        "default_branch": default_branch,
        "private": False,
    }
    body: dict[str, Any] = {
        "ref": ref,
        "before": before,
        "after": after,
        "repository": repo,
        "pusher": {"name": "dev", "email": "dev@example.com"},
        "commits": [{"id": after, "message": "change"}],
    }
    if host == "github":
        body.update(
            {"created": before == ZERO, "deleted": after == ZERO, "forced": False, "compare": ""}
        )
    return body


def signed_delivery(
    host: str,
    payload: dict[str, Any] | bytes,
    secret: str,
    *,
    event: str | None = None,
    delivery: str | None = None,
) -> tuple[dict[str, str], bytes]:
    """Headers and raw body of one delivery, authenticated the way ``host`` does it."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    delivery = delivery or str(uuid.uuid4())
    headers = {"Content-Type": "application/json", "User-Agent": f"{host}-hookshot/test"}
    if host == "github":
        headers |= {
            "X-GitHub-Event": event or "push",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign_github(body, secret),
        }
    elif host == "gitlab":
        headers |= {
            "X-Gitlab-Event": event or "Push Hook",
            "X-Gitlab-Event-UUID": delivery,
            "X-Gitlab-Token": secret,
        }
    else:
        headers |= {
            "X-Gitea-Event": event or "push",
            "X-Gitea-Delivery": delivery,
            "X-Gitea-Signature": sign_gitea(body, secret),
        }
    return headers, body


@contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Run ``app`` on uvicorn in a background thread on a free port; yields its base URL."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port = sock.getsockname()[1]
    config = server_config(app, host, port)
    config.lifespan = "on"
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="semgraph-web-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
