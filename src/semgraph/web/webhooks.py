"""Turning one webhook delivery into at most one committed job, or a clear refusal.

The order of checks is fixed so that nothing is enqueued, and nothing about a secret is
revealed, unless the delivery is authentic: content type (415), signature header present
(401), JSON object (400), the repository's secret verifies (401), allowlist (403), event
kind and policy (202 ``ignored`` with a reason), fields we act on (400), then the enqueue,
which commits before we answer 202 (a graph outage is 503, so the host retries). The web
server commits the enqueues of concurrent deliveries together (:mod:`semgraph.web.batcher`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from semgraph.errors import JobError, PayloadError, QueueInputError
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.sources import normalize_source
from semgraph.logs import event
from semgraph.queue.enqueue import enqueue_request
from semgraph.queue.models import EnqueueRequest
from semgraph.repos.removal import removal_request
from semgraph.web import signatures
from semgraph.web.metrics import WEBHOOK_DELIVERIES
from semgraph.web.payloads import (
    Ignored,
    Ping,
    PushEvent,
    RepoDeleted,
    decode_json,
    parse_event,
    repo_identity,
)
from semgraph.web.policy import WebhookPolicy

log = logging.getLogger(__name__)

MAX_DELIVERY_ID_CHARS = 200
RETRY_AFTER_S = "5"
UNAUTHORIZED = "invalid or missing webhook signature"


@dataclass(frozen=True)
class HostHeaders:
    event: tuple[str, ...]
    delivery: tuple[str, ...]
    auth: str


HOST_HEADERS: dict[str, HostHeaders] = {
    "github": HostHeaders(("x-github-event",), ("x-github-delivery",), "x-hub-signature-256"),
    "gitlab": HostHeaders(
        ("x-gitlab-event",), ("x-gitlab-event-uuid", "idempotency-key"), "x-gitlab-token"
    ),
    "gitea": HostHeaders(
        ("x-gitea-event", "x-gogs-event"),
        ("x-gitea-delivery", "x-gogs-delivery"),
        "x-gitea-signature",
    ),
}


class EnqueueResultLike(Protocol):
    @property
    def job_id(self) -> str: ...

    @property
    def outcome(self) -> str: ...

    @property
    def detail(self) -> str | None: ...


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, JSON body, extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def _header(headers: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = headers.get(name)
        if value:
            return value
    return None


def _authentic(host: str, body: bytes, given: str, secret: str) -> bool:
    if host == "github":
        return signatures.verify_github(body, given, secret)
    if host == "gitea":
        return signatures.verify_gitea(body, given, secret)
    return signatures.verify_gitlab(given, secret)


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


@dataclass(frozen=True)
class Accepted:
    """A delivery that passed every check: the validated enqueue, and what to answer with."""

    push: PushEvent | RepoDeleted
    source: str
    repo_key: str
    request: EnqueueRequest


class WebhookReceiver:
    """Checks one delivery and answers it (headers are lower-cased by the caller).

    The web server (:func:`semgraph.web.app._deliver`) calls :meth:`check`, enqueues the
    accepted push through its group-commit batcher, then answers with :meth:`accepted` or
    :meth:`unavailable`; every answer is counted once with :meth:`count`.
    """

    def __init__(
        self,
        policy: WebhookPolicy,
        repo_key_for: Callable[[str], str],
        locate: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.policy = policy
        self.repo_key_for = repo_key_for
        self.locate = locate  # full name -> known keys (a GitLab project_destroy has no URL)

    @staticmethod
    def count(host: str, reply: Reply) -> Reply:
        outcome = str(reply.body.get("outcome") or reply.body.get("status"))
        WEBHOOK_DELIVERIES.labels(host=host, outcome=outcome).inc()
        return reply

    def check(self, host: str, headers: Mapping[str, str], body: bytes) -> Reply | Accepted:
        """Every check before the enqueue: a refusal or ``ignored`` as a :class:`Reply`
        (not yet counted), else what to enqueue."""
        names = HOST_HEADERS[host]
        if not _is_json(headers.get("content-type")):
            return Reply(
                415,
                {
                    "status": "unsupported_type",
                    "detail": "send the webhook as application/json",
                },
            )
        given = headers.get(names.auth)
        if not given:
            return self._unauthorized(host, None, "signature header missing")
        try:
            data = decode_json(body)
        except PayloadError as exc:
            return Reply(400, {"status": "bad_request", "detail": exc.message})
        identity = repo_identity(host, data)
        secret = self.policy.secret_for(identity)
        if secret is None or not _authentic(host, body, given, secret):
            why = "no secret configured" if secret is None else "signature mismatch"
            return self._unauthorized(host, identity.full_name, why)
        if not self.policy.allowed(identity):
            event(log, logging.WARNING, "webhook_forbidden", repo=identity.full_name, host=host)
            return Reply(403, {"status": "forbidden", "detail": "repository is not allowed"})
        delivery = _header(headers, names.delivery)
        if delivery is not None and (
            len(delivery) > MAX_DELIVERY_ID_CHARS or not delivery.isprintable()
        ):
            return Reply(400, {"status": "bad_request", "detail": "malformed delivery id"})
        try:
            hook = parse_event(host, _header(headers, names.event), data)
            if isinstance(hook, Ping):
                return Reply(200, {"status": "pong"})
            if isinstance(hook, Ignored):
                return self._ignored(host, identity.full_name, hook.reason)
            if isinstance(hook, RepoDeleted):
                return self._removal(hook, delivery)
            reason = self.policy.ignore_reason(hook)
            if reason is not None:
                return self._ignored(host, hook.full_name, reason)
            source = self.policy.source_for(hook)
        except PayloadError as exc:
            return Reply(400, {"status": "bad_request", "detail": exc.message})
        return self._request(hook, source, delivery)

    def _request(self, push: PushEvent, source: str, delivery: str | None) -> Reply | Accepted:
        try:
            repo_key = self.repo_key_for(source)
            request = enqueue_request(
                repo_key,
                kind="reindex",
                args=ReindexArgs(source, push.ref, push.commit).to_json(),
                ref=push.ref,
                commit=push.commit,
                delivery_key=f"{push.host}:{delivery}" if delivery else None,
                source=normalize_source(source),
                host=push.host,
                default_branch=push.default_branch,
            )
        except (JobError, QueueInputError, ValueError) as exc:  # a bad source or a refused field
            return Reply(400, {"status": "bad_request", "detail": str(exc)[:300]})
        return Accepted(push, source, repo_key, request)

    def _removal(self, deleted: RepoDeleted, delivery: str | None) -> Reply | Accepted:
        """A repository-deleted event: the ``remove`` job when the policy allows it."""
        if not self.policy.remove_on_delete:
            reason = "repository deletions are not acted on (SEMGRAPH_WEBHOOK_REMOVE_ON_DELETE)"
            return self._ignored(deleted.host, deleted.full_name, reason)
        try:
            if deleted.clone_url is not None:
                source = self.policy.source_for_url(deleted.clone_url)
                keys = [self.repo_key_for(source)]
            else:
                source = deleted.full_name
                keys = self.locate(deleted.full_name) if self.locate else []
            if len(keys) != 1:
                many = f"{len(keys)} known repositories are" if keys else "no known repository is"
                reason = f"{many} named {deleted.full_name[:200]!r}"
                return self._ignored(deleted.host, deleted.full_name, reason)
            request = removal_request(
                keys[0],
                requested_by=f"webhook:{deleted.host}",
                delivery_key=f"{deleted.host}:{delivery}" if delivery else None,
            )
        except (JobError, QueueInputError, ValueError) as exc:
            return Reply(400, {"status": "bad_request", "detail": str(exc)[:300]})
        return Accepted(deleted, source, keys[0], request)

    def unavailable(self, accepted: Accepted, exc: Exception) -> Reply:
        """The 503 for a push that was not stored (the host retries)."""
        push = accepted.push
        event(
            log,
            logging.ERROR,
            "webhook_store_unavailable",
            str(exc),
            repo=push.full_name,
            host=push.host,
        )
        reply = Reply(
            503,
            {"status": "unavailable", "detail": "the job queue is unavailable; retry"},
            {"Retry-After": RETRY_AFTER_S},
        )
        return self.count(push.host, reply)

    def accepted(self, accepted: Accepted, result: EnqueueResultLike) -> Reply:
        """The 202 for a push whose job is committed (409 when the queue refused it: the
        repository is recorded with another source)."""
        push = accepted.push
        if result.outcome == "refused":
            event(
                log,
                logging.WARNING,
                "webhook_refused",
                result.detail or "",
                repo=accepted.repo_key,
                host=push.host,
                commit=push.commit,
            )
            refusal = Reply(409, {"status": "refused", "detail": (result.detail or "")[:600]})
            return self.count(push.host, refusal)
        event(
            log,
            logging.INFO,
            "webhook_enqueued",
            job_id=result.job_id,
            repo=accepted.repo_key,
            host=push.host,
            outcome=result.outcome,
            commit=push.commit,
        )
        reply = Reply(
            202,
            {
                "status": "queued",
                "job_id": result.job_id,
                "outcome": result.outcome,
                "repo": accepted.repo_key,
                "commit": push.commit,
            },
        )
        return self.count(push.host, reply)

    @staticmethod
    def _unauthorized(host: str, repo: str | None, why: str) -> Reply:
        event(log, logging.WARNING, "webhook_unauthorized", why, repo=repo, host=host)
        return Reply(401, {"status": "unauthorized", "detail": UNAUTHORIZED})

    @staticmethod
    def _ignored(host: str, repo: str | None, reason: str) -> Reply:
        event(log, logging.INFO, "webhook_ignored", reason, repo=repo, host=host)
        return Reply(202, {"status": "ignored", "reason": reason})
