"""What every route shares: the per-application :class:`WebContext`, the bearer-token
dependencies (``ReadCtx``, ``WriteCtx``) and :func:`plain`, the JSON-ready copy of a
store's answer."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac
from dataclasses import dataclass
from typing import Annotated, Any

import elasticsearch
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue.metrics import publish_stats
from semgraph.queue.store import JobStore
from semgraph.web.batcher import EnqueueBatcher
from semgraph.web.metrics import WORKERS_ALIVE
from semgraph.web.webhooks import WebhookReceiver


@dataclass
class WebContext:
    """What the request handlers share; one per application."""

    settings: Settings
    graph: Graph
    search: elasticsearch.Elasticsearch
    store: JobStore
    receiver: WebhookReceiver
    batcher: EnqueueBatcher
    owns_connections: bool

    def refresh_gauges(self, now: float) -> None:
        """Bring the queue gauges up to date before a scrape (a global view, from the graph:
        every web replica reports the same values, so alert rules aggregate with ``max``)."""
        stats = self.store.stats(now)
        publish_stats(stats)
        WORKERS_ALIVE.set(stats.workers_alive)

    def close(self) -> None:
        if self.owns_connections:
            self.graph.close()
            self.search.close()


_bearer = HTTPBearer(auto_error=False, description="SEMGRAPH_API_TOKEN")

AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "missing or wrong bearer token"},
    403: {"description": "endpoint disabled: no SEMGRAPH_API_TOKEN configured"},
    503: {"description": "a data store is unavailable; retry"},
}


def context(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.ctx
    return ctx


def _token_ok(given: str, expected: str) -> bool:
    return hmac.compare_digest(
        hashlib.sha256(given.encode("utf-8", "surrogateescape")).digest(),
        hashlib.sha256(expected.encode("utf-8")).digest(),
    )


def _check_token(ctx: WebContext, creds: HTTPAuthorizationCredentials | None) -> None:
    expected = ctx.settings.api_token
    if not expected:
        raise HTTPException(403, "this endpoint is disabled: configure SEMGRAPH_API_TOKEN")
    if creds is None or not _token_ok(creds.credentials, expected):
        raise HTTPException(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})


def require_read(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> WebContext:
    ctx = context(request)
    if not ctx.settings.api_read_open:
        _check_token(ctx, creds)
    return ctx


def require_write(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> WebContext:
    ctx = context(request)
    _check_token(ctx, creds)
    return ctx


ReadCtx = Annotated[WebContext, Depends(require_read)]
WriteCtx = Annotated[WebContext, Depends(require_write)]


def plain(value: Any) -> Any:
    """A JSON-ready copy of a manager's return value (dataclasses, enums, models, dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return plain(value.model_dump())
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
