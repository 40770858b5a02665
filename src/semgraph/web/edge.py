"""The edge of the application: two small ASGI middlewares, what start-up announces and
what the OpenAPI document says about tokens.

:class:`AuditLog` writes one line (action ``api_audit``) for every mutating API call: who
(the token's name, never the token), what (method, route, path, status) and when; and one
(``api_read``) for every read the read rule let through: who, route, repository, status and
bytes, never the query string. Webhook
deliveries are logged by the receiver instead. :class:`WebhookOnlyGate` makes the second
listener (``webhook_port``) answer only ``/webhooks/*``, ``/healthz`` and ``/readyz``;
everything else there is 404, as if it did not exist. :func:`announce_exposure` says at
start what reads need (a WARNING while they are open) and sets ``semgraph_api_reads_open``.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from semgraph.config import Settings
from semgraph.logs import event
from semgraph.web.context import WebContext, require_read
from semgraph.web.metrics import API_READS_OPEN
from semgraph.web.tokens import TokenTable

log = logging.getLogger(__name__)

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WEBHOOK_ONLY_PATHS = ("/healthz", "/readyz")


class AuditLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = str(scope.get("method", ""))
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith("/webhooks/"):
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        status, size = 500, 0
        when = datetime.now(UTC).isoformat(timespec="milliseconds")

        async def send_seen(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_seen)
        finally:
            path = _CONTROL.sub("?", path[:300])  # a decoded path: no line breaks in the log
            principal = state.get("principal")
            who = getattr(principal, "name", None) or "unauthenticated"
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            client = scope.get("client")
            if method in READ_METHODS:
                if principal is not None:  # a read the read rule let through
                    _read_line(scope, who, method, route, path, status, size)
            else:
                _write_line(who, method, route, path, status, when, client)


def _write_line(
    who: str, method: str, route: str, path: str, status: int, when: str, client: Any
) -> None:
    """One ``api_audit`` line: a mutating call."""
    event(
        log,
        logging.INFO,
        "api_audit",
        f"{who} {method} {path} -> {status}",
        who=who,
        method=method,
        route=route,
        path=path,
        status=status,
        at=when,
        client=str(client[0]) if client else None,
    )


def _read_line(
    scope: Scope, who: str, method: str, route: str, path: str, status: int, size: int
) -> None:
    """One ``api_read`` line: who read which route of which repository, and how many bytes;
    never the query string (a search text), only its ``repo``."""
    params = scope.get("path_params") or {}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    repo = params.get("key") or params.get("repo") or (query.get("repo") or [None])[0]
    event(
        log,
        logging.INFO,
        "api_read",
        f"{who} {method} {path} -> {status}",
        who=who,
        method=method,
        route=route,
        path=path,
        repo=_CONTROL.sub("?", str(repo)[:512]) if repo else None,
        status=status,
        bytes=size,
    )


class WebhookOnlyGate:
    def __init__(self, app: ASGIApp, webhook_port: int | None) -> None:
        self.app = app
        self.port = webhook_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.port is not None and scope["type"] in ("http", "websocket"):
            server = scope.get("server")
            path = str(scope.get("path", ""))
            allowed = path.startswith("/webhooks/") or path in WEBHOOK_ONLY_PATHS
            if server and server[1] == self.port and not allowed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                body = json.dumps({"detail": "Not Found"}).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 404, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def reads_optional(settings: Settings) -> bool:
    """Whether a read may come without a token (open reads, or no token configured: then
    reads are served on loopback addresses only)."""
    return settings.api_read_open or not (settings.api_token or settings.api_tokens_file)


def announce_exposure(settings: Settings, tokens: TokenTable) -> None:
    API_READS_OPEN.set(1 if settings.api_read_open else 0)
    if settings.api_read_open:
        event(
            log,
            logging.WARNING,
            "api_reads_open",
            "SEMGRAPH_API_READ_OPEN is set: search, graph, jobs and runs (indexed source code) "
            "answer anyone who reaches this server, without a token",
        )
    reads = "need a token" if tokens.configured else "loopback only"
    if settings.api_read_open:
        reads = "open"
    event(
        log,
        logging.INFO,
        "api_auth",
        f"{len(tokens)} API tokens configured; reads {reads}",
        webhook_port=settings.webhook_port,
    )


def install_openapi(app: FastAPI, settings: Settings) -> None:
    """The served document says what this configuration does: while read endpoints are
    open, their bearer token is optional (an empty security requirement)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                routes=app.routes,
            )
            for item in schema.get("paths", {}).values():
                operation = item.get("get")
                if operation and operation.get("security") and reads_optional(settings):
                    operation["security"] = [{}, *operation["security"]]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    def document(ctx: Annotated[WebContext, Depends(require_read)]) -> JSONResponse:
        """This API's OpenAPI document, to readers only (off-loopback: a read token)."""
        return JSONResponse(app.openapi())

    app.add_api_route("/openapi.json", document, methods=["GET"], include_in_schema=False)
