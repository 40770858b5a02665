"""What every route shares: the per-application :class:`WebContext`, the bearer-token
dependencies (``ReadCtx`` and ``ReadCaller`` for reads, ``EnqueueCtx`` (``WriteCtx``) and
``AdminCtx`` for the ``enqueue`` and ``admin`` scopes), :func:`principal_of` (who the
request is, with its repository allowlist), :func:`plain`, the JSON-ready copy of a
store's answer, and :func:`read_limited`, a request body read up to a limit."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import elasticsearch
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from semgraph.config import Settings, is_loopback_host
from semgraph.db import Graph
from semgraph.errors import PayloadError
from semgraph.queue.metrics import publish_stats
from semgraph.queue.store import JobStore
from semgraph.web.batcher import EnqueueBatcher
from semgraph.web.metrics import AUTH_FAILURES, WORKERS_ALIVE
from semgraph.web.tokens import ANONYMOUS, Principal, TokenTable
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
    tokens: TokenTable

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


_bearer = HTTPBearer(
    auto_error=False, description="SEMGRAPH_API_TOKEN or a token of SEMGRAPH_API_TOKENS_FILE"
)

AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "missing, unknown or expired bearer token"},
    403: {
        "description": "the token lacks the scope (or the repository), or no token is configured"
    },
    503: {"description": "a data store is unavailable; retry"},
}

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def context(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.ctx
    return ctx


def _unauthorized() -> HTTPException:
    AUTH_FAILURES.labels(reason="unauthorized").inc()
    return HTTPException(401, "missing, unknown or expired bearer token", _CHALLENGE)


def _forbidden(detail: str) -> HTTPException:
    AUTH_FAILURES.labels(reason="forbidden").inc()
    return HTTPException(403, detail)


def _caller(ctx: WebContext, creds: HTTPAuthorizationCredentials | None) -> Principal | None:
    """The principal of the request's token; None without one; 401 for a wrong one."""
    if creds is None:
        return None
    found = ctx.tokens.lookup(creds.credentials)
    if found is None:
        raise _unauthorized()
    return found


def _local_address(request: Request) -> str:
    server = request.scope.get("server")
    return str(server[0]) if server else ""


def require_read(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> WebContext:
    """The read rule. A token, when given, must be known and carry ``read``.
    Without one a read is served only when reads are opened explicitly
    (``api_read_open``), or when no token is configured at all and the request came in on
    a loopback address. The caller is left in ``request.state.principal``
    (:func:`principal_of`, with its repository allowlist)."""
    ctx = context(request)
    found = _caller(ctx, creds)
    if found is None:
        if ctx.settings.api_read_open:
            found = ANONYMOUS
        elif ctx.tokens.configured:
            raise _unauthorized()
        elif is_loopback_host(_local_address(request)):
            found = ANONYMOUS
        else:
            raise _forbidden(
                "reads without a token are served only on a loopback address: configure a "
                "token (SEMGRAPH_API_TOKEN or SEMGRAPH_API_TOKENS_FILE)"
            )
    elif "read" not in found.scopes:
        raise _forbidden("this token has no read scope")
    request.state.principal = found
    return ctx


def _require_scope(scope: str) -> Callable[..., WebContext]:
    def require(
        request: Request,
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> WebContext:
        ctx = context(request)
        if not ctx.tokens.configured:
            raise _forbidden(
                "this endpoint is disabled: configure SEMGRAPH_API_TOKEN or "
                "SEMGRAPH_API_TOKENS_FILE"
            )
        found = _caller(ctx, creds)
        if found is None:
            raise _unauthorized()
        if scope not in found.scopes:
            raise _forbidden(f"this token has no {scope} scope")
        request.state.principal = found
        return ctx

    require.__name__ = f"require_{scope}"
    return require


def require_metrics(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> WebContext:
    """The metrics rule: a token, when given, must carry ``metrics`` (or
    ``admin``); without one, metrics are served only when no token is configured and the
    request came in on a loopback address. Opened reads (``api_read_open``) do not open them:
    queue depths and request counts are no read of a repository."""
    ctx = context(request)
    found = _caller(ctx, creds)
    if found is None:
        if ctx.tokens.configured:
            raise _unauthorized()
        if not is_loopback_host(_local_address(request)):
            raise _forbidden(
                "metrics without a token are served only on a loopback address: configure a "
                "token with the metrics scope"
            )
        found = ANONYMOUS
    elif not found.scopes & {"metrics", "admin"}:
        raise _forbidden("this token has no metrics scope")
    request.state.principal = found
    return ctx


require_enqueue = _require_scope("enqueue")
require_admin = _require_scope("admin")
require_write = require_enqueue  # the name before scopes: POST /jobs


def principal_of(request: Request) -> Principal:
    """Who the request is, after one of the dependencies above ran: ``.name``, ``.scopes``,
    ``.repos`` (None: every repository), ``.allows(repo_key)``."""
    found: Principal = getattr(request.state, "principal", ANONYMOUS)
    return found


def read_principal(
    request: Request, ctx: Annotated[WebContext, Depends(require_read)]
) -> Principal:
    return principal_of(request)


ReadCtx = Annotated[WebContext, Depends(require_read)]
#: the reader's principal (runs the read rule; FastAPI runs it once per request)
ReadCaller = Annotated[Principal, Depends(read_principal)]
EnqueueCtx = Annotated[WebContext, Depends(require_enqueue)]
AdminCtx = Annotated[WebContext, Depends(require_admin)]
WriteCtx = EnqueueCtx


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


class BodyTooLarge(Exception):
    """A request body over the route's limit (raised before it is read whole)."""


async def read_limited(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than ``limit`` bytes without reading them all."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise PayloadError("malformed Content-Length")
        if int(declared) > limit:
            raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
