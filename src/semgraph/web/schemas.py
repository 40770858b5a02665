"""Response models and the OpenAPI description of the webhook endpoints.

Webhook bodies are read raw (the signature covers the exact bytes), so their request body
and every answer are described here by hand and kept in step with
:mod:`semgraph.web.webhooks` (the schemathesis test checks the served document against the
server's real answers).
"""

from __future__ import annotations

from typing import Any

_REPLY = {
    "type": "object",
    "properties": {
        "status": {"type": "string"},
        "detail": {"type": "string"},
        "reason": {"type": "string"},
        "job_id": {"type": "string"},
        "outcome": {"type": "string"},
        "repo": {"type": "string"},
        "commit": {"type": "string"},
    },
    "required": ["status"],
}


def _reply(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _REPLY}}}


_RESPONSES: dict[str, Any] = {
    "200": _reply("ping answered (status pong)"),
    "202": _reply(
        "push committed to the job queue (status queued, with job_id and outcome created, "
        "coalesced, follow_up or duplicate), or an event not acted on (status ignored, reason)"
    ),
    "400": _reply("malformed JSON, missing fields or a refused clone URL"),
    "401": _reply("missing or invalid signature/token; nothing enqueued"),
    "403": _reply("repository not in the allowlist"),
    "413": _reply("body larger than SEMGRAPH_WEBHOOK_MAX_BODY_BYTES"),
    "415": _reply("content type is not application/json"),
    "503": _reply("the job queue (graph server) is unavailable; retry later"),
}

_HEADERS = {
    "github": (
        ("X-GitHub-Event", "push or ping; other events are ignored"),
        ("X-GitHub-Delivery", "delivery id; a redelivery enqueues nothing new"),
        ("X-Hub-Signature-256", "sha256=<hex HMAC-SHA256 of the raw body>"),
    ),
    "gitlab": (
        ("X-Gitlab-Event", "Push Hook or Tag Push Hook; other events are ignored"),
        ("X-Gitlab-Event-UUID", "delivery id; a redelivery enqueues nothing new"),
        ("X-Gitlab-Token", "the repository's secret token"),
    ),
    "gitea": (
        ("X-Gitea-Event", "push; other events are ignored"),
        ("X-Gitea-Delivery", "delivery id; a redelivery enqueues nothing new"),
        ("X-Gitea-Signature", "<hex HMAC-SHA256 of the raw body>"),
    ),
}


def _operation(host: str) -> dict[str, Any]:
    return {
        "parameters": [
            {
                "name": name,
                "in": "header",
                "required": False,
                "description": text,
                "schema": {"type": "string"},
            }
            for name, text in _HEADERS[host]
        ],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        "responses": _RESPONSES,
    }


WEBHOOK_OPENAPI: dict[str, dict[str, Any]] = {host: _operation(host) for host in _HEADERS}
