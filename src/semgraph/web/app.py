"""The FastAPI application: webhooks, health, metrics and the HTTP API.

``create_app(settings)`` builds everything from the settings object (nothing is read at
import time). Routes raise semgraph errors; they become HTTP answers in one place
(:func:`_install_error_handlers`, one table from error type to status, ``{"detail": ...}``):
invalid input is 400 (422 when a field does not validate: where and why, never the input),
something that does not exist 404, an unreachable or conflicting store
503 with ``Retry-After`` so clients retry, any other store failure 502.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import elasticsearch
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from semgraph.config import Settings
from semgraph.db import Graph, connect_graph, connect_search
from semgraph.errors import (
    GraphConflict,
    GraphInputError,
    GraphUnavailable,
    JobError,
    JobNotFound,
    PayloadError,
    QueueError,
    RunNotFound,
    SearchNotIndexed,
    SearchQueryError,
    SearchUnavailable,
    SemgraphError,
    ShuttingDown,
    SourceConflict,
    StoreError,
)
from semgraph.indexer.sources import repo_key_for as default_repo_key_for
from semgraph.logs import event
from semgraph.mcp.http import MCP_METHODS, McpHttp
from semgraph.queue.models import EnqueueRequest, EnqueueResult
from semgraph.queue.store import JobStore
from semgraph.repos.listing import keys_named
from semgraph.web import api, localize_api, read_api, repos_api, search_api
from semgraph.web.batcher import EnqueueBatcher
from semgraph.web.console import mount as mount_console
from semgraph.web.context import BodyTooLarge, WebContext, read_limited, require_read
from semgraph.web.edge import AuditLog, WebhookOnlyGate, announce_exposure, install_openapi
from semgraph.web.limits import WebhookLimits
from semgraph.web.metrics import (
    HTTP_REQUESTS,
    WEBHOOK_ACK_SECONDS,
    WEBHOOK_PHASE_SECONDS,
    WEBHOOKS_IN_FLIGHT,
)
from semgraph.web.policy import WebhookPolicy
from semgraph.web.read_guard import ReadLimiter, admit_caller
from semgraph.web.schemas import WEBHOOK_OPENAPI
from semgraph.web.tokens import TokenTable
from semgraph.web.webhooks import RETRY_AFTER_S, Reply, WebhookReceiver

log = logging.getLogger(__name__)

#: bodies up to this size are checked (HMAC, JSON) on the event loop, larger ones in a thread
INLINE_CHECK_MAX_BYTES = 256 * 1024


def _webhook_route(host: str) -> Callable[[Request], Any]:
    async def receive(request: Request) -> Response:
        WEBHOOKS_IN_FLIGHT.inc()
        try:
            reply = await _deliver(host, request)
        finally:
            WEBHOOKS_IN_FLIGHT.dec()
        return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

    receive.__name__ = f"webhook_{host}"
    return receive


async def _deliver(host: str, request: Request) -> Reply:
    """Read, check, enqueue (group commit) and answer one delivery."""
    ctx: WebContext = request.app.state.ctx
    started = time.perf_counter()
    limit = ctx.settings.webhook_max_body_bytes
    try:
        body = await read_limited(request, limit)
    except BodyTooLarge:
        detail = f"body exceeds {limit} bytes"
        return ctx.receiver.count(host, Reply(413, {"status": "too_large", "detail": detail}))
    except PayloadError as exc:
        return ctx.receiver.count(
            host, Reply(400, {"status": "bad_request", "detail": exc.message})
        )
    now = time.time()
    checked = time.perf_counter()
    WEBHOOK_PHASE_SECONDS.labels(phase="body").observe(checked - started)
    headers = {k.lower(): v for k, v in request.headers.items()}
    if len(body) <= INLINE_CHECK_MAX_BYTES:  # microseconds: cheaper than a thread hop
        decision = ctx.receiver.check(host, headers, body)
    else:
        decision = await run_in_threadpool(ctx.receiver.check, host, headers, body)
    WEBHOOK_PHASE_SECONDS.labels(phase="check").observe(time.perf_counter() - checked)
    if isinstance(decision, Reply):
        reply = ctx.receiver.count(host, decision)
    else:
        try:
            result = await ctx.batcher.submit(decision.request, now=now)
        except (StoreError, ShuttingDown) as exc:
            reply = ctx.receiver.unavailable(decision, exc)
        else:
            reply = ctx.receiver.accepted(decision, result)
    WEBHOOK_ACK_SECONDS.labels(host=host).observe(time.perf_counter() - started)
    return reply


class _CountRequests:
    """Count every answer by route template (never the raw path: bounded label values). A
    plain ASGI middleware: Starlette's ``BaseHTTPMiddleware`` costs a task and a stream per
    request, which showed in the webhook burst."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # an exception before the response started

        async def send_counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        finally:
            template = getattr(scope.get("route"), "path", None) or "unmatched"
            HTTP_REQUESTS.labels(route=template, status=str(status)).inc()


@dataclass(frozen=True)
class ErrorAnswer:
    status: int
    max_chars: int | None = None  # the detail's bound, for messages that may echo an input


#: the HTTP answer to a semgraph error a route raises: the entry of the error's most specific
#: class; a store error without an entry is 503 (retryable) or 502 (:func:`_store_error`)
ERROR_ANSWERS: dict[type[SemgraphError], ErrorAnswer] = {
    PayloadError: ErrorAnswer(400),  # a malformed request body or field
    GraphInputError: ErrorAnswer(400),  # a code-graph query's input
    SearchQueryError: ErrorAnswer(400),  # a search query's input
    QueueError: ErrorAnswer(400, 300),  # a field the job queue refuses
    SourceConflict: ErrorAnswer(409, 600),  # the repository is recorded with another source
    JobError: ErrorAnswer(400, 300),  # an unusable repository source
    JobNotFound: ErrorAnswer(404),
    RunNotFound: ErrorAnswer(404),
    SearchNotIndexed: ErrorAnswer(404),
}
_RETRYABLE = (GraphUnavailable, GraphConflict, SearchUnavailable)


def _answer_for(exc: SemgraphError) -> ErrorAnswer | None:
    return next((ERROR_ANSWERS[c] for c in type(exc).__mro__ if c in ERROR_ANSWERS), None)


def _store_error(request: Request, exc: StoreError) -> Response:
    if isinstance(exc, _RETRYABLE):
        # bounded: a store's reason may quote the request (a search's query)
        event(log, logging.WARNING, "http_store_unavailable", str(exc)[:300], path=request.url.path)
        return JSONResponse(
            {"detail": "a data store is unavailable; retry"},
            status_code=503,
            headers={"Retry-After": RETRY_AFTER_S},
        )
    event(log, logging.ERROR, "http_store_error", str(exc)[:300], path=request.url.path)
    return JSONResponse({"detail": "a data store rejected the request"}, status_code=502)


def _install_error_handlers(app: FastAPI) -> None:
    async def semgraph_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SemgraphError)
        answer = _answer_for(exc)
        if answer is None:
            assert isinstance(exc, StoreError)  # the only other class registered below
            return _store_error(request, exc)
        detail = exc.message if answer.max_chars is None else exc.message[: answer.max_chars]
        return JSONResponse({"detail": detail}, status_code=answer.status)

    for error in (*ERROR_ANSWERS, StoreError):
        app.add_exception_handler(error, semgraph_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)


#: what a 422 keeps of each validation error: never ``input`` (a 32 kB query came back whole)
VALIDATION_KEYS = ("type", "loc", "msg")


async def _invalid_request(request: Request, exc: Exception) -> Response:
    """FastAPI's 422 without the offending input (or its context): just where and why."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {key: error[key] for key in VALIDATION_KEYS if key in error} for error in exc.errors()
    ]
    for error in errors:
        error["msg"] = str(error.get("msg", ""))[:300]
    return JSONResponse({"detail": jsonable_encoder(errors)}, status_code=422)


def _commit(store: JobStore, requests: Sequence[EnqueueRequest], now: float) -> list[EnqueueResult]:
    return store.enqueue_many(requests, now=now)


def create_app(
    settings: Settings,
    *,
    graph: Graph | None = None,
    search: elasticsearch.Elasticsearch | None = None,
    store: JobStore | None = None,
    repo_key_for: Callable[[str], str] | None = None,
) -> FastAPI:
    """The web application. Connections are made from ``settings`` unless passed in."""
    policy = WebhookPolicy.from_settings(settings)
    owns = graph is None and search is None
    graph = graph or connect_graph(settings)
    search = search or connect_search(settings)
    store = store or JobStore(graph, settings)
    if repo_key_for is None:
        repo_key_for = default_repo_key_for
    batcher = EnqueueBatcher(
        partial(_commit, store),
        window_s=settings.webhook_batch_window_s,
        max_requests=settings.webhook_batch_max_requests,
    )
    receiver = WebhookReceiver(policy, repo_key_for, partial(keys_named, graph))
    tokens = TokenTable(settings)  # a bad tokens file is a ConfigError here, before serving
    ctx = WebContext(settings, graph, search, store, receiver, batcher, owns, tokens)
    mcp_http = McpHttp(settings, graph, search, store)  # the agent interface

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        event(log, logging.INFO, "web_start", host=settings.web_host, port=settings.web_port)
        announce_exposure(settings, tokens)
        async with mcp_http.running():
            yield
        await ctx.batcher.close()  # after uvicorn drained in-flight requests
        ctx.close()
        event(log, logging.INFO, "web_stop", "stopped: connections closed")

    app = FastAPI(
        title="semgraph",
        version="0.1.0",
        summary="Webhooks and the HTTP API of semgraph (code graph + semantic code search).",
        lifespan=lifespan,
        # closed by default: no interactive docs (their assets come from a CDN),
        # and the API description behind the read rule (semgraph.web.edge.install_openapi)
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.ctx = ctx
    app.state.read_limiter = ReadLimiter(settings)  # per-token limits of the costly reads
    for host in ("github", "gitlab", "gitea"):
        app.add_api_route(
            f"/webhooks/{host}",
            _webhook_route(host),
            methods=["POST"],
            tags=["webhooks"],
            summary=f"{host.capitalize()} push webhook",
            response_class=JSONResponse,
            openapi_extra=WEBHOOK_OPENAPI[host],
        )
    _install_error_handlers(app)
    app.add_middleware(_CountRequests)
    app.add_middleware(AuditLog)
    app.add_middleware(WebhookLimits, settings=settings)
    app.add_middleware(WebhookOnlyGate, webhook_port=settings.webhook_port)
    app.include_router(api.router)
    app.include_router(read_api.router)
    app.include_router(search_api.router)
    app.include_router(localize_api.router)
    app.include_router(repos_api.router)
    mcp_route = mcp_http.endpoint(require_read, admit_caller)
    app.add_api_route("/mcp", mcp_route, methods=MCP_METHODS, include_in_schema=False)
    mount_console(app, ctx)  # the web console: its own modules
    install_openapi(app, settings)
    return app
